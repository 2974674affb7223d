package io.icebergcdc.commit.internal;

import io.icebergcdc.cdc.ChangeStats;
import io.icebergcdc.commit.CommitException;
import io.icebergcdc.commit.CommitListener;
import io.icebergcdc.commit.SnapshotSummaryKeys;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SnapshotSummary;
import org.apache.iceberg.Table;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What follows each checkpoint a {@link SnapshotCommitter} committed, once per checkpoint: for one
 * it made, its log line; the committer's metrics; the commit listener; then, unless told not to,
 * the maintenance of the table (which also runs on a restore that finds everything committed).
 *
 * <p><b>Threading:</b> one thread at a time, as its {@link SnapshotCommitter}.
 */
final class CommitReports {

  // The committer's log lines, under the committer's name as before.
  private static final Logger LOG = LoggerFactory.getLogger(SnapshotCommitter.class);

  private final CommitListener listener;
  private final CommitterMetrics metrics;
  private final TableMaintainer maintainer;
  private final String sinkTag;

  /** The jobs whose files the committer answers for: its own, and those it restored. */
  private final java.util.Map<String, Long> fileOwners;

  /** The files of the checkpoints not committed yet, which the orphan removal keeps. */
  private final Supplier<Set<String>> filesToCommit;

  CommitReports(
      CommitListener listener,
      CommitterMetrics metrics,
      TableMaintainer maintainer,
      String sinkTag,
      java.util.Map<String, Long> fileOwners,
      Supplier<Set<String>> filesToCommit) {
    this.listener = listener;
    this.metrics = metrics;
    this.maintainer = maintainer;
    this.sinkTag = sinkTag;
    this.fileOwners = fileOwners;
    this.filesToCommit = filesToCommit;
  }

  /**
   * Tells of a commit an attempt made, as {@code snapshot} of {@code table}, taking {@code
   * durationMs} (0 for one found committed after a lost answer in one transaction of several
   * tables): its log line, metrics and listener; the maintenance runs after it where {@code
   * maintain}.
   */
  void made(
      Table table,
      SnapshotCommitter.Attempt made,
      Snapshot snapshot,
      long durationMs,
      boolean maintain) {
    long checkpointId = made.checkpointId();
    PreparedCommit prepared = made.prepared();
    LOG.info(
        "Committed {} of job {} to table {} as snapshot {} in {} ms: {} data files,"
            + " {} delete files ({} deletes fell back to equality deletes), {}",
        TableCommitter.describe(checkpointId),
        made.commitJobId(),
        table.name(),
        snapshot.snapshotId(),
        durationMs,
        prepared.dataFiles.size(),
        prepared.addedDeletes.size(),
        prepared.fellBack,
        made.stats());
    metrics.committed(
        checkpointId,
        durationMs,
        prepared.dataFiles.size(),
        prepared.addedDeletes.size(),
        prepared.fellBack,
        made.stats());
    toldListener(checkpointId, snapshot);
    if (maintain) {
      maintainAfter(table, checkpointId);
    }
  }

  /**
   * Tells of checkpoint {@code checkpointId}, found committed as {@code snapshot} by an attempt
   * whose answer was lost (which the committer logged when it found it): its metrics, the files
   * counted from the snapshot's summary, and listener; then the maintenance.
   */
  void found(Table table, long checkpointId, Snapshot snapshot, ChangeStats stats) {
    Map<String, String> summary = snapshot.summary();
    metrics.committed(
        checkpointId,
        0,
        (int) count(summary, SnapshotSummary.ADDED_FILES_PROP),
        (int) count(summary, SnapshotSummary.ADDED_DELETE_FILES_PROP),
        count(summary, SnapshotSummaryKeys.DELETES_FELL_BACK),
        stats);
    toldListener(checkpointId, snapshot);
    maintainAfter(table, checkpointId);
  }

  /**
   * Runs the maintenance due once the checkpoints up to {@code committedUpTo} are committed: after
   * each commit, and on a restore that finds everything committed already. Never throws.
   */
  void maintainAfter(Table table, long committedUpTo) {
    maintainer.afterCommit(
        table, new OrphanRemoval.HandedFiles(committedUpTo, fileOwners, sinkTag, filesToCommit));
  }

  private void toldListener(long checkpointId, Snapshot snapshot) {
    try {
      listener.afterCommit(checkpointId, snapshot);
    } catch (Exception e) {
      throw new CommitException(
          "the commit listener failed after checkpoint " + checkpointId + " was committed", e);
    }
  }

  private static long count(Map<String, String> summary, String key) {
    try {
      return Long.parseLong(summary.getOrDefault(key, "0"));
    } catch (NumberFormatException e) {
      return 0;
    }
  }
}
