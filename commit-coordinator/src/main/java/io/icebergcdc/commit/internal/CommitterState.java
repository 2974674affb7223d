package io.icebergcdc.commit.internal;

import io.icebergcdc.commit.ChangeCommittable;
import java.util.Collections;
import java.util.NavigableMap;
import java.util.Objects;
import java.util.TreeMap;

/**
 * The committer's checkpointed state: the job that wrote it, and the contributions of each
 * checkpoint that was snapshotted but not yet known to be committed, by checkpoint id.
 */
final class CommitterState {

  private final String jobId;
  private final NavigableMap<Long, ChangeCommittable> pending;

  CommitterState(String jobId, NavigableMap<Long, ChangeCommittable> pending) {
    this.jobId = Objects.requireNonNull(jobId, "jobId");
    this.pending = Collections.unmodifiableNavigableMap(new TreeMap<>(pending));
  }

  String jobId() {
    return jobId;
  }

  NavigableMap<Long, ChangeCommittable> pending() {
    return pending;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof CommitterState
        && jobId.equals(((CommitterState) o).jobId)
        && pending.equals(((CommitterState) o).pending);
  }

  @Override
  public int hashCode() {
    return Objects.hash(jobId, pending);
  }

  @Override
  public String toString() {
    return "job " + jobId + ", pending checkpoints " + pending.keySet();
  }
}
