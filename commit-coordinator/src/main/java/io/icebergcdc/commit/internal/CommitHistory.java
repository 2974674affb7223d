package io.icebergcdc.commit.internal;

import io.icebergcdc.commit.SnapshotSummaryKeys;
import java.util.Map;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.util.SnapshotUtil;

/** Reads from a table's snapshot log what a committer has already committed. */
final class CommitHistory {

  /** No checkpoint of the job has been committed. */
  static final long NONE = -1L;

  private CommitHistory() {}

  /**
   * The highest checkpoint id committed to the table by the given job and committer operator, by
   * walking the current snapshot's ancestry; {@link #NONE} if there is none.
   */
  static long maxCommittedCheckpointId(Table table, String jobId, String operatorId) {
    return maxCommittedCheckpointId(table, jobId, operatorId, null);
  }

  /**
   * As {@link #maxCommittedCheckpointId(Table, String, String)}, passing over the end-of-input
   * commits of other runs than {@code runId} under the same job id ({@link
   * SnapshotSummaryKeys#RUN_ID}); null to count every run.
   */
  static long maxCommittedCheckpointId(Table table, String jobId, String operatorId, String runId) {
    for (Snapshot snapshot : SnapshotUtil.currentAncestors(table)) {
      Map<String, String> summary = snapshot.summary();
      if (committedBy(summary, jobId, operatorId) && ofRun(summary, runId)) {
        String checkpoint = summary.get(SnapshotSummaryKeys.CHECKPOINT_ID);
        if (checkpoint != null) {
          return Long.parseLong(checkpoint);
        }
      }
    }
    // Snapshot expiry keeps each recent job's latest snapshot (TableMaintainer#restorePoints),
    // which may no longer be linked to the current one by parents.
    long max = NONE;
    for (Snapshot s : table.snapshots()) {
      Map<String, String> summary = s.summary();
      String checkpoint = summary.get(SnapshotSummaryKeys.CHECKPOINT_ID);
      if (checkpoint != null && committedBy(summary, jobId, operatorId) && ofRun(summary, runId)) {
        max = Math.max(max, Long.parseLong(checkpoint));
      }
    }
    return max;
  }

  /** Whether a snapshot's summary names the given job and committer operator. */
  private static boolean committedBy(Map<String, String> summary, String jobId, String operatorId) {
    return jobId.equals(summary.get(SnapshotSummaryKeys.JOB_ID))
        && operatorId.equals(summary.get(SnapshotSummaryKeys.OPERATOR_ID));
  }

  /**
   * Whether a snapshot is of run {@code runId}: any where that is null; else one that names the
   * run, or names none and is a checkpoint's commit, which every run under the job id counts. An
   * end of input that names no run, of a build before run ids, is no later run's own: taken for it,
   * every later run under the job id committed nothing.
   */
  private static boolean ofRun(Map<String, String> summary, String runId) {
    String run = summary.get(SnapshotSummaryKeys.RUN_ID);
    if (runId == null || run != null) {
      return runId == null || run.equals(runId);
    }
    return !Long.toString(TableCommitter.END_OF_INPUT_CHECKPOINT_ID)
        .equals(summary.get(SnapshotSummaryKeys.CHECKPOINT_ID));
  }

  /**
   * The snapshot of the current snapshot's ancestry that the given job and committer operator
   * committed checkpoint {@code checkpointId} in; null if there is none.
   */
  static Snapshot snapshotOf(Table table, String jobId, String operatorId, long checkpointId) {
    return snapshotOf(table, jobId, operatorId, checkpointId, null);
  }

  /**
   * As {@link #snapshotOf(Table, String, String, long)}, passing over the end-of-input commits of
   * other runs than {@code runId} ({@link SnapshotSummaryKeys#RUN_ID}); null for any run.
   */
  static Snapshot snapshotOf(
      Table table, String jobId, String operatorId, long checkpointId, String runId) {
    String checkpoint = Long.toString(checkpointId);
    for (Snapshot snapshot : SnapshotUtil.currentAncestors(table)) {
      Map<String, String> summary = snapshot.summary();
      if (checkpoint.equals(summary.get(SnapshotSummaryKeys.CHECKPOINT_ID))
          && committedBy(summary, jobId, operatorId)
          && ofRun(summary, runId)) {
        return snapshot;
      }
    }
    return null;
  }

  /**
   * A snapshot that the given job and committer operator committed for a checkpoint after {@code
   * checkpointId}, its latest in the current snapshot's ancestry, which the table still holds
   * outside that ancestry: the table was rolled back past it (or its branch replaced). Null if
   * there is none; another writer's commits rolled back do not count.
   */
  static Snapshot laterCommitOffTheCurrentLine(
      Table table, String jobId, String operatorId, long checkpointId) {
    java.util.Set<Long> line = new java.util.HashSet<>();
    for (Snapshot snapshot : SnapshotUtil.currentAncestors(table)) {
      line.add(snapshot.snapshotId());
    }
    for (Snapshot s : table.snapshots()) {
      Map<String, String> summary = s.summary();
      String checkpoint = summary.get(SnapshotSummaryKeys.CHECKPOINT_ID);
      if (checkpoint != null
          && !line.contains(s.snapshotId())
          && committedBy(summary, jobId, operatorId)
          && Long.parseLong(checkpoint) > checkpointId) {
        return s;
      }
    }
    return null;
  }

  /** Whether the table holds a snapshot of {@code operatorId} committed by another job. */
  static boolean committedByAnotherJob(Table table, String jobId, String operatorId) {
    for (Snapshot s : table.snapshots()) {
      Map<String, String> summary = s.summary();
      if (operatorId.equals(summary.get(SnapshotSummaryKeys.OPERATOR_ID))
          && !jobId.equals(summary.get(SnapshotSummaryKeys.JOB_ID))) {
        return true;
      }
    }
    return false;
  }

  /**
   * Whether the current snapshot's ancestry ends at a snapshot whose parent was expired: then a job
   * whose commits are not found may have committed before that point.
   */
  static boolean isTruncated(Table table) {
    Snapshot snapshot = table.currentSnapshot();
    while (snapshot != null) {
      Long parent = snapshot.parentId();
      if (parent == null) {
        return false;
      }
      Snapshot next = table.snapshot(parent);
      if (next == null) {
        return true;
      }
      snapshot = next;
    }
    return false;
  }
}
