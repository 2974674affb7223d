package io.icebergcdc.commit.internal;

import io.icebergcdc.commit.ChangeCommittable;
import java.util.Collections;
import java.util.NavigableMap;
import java.util.Objects;
import java.util.TreeMap;

/**
 * The committer's checkpointed state: the job that wrote it, the table it commits to (its UUID),
 * and the contributions of each checkpoint that was snapshotted but not yet known to be committed,
 * by checkpoint id.
 */
final class CommitterState {

  private final String jobId;
  private final String tableUuid;
  private final NavigableMap<Long, ChangeCommittable> pending;

  CommitterState(String jobId, String tableUuid, NavigableMap<Long, ChangeCommittable> pending) {
    this.jobId = Objects.requireNonNull(jobId, "jobId");
    this.tableUuid = tableUuid;
    this.pending = Collections.unmodifiableNavigableMap(new TreeMap<>(pending));
  }

  String jobId() {
    return jobId;
  }

  /** The UUID of the table the pending checkpoints belong to; null in state of version 1. */
  String tableUuid() {
    return tableUuid;
  }

  NavigableMap<Long, ChangeCommittable> pending() {
    return pending;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof CommitterState
        && jobId.equals(((CommitterState) o).jobId)
        && Objects.equals(tableUuid, ((CommitterState) o).tableUuid)
        && pending.equals(((CommitterState) o).pending);
  }

  @Override
  public int hashCode() {
    return Objects.hash(jobId, tableUuid, pending);
  }

  @Override
  public String toString() {
    return "job " + jobId + ", table " + tableUuid + ", pending checkpoints " + pending.keySet();
  }
}
