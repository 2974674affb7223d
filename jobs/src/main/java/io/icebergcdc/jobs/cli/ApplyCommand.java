package io.icebergcdc.jobs.cli;

import io.icebergcdc.dedup.AmbiguousChangePolicy;
import io.icebergcdc.dedup.DedupOptions;
import io.icebergcdc.jobs.definition.ChangelogFile;
import io.icebergcdc.jobs.definition.DatabaseSource;
import io.icebergcdc.jobs.definition.DeadLetterOutput;
import io.icebergcdc.jobs.definition.JobDefinition;
import io.icebergcdc.jobs.definition.JobDefinitionException;
import io.icebergcdc.jobs.definition.KafkaTopics;
import io.icebergcdc.jobs.definition.SourceDefinition;
import io.icebergcdc.jobs.definition.TableDefinition;
import io.icebergcdc.jobs.pipeline.JobRunner;
import io.icebergcdc.sink.CatalogDefinition;
import io.icebergcdc.sink.SinkOptions;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.flink.configuration.Configuration;

/**
 * {@code apply --source file|postgres|mysql|mariadb|kafka ...}: reads the flags into a {@link
 * JobDefinition}, checking every one before anything is created, and runs it.
 */
final class ApplyCommand {

  private ApplyCommand() {}

  static final List<String> SOURCES = List.of("file", "postgres", "mysql", "mariadb", "kafka");

  static final List<Flag> SOURCE =
      List.of(Flag.of("source", String.join("|", SOURCES), "Where the changes come from."));

  static final List<Flag> FILE =
      List.of(
          Flag.of("path", "<changes.jsonl>", "A file of Debezium JSON change events, one a line."),
          Flag.of(
              "table", "<db.table>", "The Iceberg table; created from the first event's schema."),
          Flag.of("primary-key", "<col,...>", "The key columns of the table."),
          Flag.of(
              "partition-by",
              "<spec>",
              "The partition spec of a table to create, such as 'bucket(16, id), days(ts)'; an"
                  + " existing table must have it."),
          Flag.of(
              "sequence-column",
              "<col>",
              "A column that orders the changes of a key, instead of the events' source"
                  + " positions."));

  static final List<Flag> DATABASE =
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
          Flag.of("server-id", "<N>", "The MySQL/MariaDB replication client's server id.", 5400),
          Flag.of(
              "name",
              "<connector>",
              "The connector's name, which prefixes its topics. Default: the source."));

  static final List<Flag> KAFKA =
      List.of(
          Flag.of("bootstrap-servers", "<host:port,...>", "The Kafka cluster."),
          Flag.of("topics", "<topic,...>", "The topics to read."),
          Flag.of(
              "topic-pattern",
              "<regex>",
              "Or: the topics matching this, and those created while the job runs."),
          Flag.of(
              "format",
              String.join("|", KafkaTopics.FORMATS),
              "How the records are written.",
              KafkaTopics.DEBEZIUM_JSON),
          Flag.of(
              "group-id", "<id>", "The consumer group offsets are committed to.", "iceberg-cdc"),
          Flag.of(
              "starting-offsets",
              "earliest|latest|committed|timestamp:<ms>",
              "Where a job without state starts.",
              "earliest"),
          Flag.of(
              "kafka-properties",
              "<key=value,...>",
              "Further consumer properties, such as security settings; not for secrets."),
          Flag.of(
              "kafka-properties-file",
              "<file>",
              "A Java properties file of further consumer properties, for secrets such as"
                  + " sasl.jaas.config or ssl.truststore.password; read when the job starts, never"
                  + " printed."),
          Flag.of(
              "table-template",
              "<ns.name>",
              "The Iceberg table of each topic, with {topic} and {table}.",
              "cdc.{topic}"),
          Flag.of(
              "primary-key",
              "<col,...>",
              "The key of tables to create. Default: the fields of the records' keys."),
          Flag.of("sequence-column", "<col>", "A column that orders the changes of a key."),
          Flag.of(
              "dead-letter-topic",
              "<topic>",
              "A topic of the same cluster for records that cannot be applied."));

  static final List<Flag> TABLE =
      List.of(
          Flag.of(
              "format-version",
              "2|3",
              "The format version of tables to create; an existing table must have it. Default:"
                  + " 2."));

  /** Every flag of {@code apply}, each once. */
  static List<Flag> flags() {
    Map<String, Flag> all = new LinkedHashMap<>();
    for (List<Flag> group :
        List.of(
            SOURCE,
            FILE,
            DATABASE,
            KAFKA,
            CatalogFlags.FLAGS,
            TABLE,
            JobFlags.SINK,
            JobFlags.MAINTENANCE,
            JobFlags.RUNTIME)) {
      group.forEach(f -> all.putIfAbsent(f.name(), f));
    }
    all.put("help", Flag.of("help", "", "Show this help."));
    return new ArrayList<>(all.values());
  }

  static String help() {
    StringBuilder out =
        new StringBuilder(
            "usage: apply --source file|postgres|mysql|mariadb|kafka [flags]\n"
                + "Applies a changelog to Iceberg tables, exactly once, one commit per"
                + " checkpoint.\n");
    Flag.describe(out, "Source", SOURCE);
    Flag.describe(out, "--source file (one table)", FILE);
    Flag.describe(
        out, "--source postgres|mysql|mariadb (Debezium, every captured table)", DATABASE);
    Flag.describe(out, "--source kafka (a table per topic)", KAFKA);
    Flag.describe(out, "Catalog (every source)", CatalogFlags.FLAGS);
    Flag.describe(out, "Tables", TABLE);
    Flag.describe(out, "Sink and dedup", JobFlags.SINK);
    Flag.describe(out, "Maintenance (after the commits)", JobFlags.MAINTENANCE);
    Flag.describe(out, "Runtime", JobFlags.RUNTIME);
    return out.toString();
  }

  static int run(Arguments args, PrintStream out) throws Exception {
    JobDefinition job = definition(args);
    out.println(
        "applying "
            + job.source().origin()
            + " to "
            + job.catalog().describe()
            + (job.source() instanceof ChangelogFile
                ? " table " + job.tables().nameTemplate()
                : ""));
    JobRunner.Outcome outcome;
    try {
      outcome = new JobRunner(job).run();
    } catch (JobDefinitionException e) {
      throw new Arguments.UsageException("apply: " + e.getMessage());
    }
    if (outcome.detached()) {
      out.println(
          "submitted "
              + job.source().origin()
              + " as Flink job "
              + outcome.job()
              + ", detached: it runs on the cluster, which reports how it ends");
      return 0;
    }
    long deadLettered = outcome.deadLettered();
    out.println("applied " + job.source().origin());
    if (deadLettered > 0) {
      out.println(
          deadLettered
              + " record"
              + (deadLettered == 1 ? "" : "s")
              + " could not be applied and went to the dead-letter output "
              + job.deadLetters().describe());
    }
    return 0;
  }

  /** The job of the flags; every flag is checked before the job touches a table. */
  static JobDefinition definition(Arguments args) {
    String source = args.choice("source", null, SOURCES);
    if (source == null) {
      throw new Arguments.UsageException(
          "apply: --source is required: " + String.join(", ", SOURCES));
    }
    SourceDefinition definition;
    TableDefinition tables;
    String deadLetterTopic = null;
    switch (source) {
      case "file" -> {
        definition =
            new ChangelogFile(
                Paths.get(args.required("path")).toAbsolutePath().toString(),
                args.optional("sequence-column", null));
        tables =
            new TableDefinition(
                tableName(args.required("table")),
                args.list("primary-key"),
                args.optional("partition-by", null),
                formatVersion(args));
      }
      case "kafka" -> {
        definition = kafkaTopics(args);
        tables =
            new TableDefinition(
                args.optional("table-template", "cdc.{topic}"),
                args.optionalList("primary-key"),
                null,
                formatVersion(args));
        deadLetterTopic = args.optional("dead-letter-topic", null);
        KafkaTopics kafka = (KafkaTopics) definition;
        if (deadLetterTopic != null
            && kafka.topicPattern() != null
            && deadLetterTopic.matches(kafka.topicPattern())) {
          throw new Arguments.UsageException(
              "apply: --dead-letter-topic "
                  + deadLetterTopic
                  + " matches --topic-pattern "
                  + kafka.topicPattern()
                  + ": the job would read its own dead letters");
        }
        if (deadLetterTopic != null && kafka.topics().contains(deadLetterTopic)) {
          throw new Arguments.UsageException(
              "apply: --dead-letter-topic "
                  + deadLetterTopic
                  + " is one of --topics: the job would read its own dead letters");
        }
      }
      default -> {
        definition = database(DatabaseSource.Kind.of(source), args);
        tables =
            new TableDefinition(
                args.optional("table-template", "{schema}.{table}"),
                List.of(),
                null,
                formatVersion(args));
      }
    }
    CatalogDefinition catalog = CatalogFlags.definition(args, null);
    Configuration sinkOptions = JobFlags.sinkOptions(args);
    if (sinkOptions.get(SinkOptions.COMMIT_ATOMIC_ACROSS_TABLES) && !isRest(catalog)) {
      throw new Arguments.UsageException(
          "apply: --commit-atomic-across-tables needs a REST catalog (--catalog-type rest), whose"
              + " multi-table commit it uses; the catalog is "
              + catalog.describe());
    }
    DeadLetterOutput deadLetters =
        new DeadLetterOutput(args.optional("dead-letter-path", null), deadLetterTopic);
    if (sinkOptions.get(DedupOptions.ON_AMBIGUOUS_CHANGE) == AmbiguousChangePolicy.DEAD_LETTER
        && deadLetters.path() == null
        && deadLetters.topic() == null) {
      // The changes it sets aside would go nowhere.
      throw new Arguments.UsageException(
          "apply: --on-ambiguous-change dead_letter needs a dead-letter output: give"
              + " --dead-letter-path"
              + ("kafka".equals(source) ? " or --dead-letter-topic" : ""));
    }
    var runtime = JobFlags.runtime(args);
    args.rejectUnused("apply --source " + source);
    if (definition instanceof ChangelogFile file) {
      checkFile(args, file.path());
    }
    try {
      return new JobDefinition(definition, catalog, tables, sinkOptions, deadLetters, runtime);
    } catch (IllegalArgumentException e) {
      throw new Arguments.UsageException("apply: " + e.getMessage());
    }
  }

  private static boolean isRest(CatalogDefinition catalog) {
    return catalog.impl() == null
        ? catalog.type() == CatalogDefinition.Type.REST
        : catalog.impl().equals(org.apache.iceberg.rest.RESTCatalog.class.getName());
  }

  private static Integer formatVersion(Arguments args) {
    if (!args.has("format-version")) {
      args.optional("format-version", null);
      return null;
    }
    String value = args.choice("format-version", null, List.of("2", "3"));
    return Integer.valueOf(value);
  }

  private static void checkFile(Arguments args, String path) {
    java.nio.file.Path file = Paths.get(path);
    if (!Files.isRegularFile(file)) {
      throw new Arguments.UsageException(
          args.command()
              + ": --path "
              + path
              + (Files.isDirectory(file) ? " is a directory" : " is no file"));
    }
    try {
      if (Files.size(file) == 0) {
        throw new Arguments.UsageException(
            args.command() + ": --path " + path + " is empty: there are no changes to apply");
      }
    } catch (IOException e) {
      throw new Arguments.UsageException(
          args.command() + ": cannot read --path " + path + ": " + e.getMessage());
    }
  }

  static String tableName(String name) {
    if (!name.matches("[\\w$]+(\\.[\\w$]+)+")) {
      throw new Arguments.UsageException(
          "--table must name a table as <database>.<table>, not '" + name + "'");
    }
    return name;
  }

  private static DatabaseSource database(DatabaseSource.Kind kind, Arguments args) {
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
   * Whether a Kafka client property holds a secret: Kafka's password-type settings (passwords, the
   * JAAS configuration, client secrets, private keys).
   */
  static boolean isKafkaSecret(String key) {
    String lower = key.toLowerCase(Locale.ROOT);
    return lower.contains("password")
        || lower.contains("passphrase")
        || lower.contains("private")
        || lower.endsWith("jaas.config")
        || lower.contains("secret")
        || lower.endsWith("keystore.key");
  }

  private static KafkaTopics kafkaTopics(Arguments args) {
    String format = args.choice("format", KafkaTopics.DEBEZIUM_JSON, KafkaTopics.FORMATS);
    String topics = args.optional("topics", null);
    String pattern = args.optional("topic-pattern", null);
    if ((topics == null) == (pattern == null)) {
      throw new Arguments.UsageException("apply: give --topics or --topic-pattern, one of them");
    }
    if (pattern != null) {
      try {
        java.util.regex.Pattern.compile(pattern);
      } catch (java.util.regex.PatternSyntaxException e) {
        throw new Arguments.UsageException(
            "apply: --topic-pattern is no regular expression: " + e.getDescription());
      }
    }
    if (topics != null) {
      List<String> listed = args.list("topics");
      if (new java.util.HashSet<>(listed).size() < listed.size()) {
        throw args.invalid("topics", topics, "topics named once each");
      }
    }
    String startingOffsets = args.optional("starting-offsets", "earliest");
    if (startingOffsets.startsWith("timestamp:") && startingOffsets.length() > 10) {
      try {
        Long.parseLong(startingOffsets.substring(10));
      } catch (NumberFormatException e) {
        throw new Arguments.UsageException(
            "apply: --starting-offsets: "
                + startingOffsets
                + " is no time in epoch milliseconds (a whole number up to "
                + Long.MAX_VALUE
                + ")");
      }
    }
    if (!startingOffsets.matches("earliest|latest|committed|timestamp:\\d+")) {
      throw new Arguments.UsageException(
          "apply: --starting-offsets: starting offsets must be earliest, latest, committed or"
              + " timestamp:<epoch millis>, not '"
              + startingOffsets
              + "'");
    }
    Map<String, String> kafkaProperties = new LinkedHashMap<>();
    for (String pair : args.optionalList("kafka-properties")) {
      int eq = pair.indexOf('=');
      if (eq <= 0) {
        throw new Arguments.UsageException(
            "apply: --kafka-properties takes comma-separated key=value pairs, not '"
                + pair
                + "' (a value with a comma goes in --kafka-properties-file)");
      }
      String key = pair.substring(0, eq).trim();
      if (isKafkaSecret(key)) {
        // The command line shows in the process list, the shell's history and, in application
        // mode, Flink's configuration.
        throw new Arguments.UsageException(
            "apply: --kafka-properties "
                + key
                + " is a secret; put it in the file of --kafka-properties-file instead of on the"
                + " command line");
      }
      kafkaProperties.put(key, pair.substring(eq + 1).trim());
    }
    String propertiesFile = args.optional("kafka-properties-file", null);
    if (propertiesFile != null) {
      try {
        kafkaProperties.putAll(CatalogDefinition.readPropertiesFile(Paths.get(propertiesFile)));
      } catch (java.io.IOException e) {
        throw new Arguments.UsageException(
            "apply: cannot read --kafka-properties-file " + propertiesFile + ": " + e.getMessage());
      }
    }
    String bootstrapServers = args.required("bootstrap-servers");
    String groupId = args.optional("group-id", "iceberg-cdc");
    Map<String, String> flags = Map.of("bootstrap.servers", bootstrapServers, "group.id", groupId);
    for (String flagged : List.of("bootstrap.servers", "group.id")) {
      String given = kafkaProperties.get(flagged);
      if (given != null && !given.equals(flags.get(flagged))) {
        throw new Arguments.UsageException(
            "apply: Kafka property "
                + flagged
                + " has a flag of its own: give --"
                + flagged.replace('.', '-')
                + " instead");
      }
    }
    try {
      return new KafkaTopics(
          bootstrapServers,
          topics == null ? List.of() : args.list("topics"),
          pattern,
          groupId,
          startingOffsets,
          format,
          kafkaProperties,
          args.optional("sequence-column", null));
    } catch (IllegalArgumentException e) {
      throw new Arguments.UsageException("apply: " + e.getMessage());
    }
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
