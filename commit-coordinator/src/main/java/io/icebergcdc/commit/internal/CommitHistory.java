package io.icebergcdc.commit.internal;

import io.icebergcdc.commit.SnapshotSummaryKeys;
import java.util.Map;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;

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
    Snapshot snapshot = table.currentSnapshot();
    while (snapshot != null) {
      Map<String, String> summary = snapshot.summary();
      if (jobId.equals(summary.get(SnapshotSummaryKeys.JOB_ID))
          && operatorId.equals(summary.get(SnapshotSummaryKeys.OPERATOR_ID))) {
        String checkpoint = summary.get(SnapshotSummaryKeys.CHECKPOINT_ID);
        if (checkpoint != null) {
          return Long.parseLong(checkpoint);
        }
      }
      Long parent = snapshot.parentId();
      snapshot = parent == null ? null : table.snapshot(parent);
    }
    return NONE;
  }
}
