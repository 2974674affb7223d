package io.icebergcdc.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.icebergcdc.commit.SnapshotSummaryKeys;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.util.SnapshotUtil;

/** What the snapshot summaries of a table say about the jobs that committed to it. */
final class Commits {

  private Commits() {}

  /**
   * The jobs that committed to the table, in the order of their first commit; fails if any of their
   * checkpoints was committed twice, or if nothing was committed.
   */
  static Set<String> jobsThatCommittedEachCheckpointOnce(Table table) {
    Set<String> commits = new HashSet<>();
    Set<String> jobs = new LinkedHashSet<>();
    for (Snapshot snapshot : table.snapshots()) {
      String job = snapshot.summary().get(SnapshotSummaryKeys.JOB_ID);
      String checkpoint = snapshot.summary().get(SnapshotSummaryKeys.CHECKPOINT_ID);
      if (checkpoint == null) {
        continue; // not ours
      }
      assertThat(commits.add(job + "/" + checkpoint))
          .as("checkpoint %s of job %s committed once to %s", checkpoint, job, table.name())
          .isTrue();
      jobs.add(job);
    }
    assertThat(commits).as("commits to %s", table.name()).isNotEmpty();
    return jobs;
  }

  /** The table's snapshots, oldest first. */
  static List<Snapshot> snapshots(Table table) {
    List<Snapshot> snapshots = new ArrayList<>();
    SnapshotUtil.currentAncestors(table).forEach(s -> snapshots.add(0, s));
    return snapshots;
  }

  /** Every snapshot of ours commits one checkpoint, each checkpoint at most once, in order. */
  static void assertOneCommitPerCheckpoint(List<Snapshot> snapshots) {
    long previous = -1;
    Set<String> jobs = new HashSet<>();
    for (Snapshot snapshot : snapshots) {
      Map<String, String> summary = snapshot.summary();
      if (!summary.containsKey(SnapshotSummaryKeys.JOB_ID)) {
        continue; // another writer's snapshot
      }
      assertThat(summary)
          .containsKeys(
              SnapshotSummaryKeys.OPERATOR_ID,
              SnapshotSummaryKeys.ROWS_INSERTED,
              SnapshotSummaryKeys.ROWS_UPDATED,
              SnapshotSummaryKeys.ROWS_DELETED,
              SnapshotSummaryKeys.STALE_DROPPED,
              SnapshotSummaryKeys.DUPLICATES_DROPPED,
              SnapshotSummaryKeys.DELETES_FELL_BACK,
              SnapshotSummaryKeys.SOURCE_POSITION);
      long checkpoint = Long.parseLong(summary.get(SnapshotSummaryKeys.CHECKPOINT_ID));
      assertThat(checkpoint).as("checkpoints commit once each, in order").isGreaterThan(previous);
      previous = checkpoint;
      jobs.add(summary.get(SnapshotSummaryKeys.JOB_ID));
    }
    assertThat(jobs).hasSize(1);
  }
}
