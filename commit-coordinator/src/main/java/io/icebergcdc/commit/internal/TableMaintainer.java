package io.icebergcdc.commit.internal;

import io.icebergcdc.commit.MaintenancePolicy;
import io.icebergcdc.commit.SnapshotSummaryKeys;
import java.util.List;
import java.util.function.LongSupplier;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.exceptions.ValidationException;
import org.apache.iceberg.util.SnapshotUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the committer's table healthy between its commits ({@link MaintenancePolicy}): expires old
 * snapshots and the files only they referenced. It runs on the committer's thread, after a commit,
 * so it never races the job's own commits; a task that fails is logged, counted and tried again at
 * the next interval, and never fails the job.
 *
 * <p>What a restore of the job needs is never expired: the committer's latest snapshot, which its
 * idempotence check ({@link CommitHistory}) and the source position of a job started without state
 * read, is kept however old it is.
 */
final class TableMaintainer {

  private static final Logger LOG = LoggerFactory.getLogger(TableMaintainer.class);

  private final MaintenancePolicy policy;
  private final String operatorId;
  private final LongSupplier clock;
  private long lastRunMillis = Long.MIN_VALUE;
  private boolean expiryRefused;
  private long snapshotsExpired;
  private long failures;

  TableMaintainer(MaintenancePolicy policy, String operatorId, LongSupplier clock) {
    this.policy = policy;
    this.operatorId = operatorId;
    this.clock = clock;
  }

  void open(Table table) {
    if (!policy.any()) {
      return;
    }
    List<String> missing = MaintenancePolicy.missingMetadataRetention(table.properties());
    if (!missing.isEmpty()) {
      LOG.warn(
          "Table {} does not set {}: every commit writes a new metadata file, and without"
              + " these the old ones stay on storage for as long as the job runs. Set them with"
              + " ALTER TABLE ... SET or the catalog; tables this job creates have them.",
          table.name(),
          String.join(" and ", missing));
    }
  }

  /** Runs what is due after a commit; never throws. */
  void afterCommit(Table table) {
    if (!policy.any()) {
      return;
    }
    long now = clock.getAsLong();
    if (lastRunMillis != Long.MIN_VALUE && now - lastRunMillis < policy.interval().toMillis()) {
      return;
    }
    lastRunMillis = now;
    if (policy.expireSnapshots() && !expiryRefused) {
      expireSnapshots(table, now);
    }
  }

  /** Snapshots expired by this maintainer so far. */
  long snapshotsExpired() {
    return snapshotsExpired;
  }

  /** Maintenance runs that failed so far. */
  long failures() {
    return failures;
  }

  private void expireSnapshots(Table table, long now) {
    long olderThan = now - policy.snapshotMaxAge().toMillis();
    Snapshot ours = latestOfThisOperator(table);
    if (ours != null) {
      olderThan = Math.min(olderThan, ours.timestampMillis());
    }
    int before = count(table);
    try {
      List<Snapshot> expiring =
          table
              .expireSnapshots()
              .expireOlderThan(olderThan)
              .retainLast(policy.snapshotsRetained())
              .apply();
      if (expiring.isEmpty()) {
        return;
      }
      // Naming one of the snapshots that expire anyway makes Iceberg clean up by what the kept
      // snapshots reach, not incrementally by what the expired ones removed: one puffin file
      // holds the deletion vectors of many data files, and the incremental cleanup deletes it as
      // soon as one of them was replaced, while the others are still live.
      table
          .expireSnapshots()
          .expireOlderThan(olderThan)
          .retainLast(policy.snapshotsRetained())
          .expireSnapshotId(expiring.get(0).snapshotId())
          .cleanExpiredFiles(true)
          .commit();
    } catch (ValidationException e) {
      // gc.enabled=false: the table's owner keeps its files; say so once and stop asking.
      expiryRefused = true;
      LOG.warn(
          "Table {} refuses snapshot expiry; not trying again: {}", table.name(), e.getMessage());
      return;
    } catch (RuntimeException e) {
      failures++;
      LOG.warn(
          "Could not expire the old snapshots of table {} (tried again in {}): {}",
          table.name(),
          policy.interval(),
          e.toString());
      return;
    }
    table.refresh();
    int expired = Math.max(0, before - count(table));
    snapshotsExpired += expired;
    if (expired > 0) {
      LOG.info(
          "Expired {} snapshots of table {} older than {} ms ago, keeping at least {}",
          expired,
          table.name(),
          now - olderThan,
          policy.snapshotsRetained());
    }
  }

  private Snapshot latestOfThisOperator(Table table) {
    Snapshot current = table.currentSnapshot();
    if (current == null) {
      return null;
    }
    for (Snapshot s : SnapshotUtil.ancestorsOf(current.snapshotId(), table::snapshot)) {
      if (operatorId.equals(s.summary().get(SnapshotSummaryKeys.OPERATOR_ID))) {
        return s;
      }
    }
    return null;
  }

  private static int count(Table table) {
    int n = 0;
    for (Snapshot ignored : table.snapshots()) {
      n++;
    }
    return n;
  }
}
