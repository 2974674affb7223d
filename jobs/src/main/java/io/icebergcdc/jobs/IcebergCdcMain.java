package io.icebergcdc.jobs;

import io.icebergcdc.cdc.MalformedChangeException;
import io.icebergcdc.commit.internal.CommitException;
import io.icebergcdc.dedup.AmbiguousChangeException;
import io.icebergcdc.jobs.demo.ChangelogGenerator;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.apache.flink.configuration.Configuration;
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
          "        [--checkpoint-dir <dir>] [--state-backend hashmap|rocksdb]",
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
          "checkpoint-dir",
          "state-backend");

  private IcebergCdcMain() {}

  public static void main(String[] args) {
    int status = run(args, System.out, System.err);
    if (status != 0) {
      System.exit(status);
    }
  }

  /** Runs a command; returns the process exit status. */
  public static int run(String[] args, PrintStream out, PrintStream err) {
    String command = args.length == 0 ? "demo" : args[0];
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
                  args.length == 0 ? 0 : 1,
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
    if (!source.equals("file")) {
      throw new Arguments.UsageException(
          "apply: --source " + source + " is not supported; this build reads --source file");
    }
    ApplyJob job = applyJob(args);
    if (!Files.isRegularFile(Paths.get(job.changesFile()))) {
      throw new Arguments.UsageException("apply: --path " + job.changesFile() + " is no file");
    }
    new ApplyPipeline(job, null).run();
    out.println("applied " + job.changesFile() + " to " + job.table());
    return 0;
  }

  static ApplyJob applyJob(Arguments args) {
    Configuration sinkOptions = new Configuration();
    putEnumIfGiven(args, sinkOptions, "distribution", "sink.distribution");
    putIfGiven(args, sinkOptions, "tombstone-ttl", "dedup.tombstone-ttl");
    putEnumIfGiven(args, sinkOptions, "on-ambiguous-change", "dedup.on-ambiguous-change");
    putEnumIfGiven(args, sinkOptions, "delete-mode", "sink.delete-mode");
    putIfGiven(args, sinkOptions, "bootstrap-index", "sink.bootstrap-index");
    String stateBackend = args.optional("state-backend", "hashmap").toLowerCase(Locale.ROOT);
    if (!stateBackend.equals("hashmap") && !stateBackend.equals("rocksdb")) {
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
        Paths.get(args.required("path")).toAbsolutePath().toString(),
        warehouse(args.required("warehouse")),
        Map.of(),
        table(args.required("table")),
        args.list("primary-key"),
        args.optional("partition-by", null),
        formatVersion,
        parallelism,
        interval,
        args.optional("sequence-column", null),
        args.optional("dead-letter-path", null),
        0,
        sinkOptions,
        args.optional("checkpoint-dir", defaultCheckpointDirectory()),
        stateBackend);
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
