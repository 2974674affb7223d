package io.icebergcdc.commit.internal;

import io.icebergcdc.commit.MaintenancePolicy;
import io.icebergcdc.commit.OrphanFiles;
import io.icebergcdc.commit.SnapshotSummaryKeys;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.LongSupplier;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.exceptions.ValidationException;
import org.apache.iceberg.util.PropertyUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the committer's table healthy between its commits ({@link MaintenancePolicy}): expires old
 * snapshots and the files only they referenced, and removes orphan files ({@link OrphanRemoval}).
 * It runs on the committer's thread, after a commit, so it never races the job's own commits; a
 * task that fails is logged, counted and tried again at the next interval, and never fails the job.
 *
 * <p>What a restore needs is never expired ({@link #restorePoints}): the latest snapshot of each of
 * the recent jobs of every committer, which the idempotence check ({@link CommitHistory}) reads,
 * and the snapshots after the oldest of them.
 */
final class TableMaintainer {

  private static final Logger LOG = LoggerFactory.getLogger(TableMaintainer.class);

  private final MaintenancePolicy policy;
  private final LongSupplier clock;
  private long lastRunMillis = Long.MIN_VALUE;
  private long lastOrphanRunMillis = Long.MIN_VALUE;
  private boolean expiryRefused;
  private boolean orphanRemovalRefused;
  private long snapshotsExpired;
  private long orphanFilesDeleted;
  private long failures;

  TableMaintainer(MaintenancePolicy policy, LongSupplier clock) {
    this.policy = policy;
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
  void afterCommit(Table table, OrphanRemoval.HandedFiles handed) {
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
    if (policy.removeOrphans()
        && !orphanRemovalRefused
        && (lastOrphanRunMillis == Long.MIN_VALUE
            || now - lastOrphanRunMillis >= policy.orphanInterval().toMillis())) {
      lastOrphanRunMillis = now;
      removeOrphans(table, handed, now);
    }
  }

  private void removeOrphans(Table table, OrphanRemoval.HandedFiles handed, long now) {
    if (!PropertyUtil.propertyAsBoolean(
        table.properties(), TableProperties.GC_ENABLED, TableProperties.GC_ENABLED_DEFAULT)) {
      orphanRemovalRefused = true;
      LOG.warn("Table {} has gc.enabled=false: its orphan files are left alone", table.name());
      return;
    }
    if (!OrphanFiles.canList(table)) {
      orphanRemovalRefused = true;
      LOG.warn(
          "The file IO of table {} ({}) cannot list files: orphan files are not removed",
          table.name(),
          table.io().getClass().getName());
      return;
    }
    try {
      OrphanRemoval.Result result = OrphanRemoval.run(table, handed, policy.orphanMinAge(), now);
      orphanFilesDeleted += result.deleted();
      if (result.deleteFailures() > 0) {
        failures++;
      }
    } catch (RuntimeException e) {
      failures++;
      LOG.warn(
          "Could not look for the orphan files of table {} (tried again in {}): {}",
          table.name(),
          policy.orphanInterval(),
          e.toString());
    }
  }

  /** Orphan files deleted by this maintainer so far. */
  long orphanFilesDeleted() {
    return orphanFilesDeleted;
  }

  /** Snapshots expired by this maintainer so far. */
  long snapshotsExpired() {
    return snapshotsExpired;
  }

  /** Maintenance runs that failed so far. */
  long failures() {
    return failures;
  }

  /** The latest snapshot of how many of each committer's most recent jobs are always kept. */
  static final int JOBS_KEPT_PER_COMMITTER = 5;

  private void expireSnapshots(Table table, long now) {
    long olderThan = now - policy.snapshotMaxAge().toMillis();
    try {
      int before = count(table);
      Set<Long> kept = restorePoints(table);
      for (long id : kept) {
        // Everything from the oldest restore point on stays: it, and what is newer.
        olderThan = Math.min(olderThan, table.snapshot(id).timestampMillis());
      }
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
      table.refresh();
      int expired = Math.max(0, before - count(table));
      snapshotsExpired += expired;
      LOG.info(
          "Expired {} snapshots of table {} older than {}, keeping at least {} and {} restore"
              + " points",
          expired,
          table.name(),
          policy.snapshotMaxAge(),
          policy.snapshotsRetained(),
          kept.size());
    } catch (ValidationException e) {
      // gc.enabled=false: the table's owner keeps its files; say so once and stop asking.
      expiryRefused = true;
      LOG.warn(
          "Table {} refuses snapshot expiry; not trying again: {}", table.name(), e.getMessage());
    } catch (RuntimeException e) {
      failures++;
      LOG.warn(
          "Could not expire the old snapshots of table {} (tried again in {}): {}",
          table.name(),
          policy.interval(),
          e.toString());
    }
  }

  /**
   * The snapshots a restore reads ({@link CommitHistory}): of every committer of this project that
   * wrote the table, the latest snapshot of each of its {@value #JOBS_KEPT_PER_COMMITTER} most
   * recent jobs, so that a job restored from its checkpoint or savepoint finds what it committed,
   * whoever committed after it.
   */
  static Set<Long> restorePoints(Table table) {
    // Per committer, per job: the job's latest snapshot.
    Map<String, Map<String, Snapshot>> latest = new HashMap<>();
    for (Snapshot s : table.snapshots()) {
      String operator = s.summary().get(SnapshotSummaryKeys.OPERATOR_ID);
      String job = s.summary().get(SnapshotSummaryKeys.JOB_ID);
      if (operator == null || job == null) {
        continue;
      }
      latest
          .computeIfAbsent(operator, o -> new HashMap<>())
          .merge(job, s, (a, b) -> a.sequenceNumber() >= b.sequenceNumber() ? a : b);
    }
    Set<Long> kept = new HashSet<>();
    for (Map<String, Snapshot> jobs : latest.values()) {
      jobs.values().stream()
          .sorted(Comparator.comparingLong(Snapshot::sequenceNumber).reversed())
          .limit(JOBS_KEPT_PER_COMMITTER)
          .forEach(s -> kept.add(s.snapshotId()));
    }
    return kept;
  }

  private static int count(Table table) {
    int n = 0;
    for (Snapshot ignored : table.snapshots()) {
      n++;
    }
    return n;
  }
}
