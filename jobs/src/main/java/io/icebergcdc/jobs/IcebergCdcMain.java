package io.icebergcdc.jobs;

import io.icebergcdc.cdc.MalformedChangeException;
import io.icebergcdc.commit.internal.CommitException;
import io.icebergcdc.dedup.AmbiguousChangeException;
import io.icebergcdc.jobs.capture.CaptureJob;
import io.icebergcdc.jobs.capture.CapturePipeline;
import io.icebergcdc.jobs.capture.DatabaseSource;
import io.icebergcdc.jobs.demo.ChangelogGenerator;
import io.icebergcdc.jobs.kafka.KafkaJob;
import io.icebergcdc.jobs.kafka.KafkaPipeline;
import io.icebergcdc.sink.SinkOptions;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.ReadableConfig;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.NoSuchTableException;

/**
 * The job jar's entry point: {@code apply}, {@code inspect} and {@code demo} (the default). Errors
 * in arguments or input print one line and end with a non-zero status.
 */
public final class IcebergCdcMain {

  private static final String USAGE =
      String.join(
          "\n",
          "usage:",
          "  apply --source file --path <changes.jsonl> --warehouse <dir> --table <db.table>",
          "        --primary-key <col,...> [--partition-by <spec>] [--format-version 2|3]",
          "        [--parallelism N] [--checkpoint-interval <duration>] [--sequence-column <col>]",
          "        [--dead-letter-path <dir>] [--distribution primary_key|partition]",
          "        [--tombstone-ttl <duration>] [--on-ambiguous-change fail|dead_letter]",
          "        [--delete-mode position|equality] [--bootstrap-index true|false]",
          "        [--compaction-deleted-ratio <0..1>] [--compaction-cache-size <size>]",
          "        [--index-max-keys N]",
          "        [--checkpoint-dir <dir>] [--state-backend hashmap|rocksdb]",
          "  apply --source postgres|mysql|mariadb --host <host> [--port N] --user <user>",
          "        [--password-env <VAR> | --password-file <file>] --database <db>",
          "        [--tables <regex,...>] [--table-template <ns.{schema}_{table}>]",
          "        [--slot <name>] [--publication <name>] [--server-id N] [--name <connector>]",
          "        --warehouse <dir> [--restore-from <checkpoint>|latest] [--format-version 2|3]",
          "        [--parallelism N] [--checkpoint-interval <duration>] [--dead-letter-path <dir>]",
          "        [--checkpoint-dir <dir>] [--state-backend hashmap|rocksdb] [sink options above]",
          "  apply --source kafka --bootstrap-servers <host:port,...>",
          "        --topics <topic,...> | --topic-pattern <regex> [--format <format>]",
          "        (formats: debezium-json, maxwell-json, upsert-json) [--group-id <id>]",
          "        [--starting-offsets earliest|latest|committed|timestamp:<ms>]",
          "        [--kafka-properties <key=value,...>] [--table-template <ns.{topic}>]",
          "        [--dead-letter-topic <topic>]",
          "        [--primary-key <col,...>] [--sequence-column <col>] --warehouse <dir>",
          "        [--restore-from <checkpoint>|latest] [other options of the capture above]",
          "  inspect --warehouse <dir> --table <db.table>",
          "  demo [--warehouse <dir>] [--changes N] [--keys N] [--parallelism N]");

  private static final Set<String> APPLY_OPTIONS =
      Set.of(
          "source",
          "path",
          "warehouse",
          "table",
          "primary-key",
          "partition-by",
          "format-version",
          "parallelism",
          "checkpoint-interval",
          "sequence-column",
          "dead-letter-path",
          "distribution",
          "tombstone-ttl",
          "on-ambiguous-change",
          "delete-mode",
          "bootstrap-index",
          "compaction-deleted-ratio",
          "compaction-cache-size",
          "index-max-keys",
          "checkpoint-dir",
          "state-backend",
          "host",
          "port",
          "user",
          "password-env",
          "password-file",
          "database",
          "tables",
          "table-template",
          "slot",
          "publication",
          "server-id",
          "name",
          "restore-from",
          "bootstrap-servers",
          "topics",
          "topic-pattern",
          "format",
          "group-id",
          "starting-offsets",
          "kafka-properties",
          "dead-letter-topic");

  /**
   * How often a capture job restarts from its last checkpoint after a failure (a lost database
   * connection, say) before it gives up and reports the error.
   */
  private static final int CAPTURE_RESTART_ATTEMPTS = 3;

  private IcebergCdcMain() {}

  public static void main(String[] args) {
    int status = run(args, System.out, System.err);
    if (status != 0) {
      System.exit(status);
    }
  }

  /** Runs a command; returns the process exit status. */
  public static int run(String[] args, PrintStream out, PrintStream err) {
    // The demo is the default command, also when only its options are given.
    boolean implicitDemo =
        args.length == 0 || (args[0].startsWith("--") && !args[0].equals("--help"));
    String command = implicitDemo ? "demo" : args[0];
    try {
      switch (command) {
        case "apply":
          return apply(Arguments.parse("apply", args, 1, APPLY_OPTIONS), out);
        case "inspect":
          return inspect(Arguments.parse("inspect", args, 1, Set.of("warehouse", "table")), out);
        case "demo":
          return demo(
              Arguments.parse(
                  "demo",
                  args,
                  implicitDemo ? 0 : 1,
                  Set.of("warehouse", "changes", "keys", "parallelism")),
              out);
        case "help":
        case "--help":
        case "-h":
          out.println(USAGE);
          return 0;
        default:
          err.println("error: unknown command '" + command + "'\n" + USAGE);
          return 2;
      }
    } catch (Arguments.UsageException e) {
      err.println("error: " + e.getMessage());
      return 2;
    } catch (Exception e) {
      err.println("error: " + rootMessage(e));
      return 1;
    }
  }

  private static int apply(Arguments args, PrintStream out) throws Exception {
    String source = args.required("source");
    if (source.equals("kafka")) {
      KafkaJob job = kafkaJob(args);
      args.rejectUnused("apply --source kafka");
      out.println("applying Kafka topics of " + job.bootstrapServers() + " to " + job.warehouse());
      new KafkaPipeline(job).run();
      return 0;
    }
    if (!source.equals("file")) {
      DatabaseSource.Kind kind;
      try {
        kind = DatabaseSource.Kind.of(source);
      } catch (IllegalArgumentException e) {
        throw new Arguments.UsageException(
            "apply: --source "
                + source
                + " is not supported; use file, postgres, mysql, mariadb or kafka");
      }
      CaptureJob job = captureJob(kind, args);
      args.rejectUnused("apply --source " + source);
      out.println("capturing " + job.source().origin() + " into " + job.warehouse());
      new CapturePipeline(job).run();
      return 0;
    }
    ApplyJob job = applyJob(args);
    args.rejectUnused("apply --source file");
    if (!Files.isRegularFile(Paths.get(job.changesFile()))) {
      throw new Arguments.UsageException("apply: --path " + job.changesFile() + " is no file");
    }
    new ApplyPipeline(job, null).run();
    out.println("applied " + job.changesFile() + " to " + job.table());
    return 0;
  }

  static ApplyJob applyJob(Arguments args) {
    return applyJob(args, true);
  }

  /**
   * The options common to every source; {@code fileSource} says whether the file source's own
   * options (path, table, primary key) are required.
   */
  static ApplyJob applyJob(Arguments args, boolean fileSource) {
    Configuration sinkOptions = new Configuration();
    putEnumIfGiven(args, sinkOptions, "distribution", "sink.distribution");
    putIfGiven(args, sinkOptions, "tombstone-ttl", "dedup.tombstone-ttl");
    putEnumIfGiven(args, sinkOptions, "on-ambiguous-change", "dedup.on-ambiguous-change");
    putEnumIfGiven(args, sinkOptions, "delete-mode", "sink.delete-mode");
    putIfGiven(args, sinkOptions, "bootstrap-index", "sink.bootstrap-index");
    putIfGiven(args, sinkOptions, "compaction-deleted-ratio", "sink.compaction.deleted-ratio");
    putIfGiven(args, sinkOptions, "compaction-cache-size", "sink.compaction.cache-size");
    putIfGiven(args, sinkOptions, "index-max-keys", "dedup.index.max-keys");
    try {
      // Before the job touches a table: a bad value is an argument error.
      SinkOptions.validate(sinkOptions);
    } catch (IllegalArgumentException e) {
      throw new Arguments.UsageException("apply: " + rootMessage(e));
    }
    // Submitted to a cluster, the job takes the cluster's state backend and checkpoint directory
    // unless told otherwise; run embedded, it has defaults of its own.
    Optional<ReadableConfig> cluster = ApplyPipeline.clusterConfiguration();
    String stateBackend = args.optional("state-backend", cluster.isPresent() ? null : "hashmap");
    if (stateBackend != null
        && !(stateBackend = stateBackend.toLowerCase(Locale.ROOT)).equals("hashmap")
        && !stateBackend.equals("rocksdb")) {
      throw new Arguments.UsageException(
          "apply: --state-backend must be hashmap or rocksdb, not '" + stateBackend + "'");
    }
    int formatVersion = args.intValue("format-version", 2);
    int parallelism = args.intValue("parallelism", 2);
    if (parallelism < 1) {
      throw new Arguments.UsageException("apply: --parallelism must be at least 1");
    }
    Duration interval = args.duration("checkpoint-interval", Duration.ofSeconds(10));
    return new ApplyJob(
        fileSource ? Paths.get(args.required("path")).toAbsolutePath().toString() : null,
        warehouse(args.required("warehouse")),
        Map.of(),
        fileSource ? table(args.required("table")) : null,
        fileSource ? args.list("primary-key") : List.of(),
        fileSource ? args.optional("partition-by", null) : null,
        formatVersion,
        parallelism,
        interval,
        fileSource ? args.optional("sequence-column", null) : null,
        args.optional("dead-letter-path", null),
        0,
        sinkOptions,
        checkpointDirectory(args, cluster),
        stateBackend);
  }

  /**
   * The job's checkpoint directory: {@code --checkpoint-dir}; else, on a cluster, the cluster's
   * {@code execution.checkpointing.dir}; else a temporary directory.
   */
  private static String checkpointDirectory(Arguments args, Optional<ReadableConfig> cluster) {
    String given = args.optional("checkpoint-dir", null);
    if (given != null) {
      return given;
    }
    if ("latest".equals(args.peek("restore-from")) && cluster.isPresent()) {
      // The cluster's directory is shared by all its jobs: the newest checkpoint in it may be
      // another job's.
      throw new Arguments.UsageException(
          "apply: --restore-from latest on a cluster needs the job's own --checkpoint-dir");
    }
    if (cluster.isEmpty()) {
      return defaultCheckpointDirectory();
    }
    String clusters = cluster.get().get(CheckpointingOptions.CHECKPOINTS_DIRECTORY);
    if (clusters == null) {
      throw new Arguments.UsageException(
          "apply: the cluster has no execution.checkpointing.dir; give --checkpoint-dir");
    }
    return localPathIfFileUri(clusters);
  }

  static CaptureJob captureJob(DatabaseSource.Kind kind, Arguments args) {
    ApplyJob common = applyJob(args, false);
    boolean postgres = kind == DatabaseSource.Kind.POSTGRES;
    String name = args.optional("name", kind.name().toLowerCase(Locale.ROOT));
    DatabaseSource source =
        new DatabaseSource(
            kind,
            args.required("host"),
            args.intValue("port", kind.defaultPort()),
            args.required("user"),
            password(args),
            args.required("database"),
            args.optional("tables", null) == null ? List.of() : args.list("tables"),
            postgres ? args.optional("slot", "iceberg_cdc_" + name) : null,
            postgres ? args.optional("publication", "iceberg_cdc_" + name) : null,
            postgres ? 0 : args.intValue("server-id", 5400),
            name);
    String restoreFrom = restoreFrom(args, common.checkpointDirectory());
    return new CaptureJob(
        source,
        common.warehouse(),
        args.optional("table-template", "{schema}.{table}"),
        common.formatVersion(),
        common.parallelism(),
        common.checkpointInterval(),
        common.checkpointDirectory(),
        common.stateBackend(),
        common.sinkOptions(),
        common.deadLetterPath(),
        restoreFrom,
        CAPTURE_RESTART_ATTEMPTS);
  }

  /** The checkpoint to resume from: the option's, or the newest in the directory for latest. */
  private static String restoreFrom(Arguments args, String checkpointDirectory) {
    String restoreFrom = args.optional("restore-from", null);
    if ("latest".equals(restoreFrom)) {
      restoreFrom =
          Checkpoints.latest(checkpointDirectory)
              .orElseThrow(
                  () ->
                      new Arguments.UsageException(
                          "apply: --restore-from latest, but "
                              + checkpointDirectory
                              + " holds no completed checkpoint"))
              .toString();
    }
    return restoreFrom;
  }

  static KafkaJob kafkaJob(Arguments args) {
    ApplyJob common = applyJob(args, false);
    String format = args.optional("format", KafkaJob.DEBEZIUM_JSON);
    String topics = args.optional("topics", null);
    String pattern = args.optional("topic-pattern", null);
    if ((topics == null) == (pattern == null)) {
      throw new Arguments.UsageException("apply: give --topics or --topic-pattern, one of them");
    }
    String startingOffsets = args.optional("starting-offsets", "earliest");
    try {
      KafkaPipeline.startingOffsets(startingOffsets);
    } catch (IllegalArgumentException e) {
      throw new Arguments.UsageException("apply: --starting-offsets: " + e.getMessage());
    }
    Map<String, String> kafkaProperties = new java.util.LinkedHashMap<>();
    if (args.optional("kafka-properties", null) != null) {
      for (String pair : args.list("kafka-properties")) {
        int eq = pair.indexOf('=');
        if (eq <= 0) {
          throw new Arguments.UsageException(
              "apply: --kafka-properties takes key=value pairs, not '" + pair + "'");
        }
        kafkaProperties.put(pair.substring(0, eq).trim(), pair.substring(eq + 1).trim());
      }
    }
    String bootstrapServers = args.required("bootstrap-servers");
    try {
      return kafkaJob(
          args,
          common,
          bootstrapServers,
          topics,
          pattern,
          startingOffsets,
          format,
          kafkaProperties);
    } catch (IllegalArgumentException e) {
      throw new Arguments.UsageException("apply: " + e.getMessage());
    }
  }

  private static KafkaJob kafkaJob(
      Arguments args,
      ApplyJob common,
      String bootstrapServers,
      String topics,
      String pattern,
      String startingOffsets,
      String format,
      Map<String, String> kafkaProperties) {
    return new KafkaJob(
        bootstrapServers,
        topics == null ? List.of() : args.list("topics"),
        pattern,
        args.optional("group-id", "iceberg-cdc"),
        startingOffsets,
        format,
        kafkaProperties,
        args.optional("table-template", "cdc.{topic}"),
        args.optional("primary-key", null) == null ? List.of() : args.list("primary-key"),
        args.optional("sequence-column", null),
        common.warehouse(),
        common.formatVersion(),
        common.parallelism(),
        common.checkpointInterval(),
        common.checkpointDirectory(),
        common.stateBackend(),
        common.sinkOptions(),
        common.deadLetterPath(),
        args.optional("dead-letter-topic", null),
        restoreFrom(args, common.checkpointDirectory()),
        CAPTURE_RESTART_ATTEMPTS);
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
      } catch (java.io.IOException e) {
        throw new Arguments.UsageException(
            "apply: cannot read --password-file " + file + ": " + e.getMessage());
      }
    }
    return null;
  }

  private static void putIfGiven(Arguments args, Configuration config, String arg, String key) {
    String value = args.optional(arg, null);
    if (value != null) {
      config.setString(key, value);
    }
  }

  private static void putEnumIfGiven(Arguments args, Configuration config, String arg, String key) {
    String value = args.optional(arg, null);
    if (value != null) {
      config.setString(key, value.toUpperCase(Locale.ROOT));
    }
  }

  private static int inspect(Arguments args, PrintStream out) {
    Catalog catalog =
        ApplyPipeline.catalogLoader(warehouse(args.required("warehouse")), Map.of()).loadCatalog();
    TableIdentifier identifier = table(args.required("table"));
    Table table;
    try {
      table = catalog.loadTable(identifier);
    } catch (NoSuchTableException e) {
      throw new Arguments.UsageException(
          "inspect: there is no table " + identifier + " in " + args.required("warehouse"));
    }
    new TableInspector(table).print(out);
    return 0;
  }

  private static int demo(Arguments args, PrintStream out) throws Exception {
    Path warehouse = Paths.get(args.optional("warehouse", "warehouse")).toAbsolutePath();
    int changes = args.intValue("changes", 20_000);
    int keys = args.intValue("keys", 2_000);
    int parallelism = args.intValue("parallelism", 2);
    TableIdentifier identifier = TableIdentifier.of("demo", "items");

    Catalog catalog = ApplyPipeline.catalogLoader(warehouse.toString(), Map.of()).loadCatalog();
    if (catalog.tableExists(identifier)) {
      catalog.dropTable(identifier, true);
    }
    Files.createDirectories(warehouse);
    ChangelogGenerator.Changelog changelog =
        new ChangelogGenerator(changes, keys, 0.10, 0.02, 42L).generate();
    Path file = warehouse.resolve("demo-changes.jsonl");
    changelog.writeTo(file);
    out.println("Generated " + file + ": " + changelog.describe());

    ApplyJob job =
        new ApplyJob(
            file.toString(),
            warehouse.toString(),
            Map.of(),
            identifier,
            List.of("id"),
            null,
            2,
            parallelism,
            Duration.ofSeconds(1),
            null,
            null,
            0,
            new Configuration(),
            defaultCheckpointDirectory(),
            "hashmap");
    long start = System.nanoTime();
    new ApplyPipeline(job, null).run();
    out.printf(
        "Applied it to %s with parallelism %d in %.1f s%n%n",
        identifier, parallelism, (System.nanoTime() - start) / 1e9);

    Table table = catalog.loadTable(identifier);
    new TableInspector(table).print(out);
    List<String> differences = changelog.model().differences(table, 10);
    out.println();
    if (differences.isEmpty()) {
      out.println(
          "Check: PASSED, the table equals the reference model row for row ("
              + changelog.model().size()
              + " rows)");
      return 0;
    }
    out.println("Check: FAILED, the table differs from the reference model:");
    differences.forEach(d -> out.println("  " + d));
    return 1;
  }

  /** {@code file:///x} as {@code /x}; other directories as they are. */
  private static String localPathIfFileUri(String directory) {
    return directory.startsWith("file:")
        ? Paths.get(java.net.URI.create(directory)).toString()
        : directory;
  }

  private static String defaultCheckpointDirectory() {
    return Paths.get(System.getProperty("java.io.tmpdir"), "iceberg-cdc-checkpoints").toString();
  }

  private static String warehouse(String dir) {
    return Paths.get(dir).toAbsolutePath().toString();
  }

  private static TableIdentifier table(String name) {
    if (!name.matches("[\\w$]+(\\.[\\w$]+)+")) {
      throw new Arguments.UsageException(
          "--table must name a table as <database>.<table>, not '" + name + "'");
    }
    return TableIdentifier.parse(name);
  }

  /**
   * The message worth one line: that of the first exception in the cause chain that the applier or
   * an argument check raised, else that of the deepest cause.
   */
  static String rootMessage(Throwable e) {
    String deepest = e.toString();
    for (Throwable cause = e; cause != null; cause = cause.getCause()) {
      if (cause instanceof MalformedChangeException
          || cause instanceof AmbiguousChangeException
          || cause instanceof CommitException
          || cause instanceof IllegalArgumentException) {
        return cause.getMessage();
      }
      if (cause.getMessage() != null) {
        deepest = cause.getMessage();
      }
    }
    return deepest;
  }
}
