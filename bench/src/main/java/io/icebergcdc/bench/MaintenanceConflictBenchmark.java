package io.icebergcdc.bench;

import io.icebergcdc.commit.CommitListener;
import io.icebergcdc.commit.SnapshotSummaryKeys;
import io.icebergcdc.jobs.definition.DeadLetterOutput;
import io.icebergcdc.jobs.definition.JobDefinition;
import io.icebergcdc.jobs.definition.KafkaTopics;
import io.icebergcdc.jobs.definition.RuntimeDefinition;
import io.icebergcdc.jobs.definition.TableDefinition;
import io.icebergcdc.jobs.demo.ChangelogGenerator;
import io.icebergcdc.jobs.pipeline.PipelineComposer;
import io.icebergcdc.localkafka.LocalKafkaBroker;
import io.icebergcdc.locallake.LocalRestCatalog;
import io.icebergcdc.sink.CatalogDefinition;
import io.icebergcdc.sink.MaintenanceOptions;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.time.LocalDate;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.flink.TableLoader;
import org.apache.iceberg.flink.maintenance.api.ExpireSnapshots;
import org.apache.iceberg.flink.maintenance.api.RewriteDataFiles;
import org.apache.iceberg.flink.maintenance.api.TableMaintenance;

/**
 * Measures what running Iceberg's Flink maintenance beside the sink costs, against the committer's
 * own: the same Kafka apply job on the REST catalog (1 s checkpoints, a slice of changes every
 * second) for a number of commits, once with the committer expiring snapshots between its commits,
 * once with that off and Iceberg's {@code TableMaintenance} ({@code ExpireSnapshots} every 10
 * commits, {@code RewriteDataFiles} every 20) in the same job. Counted: Iceberg's commit reports
 * per operation and how many needed more than one attempt (another commit got in first), the
 * committer's attempts that a concurrent change made it prepare again, deletes that fell back to
 * equality deletes, the snapshots kept at the end, and whether the table equals the model.
 *
 * <pre>
 *   bash bench/java.sh MaintenanceConflictBenchmark [--commits 300] [--out FILE]
 * </pre>
 */
public final class MaintenanceConflictBenchmark {

  private static final AtomicLong ATTEMPTS = new AtomicLong();
  private static final AtomicLong COMMITTED = new AtomicLong();

  /** Counts the committer's commit attempts and successes. */
  private static final class Attempts implements CommitListener {
    private static final long serialVersionUID = 1L;

    @Override
    public void beforeCommit(long checkpointId) {
      ATTEMPTS.incrementAndGet();
    }

    @Override
    public void afterCommit(long checkpointId, Snapshot snapshot) {
      COMMITTED.incrementAndGet();
    }
  }

  public static void main(String[] args) throws Exception {
    BenchOptions options = BenchOptions.parse(args, Set.of("commits", "modes", "out"));
    int commits = (int) options.getLong("commits", 300);
    Path out =
        Paths.get(
            options.get("out", "bench/results/maintenance-conflict-" + LocalDate.now() + ".md"));
    StringBuilder report = new StringBuilder();
    report.append(
        String.format(
            Locale.ROOT,
            "# Maintenance beside the sink, %s%n%nOne Kafka apply job on the REST catalog, 1 s"
                + " checkpoints, a slice of 50 changes a second over 2,000 keys, %d commits of the"
                + " job per run.%n%n"
                + "| maintenance | job commits | Iceberg commits (operation: commits, retried,"
                + " extra attempts) | committer attempts prepared again | deletes fell back to"
                + " equality | snapshots kept | table = model |%n|---|---:|---|---:|---:|---:|---|%n",
            LocalDate.now(),
            commits));
    try (LocalKafkaBroker broker = LocalKafkaBroker.start()) {
      for (String mode : options.get("modes", "committer,iceberg-flink-maintenance").split(",")) {
        report.append(run(broker, mode, commits)).append('\n');
        System.out.println(report);
      }
    }
    Files.createDirectories(out.toAbsolutePath().getParent());
    Files.writeString(out, report.toString(), StandardCharsets.UTF_8);
    System.out.println("written to " + out);
  }

  private static String run(LocalKafkaBroker broker, String mode, int commits) throws Exception {
    Path work = Files.createTempDirectory("iceberg-cdc-maintenance-" + mode);
    String topic = "m" + mode.hashCode() + ".public.items";
    broker.createTopic(topic, 2);
    ChangelogGenerator.Changelog changelog =
        new ChangelogGenerator(commits * 60, 2000, 0.05, 0.02, 5).generate();
    List<Map.Entry<String, String>> records = changelog.kafkaRecords();
    boolean ours = mode.equals("committer");
    Configuration sink = new Configuration();
    sink.set(MaintenanceOptions.EXPIRE_SNAPSHOTS, ours);
    sink.set(MaintenanceOptions.REMOVE_ORPHANS, false);
    sink.set(MaintenanceOptions.SNAPSHOT_MAX_AGE, Duration.ofSeconds(30));
    sink.set(MaintenanceOptions.SNAPSHOTS_RETAINED, 10);
    sink.set(MaintenanceOptions.INTERVAL, Duration.ofSeconds(10));
    LocalRestCatalog rest = LocalRestCatalog.start(work.resolve("warehouse").toString(), Map.of());
    CatalogDefinition catalog =
        CatalogDefinition.builder()
            .type("rest")
            .uri(rest.uri())
            .property("metrics-reporter-impl", CommitAttempts.class.getName())
            .build();
    ((org.apache.iceberg.catalog.SupportsNamespaces) catalog.loader().loadCatalog())
        .createNamespace(org.apache.iceberg.catalog.Namespace.of("m"));
    JobDefinition job =
        new JobDefinition(
            KafkaTopics.ofTopic(broker.bootstrapServers(), topic, "m", KafkaTopics.DEBEZIUM_JSON),
            catalog,
            new TableDefinition("m.{table}", List.of(), null, 3),
            sink,
            DeadLetterOutput.NONE,
            new RuntimeDefinition(
                2,
                Duration.ofSeconds(1),
                work.resolve("checkpoints").toString(),
                "hashmap",
                null,
                0));
    CommitAttempts.reset();
    ATTEMPTS.set(0);
    COMMITTED.set(0);
    // The table exists once the job is composed.
    broker.produce(topic, records.subList(0, 60));
    int sent = 60;
    PipelineComposer.ComposedJob composed = PipelineComposer.compose(job, new Attempts());
    TableIdentifier id = TableIdentifier.of("m", "items");
    if (!ours) {
      TableMaintenance.forTable(
              composed.environment(), TableLoader.fromCatalog(catalog.loader(), id))
          .uidSuffix("iceberg-maintenance")
          .rateLimit(Duration.ofSeconds(5))
          .add(
              ExpireSnapshots.builder()
                  .scheduleOnCommitCount(10)
                  .maxSnapshotAge(Duration.ofSeconds(30))
                  .retainLast(10))
          .add(RewriteDataFiles.builder().scheduleOnCommitCount(20))
          .append();
    }
    JobClient client = composed.environment().executeAsync(composed.name());
    Catalog connected = catalog.loader().loadCatalog();
    try {
      long next = System.nanoTime();
      while (COMMITTED.get() < commits) {
        if (client.getJobStatus().get().isGloballyTerminalState()) {
          try {
            client.getJobExecutionResult().get();
          } catch (Exception e) {
            throw new IllegalStateException("the job failed", e);
          }
          throw new IllegalStateException("the job ended: " + client.getJobStatus().get());
        }
        if (System.nanoTime() >= next && sent < records.size()) {
          int end = Math.min(records.size(), sent + 50);
          broker.produce(topic, records.subList(sent, end));
          sent = end;
          next += 1_000_000_000L;
        }
        Thread.sleep(20);
      }
      broker.produce(topic, records.subList(sent, records.size()));
      Table table = connected.loadTable(id);
      List<String> differences = List.of("not checked");
      long deadline = System.nanoTime() + Duration.ofMinutes(2).toNanos();
      do {
        Thread.sleep(1000);
        table.refresh();
        differences = changelog.model().differences(table, 5);
      } while (!differences.isEmpty() && System.nanoTime() < deadline);
      long fellBack = 0;
      int snapshots = 0;
      for (Snapshot s : table.snapshots()) {
        snapshots++;
        fellBack +=
            Long.parseLong(s.summary().getOrDefault(SnapshotSummaryKeys.DELETES_FELL_BACK, "0"));
      }
      StringBuilder iceberg = new StringBuilder();
      CommitAttempts.snapshot()
          .forEach(
              (operation, c) ->
                  iceberg
                      .append(iceberg.length() == 0 ? "" : "; ")
                      .append(
                          String.format(
                              Locale.ROOT, "%s: %d, %d, %d", operation, c[0], c[1], c[2])));
      return String.format(
          Locale.ROOT,
          "| %s | %d | %s | %d | %d | %d | %s |",
          mode,
          COMMITTED.get(),
          iceberg,
          ATTEMPTS.get() - COMMITTED.get(),
          fellBack,
          snapshots,
          differences.isEmpty() ? "yes" : "NO: " + differences);
    } finally {
      try {
        client.cancel().get();
      } catch (Exception e) {
        // ended already
      }
      rest.close();
    }
  }
}
