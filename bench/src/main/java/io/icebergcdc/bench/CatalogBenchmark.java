package io.icebergcdc.bench;

import io.icebergcdc.commit.CommitListener;
import io.icebergcdc.jobs.definition.ChangelogFile;
import io.icebergcdc.jobs.definition.DeadLetterOutput;
import io.icebergcdc.jobs.definition.JobDefinition;
import io.icebergcdc.jobs.definition.RuntimeDefinition;
import io.icebergcdc.jobs.definition.TableDefinition;
import io.icebergcdc.jobs.demo.ChangelogGenerator;
import io.icebergcdc.jobs.pipeline.JobRunner;
import io.icebergcdc.locallake.LocalRestCatalog;
import io.icebergcdc.locallake.LocalS3Store;
import io.icebergcdc.sink.CatalogDefinition;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.util.TimeUtils;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;

/**
 * The same apply job ({@code apply --source file} as a library call, local Flink) on the same
 * in-order changelog, once into a local Hadoop warehouse and once into a REST catalog with its
 * tables on S3: Iceberg's REST catalog server and S3Proxy, each a process of its own on this
 * machine. Runs alternate, local then REST, for each pair; the report gives each run's throughput
 * and the commits' latency (from the committer's call to its commit to its return: the catalog's
 * round trips and the manifest writes), p50 and p95, and the ratio of the medians.
 */
public final class CatalogBenchmark {

  /** The commit latencies of the run in progress, in ms, by checkpoint. */
  static final Map<Long, Long> COMMIT_MILLIS = new ConcurrentHashMap<>();

  private static final Map<Long, Long> STARTED = new ConcurrentHashMap<>();

  /** Times each commit, from just before it to just after it. */
  static final class CommitTimer implements CommitListener {
    private static final long serialVersionUID = 1L;

    @Override
    public void beforeCommit(long checkpointId) {
      STARTED.put(checkpointId, System.nanoTime());
    }

    @Override
    public void afterCommit(long checkpointId, Snapshot snapshot) {
      Long start = STARTED.remove(checkpointId);
      if (start != null) {
        COMMIT_MILLIS.put(checkpointId, (System.nanoTime() - start) / 1_000_000);
      }
    }
  }

  record Run(String catalog, int pair, double seconds, double changesPerSecond, long[] commits) {}

  public static void main(String[] args) throws Exception {
    Map<String, String> options = new LinkedHashMap<>();
    boolean quick = false;
    for (int i = 0; i < args.length; i++) {
      if (args[i].equals("--quick")) {
        quick = true;
      } else if (i + 1 < args.length) {
        options.put(args[i].replaceFirst("^--", ""), args[++i]);
      }
    }
    int changes = Integer.parseInt(options.getOrDefault("changes", quick ? "200000" : "1000000"));
    int keys = Integer.parseInt(options.getOrDefault("keys", quick ? "20000" : "100000"));
    int pairs = Integer.parseInt(options.getOrDefault("pairs", quick ? "1" : "3"));
    int parallelism = Integer.parseInt(options.getOrDefault("parallelism", "2"));
    Duration interval = TimeUtils.parseDuration(options.getOrDefault("checkpoint-interval", "2s"));
    Path out =
        Paths.get(
            options.getOrDefault(
                "out",
                "bench/results/catalogs-"
                    + SuiteReport.size(changes, keys)
                    + (quick ? "-quick" : "")
                    + ".md"));

    Path work = Files.createTempDirectory("iceberg-cdc-catalog-bench");
    Path changelog = work.resolve("changes.jsonl");
    // In order: no late and no repeated deliveries.
    new ChangelogGenerator(changes, keys, 0.0, 0.0, 42L).generate().writeTo(changelog);

    List<Run> runs = new ArrayList<>();
    try (LocalS3Store s3 = LocalS3Store.start()) {
      s3.createBucket("bench-lake");
      try (LocalRestCatalog rest =
          LocalRestCatalog.start("s3://bench-lake/warehouse", s3.icebergProperties())) {
        CatalogDefinition restCatalog =
            CatalogDefinition.builder()
                .type("rest")
                .uri(rest.uri())
                .properties(s3.icebergProperties())
                .build();
        for (int pair = 1; pair <= pairs; pair++) {
          CatalogDefinition local =
              CatalogDefinition.hadoop(work.resolve("warehouse-" + pair).toString());
          runs.add(run("hadoop, local disk", pair, local, changelog, work, parallelism, interval));
          runs.add(run("rest + s3", pair, restCatalog, changelog, work, parallelism, interval));
        }
      }
    }
    String report = report(runs, changes, keys, parallelism, interval);
    Files.createDirectories(out.toAbsolutePath().getParent());
    Files.writeString(out, report);
    System.out.println(report);
    System.out.println("Written " + out);
  }

  private static Run run(
      String name,
      int pair,
      CatalogDefinition catalog,
      Path changelog,
      Path work,
      int parallelism,
      Duration interval)
      throws Exception {
    TableIdentifier table = TableIdentifier.of("bench", "items_" + pair);
    JobDefinition job =
        new JobDefinition(
            new ChangelogFile(changelog.toString(), null),
            catalog,
            new TableDefinition(table.toString(), List.of("id"), null, 3),
            new Configuration(),
            DeadLetterOutput.NONE,
            new RuntimeDefinition(
                parallelism,
                interval,
                work.resolve("checkpoints-" + pair + "-" + name.hashCode()).toString(),
                "hashmap",
                null,
                0));
    COMMIT_MILLIS.clear();
    STARTED.clear();
    long start = System.nanoTime();
    new JobRunner(job, new CommitTimer()).run();
    double seconds = (System.nanoTime() - start) / 1e9;
    long records = Files.lines(changelog).count();
    long[] commits = COMMIT_MILLIS.values().stream().mapToLong(Long::longValue).sorted().toArray();
    Catalog loaded = catalog.connect();
    try {
      loaded.dropTable(table, true);
    } finally {
      CatalogDefinition.close(loaded);
    }
    System.out.printf(
        Locale.ROOT,
        "%s, pair %d: %.1f s, %,.0f changes/s, %d commits, p50 %d ms, p95 %d ms%n",
        name,
        pair,
        seconds,
        records / seconds,
        commits.length,
        percentile(commits, 0.50),
        percentile(commits, 0.95));
    return new Run(name, pair, seconds, records / seconds, commits);
  }

  static long percentile(long[] sorted, double p) {
    if (sorted.length == 0) {
      return -1;
    }
    int index = (int) Math.ceil(p * sorted.length) - 1;
    return sorted[Math.max(0, Math.min(sorted.length - 1, index))];
  }

  private static String report(
      List<Run> runs, int changes, int keys, int parallelism, Duration interval) {
    StringBuilder text = new StringBuilder();
    text.append(
        String.format(
            Locale.ROOT,
            "Catalog benchmark, %s: the apply job on %,d in-order changes over %,d keys (Debezium"
                + " JSON file, upserts and deletes), parallelism %d, checkpoints every %s, format"
                + " version 3; a local Hadoop warehouse against Iceberg's REST catalog server"
                + " (JDBC on SQLite) with S3FileIO on S3Proxy (local disk), both servers on this"
                + " machine of %d cores, Java %s. Runs alternate, local first in each pair. Commit"
                + " latency: from just before the committer's commit to its return.%n%n",
            LocalDate.now(),
            changes,
            keys,
            parallelism,
            TimeUtils.formatWithHighestUnit(interval),
            Runtime.getRuntime().availableProcessors(),
            System.getProperty("java.version")));
    text.append(
        "| catalog | pair | seconds | changes/s | commits | commit p50 ms | commit p95 ms |\n");
    text.append("| --- | --- | --- | --- | --- | --- | --- |\n");
    for (Run run : runs) {
      text.append(
          String.format(
              Locale.ROOT,
              "| %s | %d | %.1f | %,.0f | %d | %d | %d |%n",
              run.catalog(),
              run.pair(),
              run.seconds(),
              run.changesPerSecond(),
              run.commits().length,
              percentile(run.commits(), 0.50),
              percentile(run.commits(), 0.95)));
    }
    double local = median(runs, "hadoop, local disk");
    double rest = median(runs, "rest + s3");
    text.append(
        String.format(
            Locale.ROOT,
            "%nMedian throughput: local %,.0f changes/s, REST + S3 %,.0f changes/s; the local"
                + " warehouse is %.2fx as fast as REST + S3.%n",
            local,
            rest,
            local / rest));
    return text.toString();
  }

  private static double median(List<Run> runs, String catalog) {
    double[] rates =
        runs.stream()
            .filter(r -> r.catalog().equals(catalog))
            .mapToDouble(Run::changesPerSecond)
            .sorted()
            .toArray();
    return rates.length % 2 == 1
        ? rates[rates.length / 2]
        : (rates[rates.length / 2 - 1] + rates[rates.length / 2]) / 2;
  }
}
