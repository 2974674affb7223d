package io.icebergcdc.commit.internal;

import io.icebergcdc.cdc.ChangeStats;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.MetricGroup;

/** The committer's metrics, in its operator metric group. */
final class CommitterMetrics {

  private final Counter checkpointsCommitted;
  private final Counter dataFilesCommitted;
  private final Counter deleteFilesCommitted;
  private final Counter rowsInserted;
  private final Counter rowsUpdated;
  private final Counter rowsDeleted;
  private final Counter staleDropped;
  private final Counter duplicatesDropped;
  private final Counter deadLettered;
  private final Counter deletesFellBack;
  private volatile long lastCommittedCheckpointId = -1L;
  private volatile long lastCommitDurationMs = -1L;

  CommitterMetrics(MetricGroup group, TableMaintainer maintainer) {
    group.gauge("snapshotsExpired", maintainer::snapshotsExpired);
    group.gauge("maintenanceFailures", maintainer::failures);
    group.gauge("orphanFilesDeleted", maintainer::orphanFilesDeleted);
    checkpointsCommitted = group.counter("checkpointsCommitted");
    dataFilesCommitted = group.counter("dataFilesCommitted");
    deleteFilesCommitted = group.counter("deleteFilesCommitted");
    rowsInserted = group.counter("rowsInserted");
    rowsUpdated = group.counter("rowsUpdated");
    rowsDeleted = group.counter("rowsDeleted");
    staleDropped = group.counter("staleChangesDropped");
    duplicatesDropped = group.counter("duplicateChangesDropped");
    deadLettered = group.counter("deadLetteredChanges");
    deletesFellBack = group.counter("deletesFellBackToEquality");
    group.gauge("lastCommittedCheckpointId", () -> lastCommittedCheckpointId);
    group.gauge("lastCommitDurationMs", () -> lastCommitDurationMs);
  }

  void committed(
      long checkpointId,
      long durationMs,
      int dataFiles,
      int deleteFiles,
      long fellBack,
      ChangeStats stats) {
    deletesFellBack.inc(fellBack);
    checkpointsCommitted.inc();
    dataFilesCommitted.inc(dataFiles);
    deleteFilesCommitted.inc(deleteFiles);
    rowsInserted.inc(stats.inserted());
    rowsUpdated.inc(stats.updated());
    rowsDeleted.inc(stats.deleted());
    staleDropped.inc(stats.staleDropped());
    duplicatesDropped.inc(stats.duplicatesDropped());
    deadLettered.inc(stats.deadLettered());
    lastCommittedCheckpointId = checkpointId;
    lastCommitDurationMs = durationMs;
  }
}
