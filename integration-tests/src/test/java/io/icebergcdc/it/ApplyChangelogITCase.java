package io.icebergcdc.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.icebergcdc.commit.CommitListener;
import io.icebergcdc.commit.SnapshotSummaryKeys;
import io.icebergcdc.jobs.ApplyJob;
import io.icebergcdc.jobs.ApplyPipeline;
import io.icebergcdc.jobs.demo.ChangelogGenerator;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.util.SnapshotUtil;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Applies generated changelogs, with out-of-order and duplicate delivery, deletes and key changes,
 * on a MiniCluster with parallelism 2 and frequent checkpoints, and compares the table, read back
 * through Iceberg with its deletes applied, row for row with a reference model of the changelog.
 */
class ApplyChangelogITCase {

  @RegisterExtension
  static final MiniClusterExtension FLINK =
      new MiniClusterExtension(
          new MiniClusterResourceConfiguration.Builder()
              .setNumberTaskManagers(1)
              .setNumberSlotsPerTaskManager(4)
              .build());

  private static final TableIdentifier TABLE = TableIdentifier.of("db", "items");

  @TempDir Path dir;

  private ChangelogGenerator.Changelog changelog(int changes, int keys, long seed) {
    ChangelogGenerator.Changelog changelog =
        new ChangelogGenerator(changes, keys, 0.10, 0.02, seed).generate();
    assertThat(changelog.outOfOrder()).isGreaterThanOrEqualTo(changes / 10 - changes / 100);
    assertThat(changelog.duplicates()).isGreaterThan(changes / 100);
    changelog.writeTo(dir.resolve("changes.jsonl"));
    return changelog;
  }

  private ApplyJob job(
      String partitionBy,
      int formatVersion,
      Map<String, String> catalogProperties,
      int restartAttempts,
      Configuration sinkOptions) {
    return new ApplyJob(
        dir.resolve("changes.jsonl").toString(),
        dir.resolve("warehouse").toString(),
        catalogProperties,
        TABLE,
        List.of("id"),
        partitionBy,
        formatVersion,
        2,
        Duration.ofMillis(200),
        null,
        null,
        restartAttempts,
        sinkOptions);
  }

  private Table table() {
    return ApplyPipeline.catalogLoader(dir.resolve("warehouse").toString(), Map.of())
        .loadCatalog()
        .loadTable(TABLE);
  }

  private static List<Snapshot> snapshots(Table table) {
    List<Snapshot> snapshots = new ArrayList<>();
    SnapshotUtil.currentAncestors(table).forEach(s -> snapshots.add(0, s));
    return snapshots;
  }

  /** Every snapshot commits one checkpoint, each checkpoint at most once, in rising order. */
  private static void assertOneCommitPerCheckpoint(List<Snapshot> snapshots) {
    long previous = -1;
    Set<String> jobs = new HashSet<>();
    for (Snapshot snapshot : snapshots) {
      Map<String, String> summary = snapshot.summary();
      assertThat(summary)
          .containsKeys(
              SnapshotSummaryKeys.JOB_ID,
              SnapshotSummaryKeys.OPERATOR_ID,
              SnapshotSummaryKeys.ROWS_INSERTED,
              SnapshotSummaryKeys.ROWS_UPDATED,
              SnapshotSummaryKeys.ROWS_DELETED,
              SnapshotSummaryKeys.STALE_DROPPED,
              SnapshotSummaryKeys.DUPLICATES_DROPPED,
              SnapshotSummaryKeys.SOURCE_POSITION);
      long checkpoint = Long.parseLong(summary.get(SnapshotSummaryKeys.CHECKPOINT_ID));
      assertThat(checkpoint).as("checkpoints commit once each, in order").isGreaterThan(previous);
      previous = checkpoint;
      jobs.add(summary.get(SnapshotSummaryKeys.JOB_ID));
    }
    assertThat(jobs).hasSize(1);
  }

  private static long sum(List<Snapshot> snapshots, String key) {
    return snapshots.stream().mapToLong(s -> Long.parseLong(s.summary().get(key))).sum();
  }

  @Test
  void appliesAChangelogWithDisorderAndDuplicatesExactly() throws Exception {
    ChangelogGenerator.Changelog changelog = changelog(100_000, 10_000, 1L);

    new ApplyPipeline(job(null, 2, Map.of(), 0, new Configuration()), null).run();

    Table table = table();
    assertThat(changelog.model().differences(table, 20)).isEmpty();
    List<Snapshot> snapshots = snapshots(table);
    assertThat(snapshots.size()).isGreaterThan(1);
    assertOneCommitPerCheckpoint(snapshots);
    // Every delivered change is applied, or dropped as stale or duplicate and counted.
    assertThat(sum(snapshots, SnapshotSummaryKeys.DUPLICATES_DROPPED))
        .isGreaterThanOrEqualTo(changelog.duplicates() / 2);
    assertThat(sum(snapshots, SnapshotSummaryKeys.STALE_DROPPED)).isPositive();
    assertThat(
            sum(snapshots, SnapshotSummaryKeys.ROWS_INSERTED)
                - sum(snapshots, SnapshotSummaryKeys.ROWS_DELETED))
        .isLessThanOrEqualTo(changelog.model().size() + 0L + changelog.deletes());
  }

  @Test
  void appliesItToAPartitionedFormatVersion3TableDistributedByPartition() throws Exception {
    ChangelogGenerator.Changelog changelog = changelog(40_000, 4_000, 2L);
    Configuration options = new Configuration();
    options.setString("sink.distribution", "PARTITION");

    new ApplyPipeline(job("bucket(4, id)", 3, Map.of(), 0, options), null).run();

    Table table = table();
    assertThat(org.apache.iceberg.TableUtil.formatVersion(table)).isEqualTo(3);
    assertThat(changelog.model().differences(table, 20)).isEmpty();
    assertOneCommitPerCheckpoint(snapshots(table));
    // Distribution by partition: each partition is written by one writer per checkpoint.
    for (Snapshot snapshot : snapshots(table)) {
      assertThat(Integer.parseInt(snapshot.summary().getOrDefault("added-data-files", "0")))
          .isLessThanOrEqualTo(4);
    }
  }

  @Test
  void failuresInWritersAndAroundCommitsLoseNothingAndCommitNothingTwice() throws Exception {
    ChangelogGenerator.Changelog changelog = changelog(100_000, 10_000, 3L);
    FlakyFileIO.failEvery(7, 3);
    InjectedCommitFailures.reset(2, 2);

    new ApplyPipeline(
            job(
                null,
                2,
                Map.of(CatalogProperties.FILE_IO_IMPL, FlakyFileIO.class.getName()),
                20,
                new Configuration()),
            new InjectedCommitFailures())
        .run();

    assertThat(FlakyFileIO.FAILURES.get()).as("writer failures injected").isEqualTo(3);
    assertThat(InjectedCommitFailures.BEFORE.get()).as("failures before a commit").isEqualTo(2);
    assertThat(InjectedCommitFailures.AFTER.get()).as("failures after a commit").isEqualTo(2);
    Table table = table();
    assertThat(changelog.model().differences(table, 20)).isEmpty();
    assertOneCommitPerCheckpoint(snapshots(table));
  }

  @Test
  void equalityDeletesAreTheOnlyDeletesInThisMode() throws Exception {
    changelog(5_000, 500, 4L);
    new ApplyPipeline(job(null, 2, Map.of(), 0, new Configuration()), null).run();
    try (CloseableIterable<FileScanTask> tasks = table().newScan().planFiles()) {
      for (FileScanTask task : tasks) {
        for (DeleteFile delete : task.deletes()) {
          assertThat(delete.equalityFieldIds()).containsExactly(1);
        }
      }
    }
  }

  /**
   * Fails the job just before some commits and just after others: the first leaves a checkpoint
   * pending for the restore to commit, the second leaves one committed but not acknowledged.
   */
  static final class InjectedCommitFailures implements CommitListener {
    private static final long serialVersionUID = 1L;
    static final AtomicInteger BEFORE = new AtomicInteger();
    static final AtomicInteger AFTER = new AtomicInteger();
    private static final AtomicInteger COMMITS = new AtomicInteger();
    private static volatile int beforeBudget;
    private static volatile int afterBudget;

    static void reset(int before, int after) {
      BEFORE.set(0);
      AFTER.set(0);
      COMMITS.set(0);
      beforeBudget = before;
      afterBudget = after;
    }

    @Override
    public void beforeCommit(long checkpointId) {
      if (COMMITS.incrementAndGet() % 3 == 0 && BEFORE.get() < beforeBudget) {
        BEFORE.incrementAndGet();
        throw new IllegalStateException("injected failure before committing " + checkpointId);
      }
    }

    @Override
    public void afterCommit(long checkpointId, Snapshot snapshot) {
      if (COMMITS.get() % 4 == 1 && AFTER.get() < afterBudget) {
        AFTER.incrementAndGet();
        throw new IllegalStateException("injected failure after committing " + checkpointId);
      }
    }
  }
}
