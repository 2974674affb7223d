package io.icebergcdc.bench;

import io.icebergcdc.commit.CommitListener;
import io.icebergcdc.jobs.definition.DeadLetterOutput;
import io.icebergcdc.jobs.definition.JobDefinition;
import io.icebergcdc.jobs.definition.KafkaTopics;
import io.icebergcdc.jobs.definition.RuntimeDefinition;
import io.icebergcdc.jobs.definition.TableDefinition;
import io.icebergcdc.jobs.demo.ChangelogGenerator;
import io.icebergcdc.jobs.pipeline.JobRunner;
import io.icebergcdc.localkafka.LocalKafkaBroker;
import io.icebergcdc.sink.CatalogDefinition;
import io.icebergcdc.sink.MaintenanceOptions;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;

/**
 * A soak of the Kafka path: a producer writes a changelog to a local broker a slice per checkpoint
 * interval while one {@code apply --source kafka} job (local Flink, Hadoop warehouse, the
 * committer's maintenance on) commits every interval, for thousands of commits. It reports the
 * commit latency of commits 100-200 against the last 100, and how the metadata file, the manifests
 * and the snapshots kept grew, and checks the table against the changelog's reference model at the
 * end. Exit status 1 when a bound is broken.
 *
 * <pre>
 *   bash bench/soak.sh [--commits 3000] [--changes-per-commit 20] [--keys 5000]
 *       [--checkpoint-interval 1s] [--snapshot-max-age 5m] [--out FILE]
 * </pre>
 */
public final class SoakBenchmark {

  /** Commit durations by checkpoint, as the committer's listener measures them (one JVM). */
  private static final Map<Long, Long> STARTED = new ConcurrentHashMap<>();

  private static final ConcurrentLinkedQueue<long[]> COMMITS = new ConcurrentLinkedQueue<>();

  /** Times each commit of the job from the listener's call before it to the one after it. */
  private static final class Timing implements CommitListener {
    private static final long serialVersionUID = 1L;

    @Override
    public void beforeCommit(long checkpointId) {
      STARTED.put(checkpointId, System.nanoTime());
    }

    @Override
    public void afterCommit(long checkpointId, Snapshot snapshot) {
      Long start = STARTED.remove(checkpointId);
      if (start != null) {
        COMMITS.add(new long[] {checkpointId, (System.nanoTime() - start) / 1_000});
      }
    }
  }

  /** What the table looked like after a commit. */
  private record Health(
      int commit,
      long metadataBytes,
      int snapshots,
      int manifests,
      long dataFiles,
      long deleteFiles) {}

  public static void main(String[] args) throws Exception {
    BenchOptions options =
        BenchOptions.parse(
            args,
            Set.of(
                "commits",
                "changes-per-commit",
                "keys",
                "checkpoint-interval",
                "snapshot-max-age",
                "small-file-size",
                "out"));
    int commits = (int) options.getLong("commits", 3000);
    int perCommit = (int) options.getLong("changes-per-commit", 20);
    int keys = (int) options.getLong("keys", 5000);
    Duration interval = Duration.ofMillis(options.millis("checkpoint-interval", "1s"));
    Duration maxAge = Duration.ofMillis(options.millis("snapshot-max-age", "5m"));
    Path out = Paths.get(options.get("out", "bench/results/soak-" + LocalDate.now() + ".md"));
    if (commits < 300) {
      throw new IllegalArgumentException("--commits must be at least 300, not " + commits);
    }

    Path work = Files.createTempDirectory("iceberg-cdc-soak");
    ChangelogGenerator.Changelog changelog =
        // A tenth more slices than commits: a checkpoint now and then takes two.
        new ChangelogGenerator(commits * perCommit * 11 / 10, keys, 0.05, 0.02, 31).generate();
    List<Map.Entry<String, String>> records = changelog.kafkaRecords();

    String topic = "soak.public.items";
    TableIdentifier identifier = TableIdentifier.of("soak", "items");
    Configuration sinkOptions = new Configuration();
    sinkOptions.set(MaintenanceOptions.SNAPSHOT_MAX_AGE, maxAge);
    // Ten runs of the maintenance within the maximum age.
    sinkOptions.set(MaintenanceOptions.INTERVAL, maxAge.dividedBy(10));
    String smallFileSize = options.get("small-file-size", null);
    if (smallFileSize != null) {
      sinkOptions.set(
          io.icebergcdc.sink.SinkOptions.COMPACTION_SMALL_FILE_SIZE,
          org.apache.flink.configuration.MemorySize.parse(smallFileSize));
    }
    List<Health> health = new ArrayList<>();
    long startedAt = System.nanoTime();
    try (LocalKafkaBroker broker = LocalKafkaBroker.start()) {
      broker.createTopic(topic, 2);
      JobDefinition job =
          new JobDefinition(
              KafkaTopics.ofTopic(
                  broker.bootstrapServers(), topic, "soak", KafkaTopics.DEBEZIUM_JSON),
              CatalogDefinition.hadoop(work.resolve("warehouse").toString()),
              new TableDefinition("soak.{table}", List.of(), null, 3),
              sinkOptions,
              DeadLetterOutput.NONE,
              new RuntimeDefinition(
                  2, interval, work.resolve("checkpoints").toString(), "hashmap", null, 0));
      // The first slice creates the table (from its Debezium schema) before the job starts.
      int sent = Math.min(perCommit, records.size());
      broker.produce(topic, records.subList(0, sent));
      JobClient client = new JobRunner(job, new Timing()).start();
      // The local cluster goes with the job: its result is the one thing left to ask then.
      java.util.concurrent.CompletableFuture<?> result = client.getJobExecutionResult();
      Catalog catalog = job.catalog().loader().loadCatalog();
      try {
        long nextSlice = System.nanoTime();
        int sampled = 0;
        while (sent < records.size()) {
          if (result.isDone()) {
            result.get();
            throw new IllegalStateException("the soak's job ended");
          }
          if (System.nanoTime() >= nextSlice && sent < records.size()) {
            int end = Math.min(records.size(), sent + perCommit);
            broker.produce(topic, records.subList(sent, end));
            sent = end;
            nextSlice += interval.toNanos();
          }
          int done = COMMITS.size();
          if (done >= sampled + 50 && catalog.tableExists(identifier)) {
            sampled = done;
            health.add(health(catalog.loadTable(identifier), done));
            System.out.printf(Locale.ROOT, "%s%n", health.get(health.size() - 1));
          }
          Thread.sleep(20);
        }
        // Every change in: the table must equal the model.
        Table table = catalog.loadTable(identifier);
        long deadline = System.nanoTime() + Duration.ofMinutes(2).toNanos();
        List<String> differences;
        do {
          Thread.sleep(500);
          table.refresh();
          differences = changelog.model().differences(table, 10);
        } while (!differences.isEmpty() && System.nanoTime() < deadline);
        health.add(health(table, COMMITS.size()));
        report(
            out,
            changelog,
            commits,
            perCommit,
            keys,
            interval,
            maxAge,
            health,
            differences,
            (System.nanoTime() - startedAt) / 1e9);
        if (!differences.isEmpty()) {
          System.exit(1);
        }
      } finally {
        if (!result.isDone()) {
          client.cancel().get();
        }
      }
    }
  }

  private static Health health(Table table, int commit) {
    TableMetadata metadata = ((HasTableOperations) table).operations().current();
    long bytes = table.io().newInputFile(metadata.metadataFileLocation()).getLength();
    int snapshots = metadata.snapshots().size();
    Snapshot current = table.currentSnapshot();
    int manifests =
        current == null
            ? 0
            : current.dataManifests(table.io()).size() + current.deleteManifests(table.io()).size();
    Map<String, String> summary = current == null ? Map.of() : current.summary();
    return new Health(
        commit,
        bytes,
        snapshots,
        manifests,
        Long.parseLong(summary.getOrDefault("total-data-files", "0")),
        Long.parseLong(summary.getOrDefault("total-delete-files", "0")));
  }

  private static void report(
      Path out,
      ChangelogGenerator.Changelog changelog,
      int commits,
      int perCommit,
      int keys,
      Duration interval,
      Duration maxAge,
      List<Health> health,
      List<String> differences,
      double seconds)
      throws Exception {
    long[][] all = COMMITS.toArray(new long[0][]);
    Arrays.sort(all, (a, b) -> Long.compare(a[0], b[0]));
    long[] early = durations(all, 100, 200);
    long[] late = durations(all, all.length - 100, all.length);
    Health first = health.stream().filter(h -> h.commit() >= 100).findFirst().orElse(health.get(0));
    Health last = health.get(health.size() - 1);
    int mostSnapshots = health.stream().mapToInt(Health::snapshots).max().orElse(0);
    int mostManifests = health.stream().mapToInt(Health::manifests).max().orElse(0);
    double p50 = ratio(percentile(late, 50), percentile(early, 50));
    double p95 = ratio(percentile(late, 95), percentile(early, 95));
    StringBuilder text = new StringBuilder();
    text.append(
        String.format(
            Locale.ROOT,
            "Soak, %s: %,d commits of an `apply --source kafka` job (checkpoints every %d ms, %d"
                + " changes a commit over %,d keys, %,d changes in all, parallelism 2, format"
                + " version 3), snapshot expiry after %s; %.0f s; %d cores, Java %s.%n%n",
            LocalDate.now(),
            all.length,
            interval.toMillis(),
            perCommit,
            keys,
            changelog.lines().size(),
            maxAge,
            seconds,
            Runtime.getRuntime().availableProcessors(),
            System.getProperty("java.version")));
    text.append("| | commits 100-200 | last 100 | last / first |\n| --- | ---: | ---: | ---: |\n");
    text.append(
        String.format(
            Locale.ROOT,
            "| commit latency p50 | %.1f ms | %.1f ms | %.2fx |%n",
            percentile(early, 50) / 1000.0,
            percentile(late, 50) / 1000.0,
            p50));
    text.append(
        String.format(
            Locale.ROOT,
            "| commit latency p95 | %.1f ms | %.1f ms | %.2fx |%n",
            percentile(early, 95) / 1000.0,
            percentile(late, 95) / 1000.0,
            p95));
    text.append(
        String.format(
            Locale.ROOT,
            "| metadata file | %,d B (commit %d) | %,d B (commit %d) | %.2fx |%n",
            first.metadataBytes(),
            first.commit(),
            last.metadataBytes(),
            last.commit(),
            ratio(last.metadataBytes(), first.metadataBytes())));
    text.append(
        String.format(
            Locale.ROOT,
            "| snapshots kept | %d | %d (at most %d) | |%n",
            first.snapshots(),
            last.snapshots(),
            mostSnapshots));
    text.append(
        String.format(
            Locale.ROOT,
            "| data + delete manifests | %d | %d (at most %d) | |%n",
            first.manifests(),
            last.manifests(),
            mostManifests));
    long mostDataFiles = health.stream().mapToLong(Health::dataFiles).max().orElse(0);
    text.append(
        String.format(
            Locale.ROOT,
            "| data files (delete files) | %d (%d) | %d (%d), at most %d data files | |%n",
            first.dataFiles(),
            first.deleteFiles(),
            last.dataFiles(),
            last.deleteFiles(),
            mostDataFiles));
    text.append(
        String.format(
            Locale.ROOT,
            "%nThe table against the changelog's model: %s.%n",
            differences.isEmpty() ? "equal" : String.join("; ", differences)));
    Files.createDirectories(out.toAbsolutePath().getParent());
    Files.writeString(out, text.toString(), StandardCharsets.UTF_8);
    System.out.println(text);
  }

  private static long[] durations(long[][] commits, int from, int to) {
    return Arrays.stream(commits, Math.max(0, from), Math.min(commits.length, to))
        .mapToLong(c -> c[1])
        .sorted()
        .toArray();
  }

  private static long percentile(long[] sorted, int p) {
    if (sorted.length == 0) {
      return 0;
    }
    return sorted[Math.min(sorted.length - 1, (int) Math.ceil(sorted.length * p / 100.0) - 1)];
  }

  private static double ratio(double a, double b) {
    return b == 0 ? Double.NaN : a / b;
  }
}
