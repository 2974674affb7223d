package io.icebergcdc.bench.chaos;

import io.icebergcdc.commit.CommitListener;
import org.apache.iceberg.Snapshot;

/**
 * Fails the committer just before or just after an Iceberg commit when armed ({@link Injection}).
 */
public final class ChaosListener implements CommitListener {

  private static final long serialVersionUID = 1L;

  @Override
  public void beforeCommit(long checkpointId) {
    Injection.failIfArmed("before-commit", "before committing checkpoint " + checkpointId);
  }

  @Override
  public void afterCommit(long checkpointId, Snapshot snapshot) {
    Injection.failIfArmed(
        "after-commit",
        "after committing checkpoint " + checkpointId + " as snapshot " + snapshot.snapshotId());
  }
}
