package io.icebergcdc.commit;

import java.io.Serializable;
import org.apache.iceberg.Snapshot;

/**
 * Hears about each commit, on the committer's task thread (a committer of several tables calls a
 * copy of its own for each table, on one of its commit threads): to notify other systems of new
 * snapshots, or, in tests, to fail at exactly the points where a commit can be interrupted. An
 * exception thrown here fails the job like a failed commit would.
 */
public interface CommitListener extends Serializable {

  /** Called just before the commit of a checkpoint is attempted. */
  default void beforeCommit(long checkpointId) throws Exception {}

  /** Called once the checkpoint's snapshot is committed, before the committer forgets it. */
  default void afterCommit(long checkpointId, Snapshot snapshot) throws Exception {}

  /**
   * Called instead of a commit when a load's write id was published before, by {@code snapshot}:
   * this attempt commits nothing.
   */
  default void alreadyPublished(String writeId, Snapshot snapshot) throws Exception {}
}
