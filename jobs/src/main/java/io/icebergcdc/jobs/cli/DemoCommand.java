package io.icebergcdc.jobs.cli;

import io.icebergcdc.jobs.definition.ChangelogFile;
import io.icebergcdc.jobs.definition.DeadLetterOutput;
import io.icebergcdc.jobs.definition.JobDefinition;
import io.icebergcdc.jobs.definition.RuntimeDefinition;
import io.icebergcdc.jobs.definition.TableDefinition;
import io.icebergcdc.jobs.demo.ChangelogGenerator;
import io.icebergcdc.jobs.pipeline.JobRunner;
import io.icebergcdc.sink.CatalogDefinition;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.configuration.Configuration;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;

/**
 * {@code demo} (the default command): generates a changelog with disorder and duplicates, applies
 * it to {@code demo.items} and checks the table against a reference model of the changelog.
 */
final class DemoCommand {

  private DemoCommand() {}

  private static final TableIdentifier TABLE = TableIdentifier.of("demo", "items");

  static final List<Flag> DEMO =
      List.of(
          Flag.of("changes", "<N>", "How many changes to generate.", 20_000),
          Flag.of("keys", "<N>", "Over how many keys.", 2_000),
          Flag.of("parallelism", "<N>", "The parallelism of dedup and writers.", 2));

  static List<Flag> flags() {
    List<Flag> flags = new ArrayList<>(DEMO);
    flags.addAll(CatalogFlags.FLAGS);
    flags.add(Flag.of("help", "", "Show this help."));
    return flags;
  }

  static String help() {
    StringBuilder out =
        new StringBuilder(
            "usage: demo [--changes N] [--keys N] [--parallelism N] [catalog flags]\n"
                + "Generates a changelog with disorder and duplicates, applies it to demo.items"
                + " (a hadoop catalog in ./warehouse unless told otherwise), and checks the table"
                + " against a reference model of the changelog.\n");
    Flag.describe(out, "Demo", DEMO);
    Flag.describe(out, "Catalog", CatalogFlags.FLAGS);
    return out.toString();
  }

  /**
   * Refuses the demo submitted to a cluster (also the jar run without a command, or with another
   * command's flags and no command word): its changelog, warehouse and check are the command's own
   * directory's, which a cluster's TaskManagers do not share.
   */
  static void refuseOnACluster() {
    if (io.icebergcdc.jobs.pipeline.RuntimeTranslator.clusterConfiguration().isPresent()) {
      throw new Arguments.UsageException(
          "demo: runs on an embedded Flink of its own (java -jar iceberg-cdc-jobs.jar);"
              + " submitted to a cluster, give a command, such as apply");
    }
  }

  static int run(Arguments args, PrintStream out) throws Exception {
    int changes = args.intValue("changes", 20_000, 1);
    int keys = args.intValue("keys", 2_000, 1);
    int parallelism = args.intValue("parallelism", 2, 1);
    CatalogDefinition catalogDefinition = CatalogFlags.definition(args, "warehouse");
    args.rejectUnused("demo");

    // The generated changelog goes beside a local warehouse, else into a temporary directory.
    Path work =
        catalogDefinition.type() == CatalogDefinition.Type.HADOOP
            ? Paths.get(catalogDefinition.warehouse())
            : Files.createTempDirectory("iceberg-cdc-demo");
    Catalog catalog = catalogDefinition.connect();
    try {
      if (catalog.tableExists(TABLE)) {
        catalog.dropTable(TABLE, true);
      }
      Files.createDirectories(work);
      ChangelogGenerator.Changelog changelog =
          new ChangelogGenerator(changes, keys, 0.10, 0.02, 42L).generate();
      Path file = work.resolve("demo-changes.jsonl");
      changelog.writeTo(file);
      out.println("Generated " + file + ": " + changelog.describe());

      JobDefinition job =
          new JobDefinition(
              new ChangelogFile(file.toString(), null),
              catalogDefinition,
              new TableDefinition(TABLE.toString(), List.of("id"), null, 2),
              new Configuration(),
              DeadLetterOutput.NONE,
              new RuntimeDefinition(
                  parallelism,
                  Duration.ofSeconds(1),
                  JobFlags.defaultCheckpointDirectory(),
                  "hashmap",
                  null,
                  0));
      long start = System.nanoTime();
      new JobRunner(job).run();
      out.printf(
          "Applied it to %s with parallelism %d in %.1f s%n%n",
          TABLE, parallelism, (System.nanoTime() - start) / 1e9);

      Table table = catalog.loadTable(TABLE);
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
    } finally {
      CatalogDefinition.close(catalog);
    }
  }
}
