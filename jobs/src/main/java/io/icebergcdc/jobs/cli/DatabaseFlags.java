package io.icebergcdc.jobs.cli;

import io.icebergcdc.jobs.definition.DatabaseSource;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.List;
import java.util.Locale;

/**
 * The flags of {@code apply --source postgres|mysql|mariadb}: the database, its tables, the slot.
 */
final class DatabaseFlags {

  private DatabaseFlags() {}

  static final List<Flag> FLAGS =
      List.of(
          Flag.of("host", "<host>", "The database server."),
          Flag.of("port", "<N>", "Its port. Default: 5432 for postgres, 3306 otherwise."),
          Flag.of("user", "<user>", "The replication user."),
          Flag.of("password-env", "<VAR>", "An environment variable holding the password."),
          Flag.of("password-file", "<file>", "A file whose first line is the password."),
          Flag.of("database", "<db>", "The database to capture."),
          Flag.of(
              "tables",
              "<regex,...>",
              "Tables to capture, as schema.table (postgres) or database.table patterns; a comma"
                  + " within a pattern is written \\, as in Debezium's lists. Default: every table"
                  + " of the public schema or of the database."),
          Flag.of(
              "table-template",
              "<ns.name>",
              "The Iceberg table of each captured table, with {schema}, {table} and {database}.",
              "{schema}.{table}"),
          Flag.of("slot", "<name>", "PostgreSQL's replication slot. Default: iceberg_cdc_<name>."),
          Flag.of(
              "publication",
              "<name>",
              "PostgreSQL's publication, created if missing. Default: iceberg_cdc_<name>."),
          Flag.of(
              "snapshot-chunk-rows",
              "<N>",
              "The rows of a chunk of the initial snapshot, which the job's readers read in"
                  + " parallel beside the log and resume chunk by chunk after a failure; 0 for"
                  + " Debezium's own snapshot (one reader, started over after a failure).",
              DatabaseSource.DEFAULT_SNAPSHOT_CHUNK_ROWS),
          Flag.of(
              "table-discovery-interval",
              "<duration>",
              "How often a job with a chunked snapshot looks for new tables that --tables match,"
                  + " which it takes in flight (or is built again with; README, New tables); 0 for"
                  + " never.",
              "30s"),
          Flag.of(
              "read-again",
              "<schema.table,...>",
              "With --restore-from and the chunked snapshot: tables of the job whose state is"
                  + " dropped and which are read whole again from the source, the others going on"
                  + " from their state (a table dropped from the catalog; README, Tables)."),
          Flag.of("server-id", "<N>", "The MySQL/MariaDB replication client's server id.", 5400),
          Flag.of(
              "name",
              "<connector>",
              "The connector's name, which prefixes its topics. Default: the source."));

  /** The source of {@code apply --source postgres|mysql|mariadb}, its flags checked. */
  static DatabaseSource source(DatabaseSource.Kind kind, Arguments args) {
    boolean postgres = kind == DatabaseSource.Kind.POSTGRES;
    String name = args.optional("name", kind.name().toLowerCase(Locale.ROOT));
    if (!name.matches("[a-zA-Z0-9_.\\-]+")) {
      // Debezium's rule for a topic prefix, which the name is; refused by the connector only once
      // the job runs, after the tables (and a slot and publication) were made.
      throw args.invalid("name", name, "letters, digits, _, . and - (the changes' topic prefix)");
    }
    String slot = postgres ? args.optional("slot", "iceberg_cdc_" + name) : null;
    if (slot != null && !slot.matches("[a-z0-9_]{1,63}")) {
      // PostgreSQL's rule for slot names; refused here, before a table or publication is made.
      throw args.has("slot")
          ? args.invalid(
              "slot",
              slot,
              "a replication slot name of lowercase letters, digits and _ (at most 63)")
          : args.invalid(
              "name",
              name,
              "lowercase letters, digits and _, as the default slot iceberg_cdc_<name> needs (or"
                  + " give --slot)");
    }
    try {
      return new DatabaseSource(
              kind,
              args.required("host"),
              args.intValue("port", kind.defaultPort(), 1),
              args.required("user"),
              password(args),
              args.required("database"),
              args.optionalPatterns("tables"),
              slot,
              postgres ? args.optional("publication", "iceberg_cdc_" + name) : null,
              postgres ? 0 : args.intValue("server-id", 5400, 1),
              name)
          .withSnapshotChunkRows(
              args.intValue("snapshot-chunk-rows", DatabaseSource.DEFAULT_SNAPSHOT_CHUNK_ROWS, 0))
          .withTableDiscoveryInterval(
              args.duration(
                  "table-discovery-interval", DatabaseSource.DEFAULT_TABLE_DISCOVERY_INTERVAL));
    } catch (java.util.regex.PatternSyntaxException e) {
      throw new Arguments.UsageException(
          "apply: --tables holds a pattern that is no regular expression: "
              + e.getPattern()
              + " (the patterns are separated by commas; a comma within one is written \\,)");
    }
  }

  /**
   * The tables of {@code --read-again}, checked against the source and the restore: each a table
   * the source captures, named as its patterns match it, in a restored job whose state its own
   * chunked snapshot wrote.
   */
  static List<String> readAgain(Arguments args, DatabaseSource source, String restoreFrom) {
    List<String> tables = args.optionalList("read-again");
    if (tables.isEmpty()) {
      return tables;
    }
    if (restoreFrom == null) {
      throw new Arguments.UsageException(
          "apply: --read-again drops the restored state of tables: give --restore-from");
    }
    if (io.icebergcdc.jobs.pipeline.RuntimeTranslator.runsInJobManager(
        io.icebergcdc.jobs.pipeline.RuntimeTranslator.clusterConfiguration().orElse(null))) {
      throw new Arguments.UsageException(
          "apply: --read-again runs the job twice, following the first to a savepoint, which a"
              + " program run inside the JobManager (application mode, a jar run through the web"
              + " UI or REST API) cannot: run it with flink run from a client, or java -jar");
    }
    if (source.snapshotChunkRows() == 0) {
      throw new Arguments.UsageException(
          "apply: --read-again needs the chunked snapshot, which reads a table beside the log;"
              + " --snapshot-chunk-rows is 0");
    }
    for (String table : tables) {
      if (!source.matches(table)) {
        throw args.invalid(
            "read-again",
            table,
            "tables the job captures, as "
                + (source.kind() == DatabaseSource.Kind.POSTGRES ? "schema" : "database")
                + ".table that --tables match ("
                + source.tablePatterns()
                + ")");
      }
    }
    return List.copyOf(new java.util.LinkedHashSet<>(tables));
  }

  /** The password from an environment variable or the first line of a file, never the command. */
  private static String password(Arguments args) {
    String variable = args.optional("password-env", null);
    String file = args.optional("password-file", null);
    if (variable != null && file != null) {
      throw new Arguments.UsageException("apply: give --password-env or --password-file, not both");
    }
    if (variable != null) {
      String value = System.getenv(variable);
      if (value == null) {
        throw new Arguments.UsageException(
            "apply: --password-env " + variable + ", but the environment has no " + variable);
      }
      return value;
    }
    if (file != null) {
      try {
        List<String> lines = Files.readAllLines(Paths.get(file));
        return lines.isEmpty() ? "" : lines.get(0);
      } catch (IOException e) {
        throw new Arguments.UsageException(
            "apply: cannot read --password-file " + file + ": " + e.getMessage());
      }
    }
    return null;
  }
}
