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

  /** Whether the table's gc.enabled=false was warned of: once each time it is turned off. */
  private boolean gcOffWarned;

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
    if (!gcEnabled(table)) {
      // The table's owner keeps its files, for now: asked again at every run.
      return;
    }
    if (policy.expireSnapshots()) {
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

  /** Whether the table lets its files be deleted; warns once each time it turns that off. */
  private boolean gcEnabled(Table table) {
    boolean enabled =
        PropertyUtil.propertyAsBoolean(
            table.properties(), TableProperties.GC_ENABLED, TableProperties.GC_ENABLED_DEFAULT);
    if (!enabled && !gcOffWarned) {
      LOG.warn(
          "Table {} has gc.enabled=false: its snapshots are not expired and its orphan files are"
              + " left alone while it has",
          table.name());
    }
    gcOffWarned = !enabled;
    return enabled;
  }

  private void removeOrphans(Table table, OrphanRemoval.HandedFiles handed, long now) {
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
      Set<Long> kept = restorePoints(table, now - policy.restorePointMaxAge().toMillis());
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
   * whoever committed after it; but none committed before {@code notBeforeMillis}, so that a
   * committer that no longer commits does not hold the history back for ever. Snapshots are ordered
   * as the table's metadata lists them, in the order of their commits (the sequence numbers of a
   * table of format version 1 are all 0).
   */
  static Set<Long> restorePoints(Table table, long notBeforeMillis) {
    // Per committer, per job: the job's latest snapshot, and its place in the table's log.
    Map<String, Map<String, Integer>> latest = new HashMap<>();
    List<Snapshot> log = new java.util.ArrayList<>();
    for (Snapshot s : table.snapshots()) {
      log.add(s);
      String operator = s.summary().get(SnapshotSummaryKeys.OPERATOR_ID);
      String job = s.summary().get(SnapshotSummaryKeys.JOB_ID);
      if (operator == null || job == null || s.timestampMillis() < notBeforeMillis) {
        continue;
      }
      latest.computeIfAbsent(operator, o -> new HashMap<>()).put(job, log.size() - 1);
    }
    Set<Long> kept = new HashSet<>();
    for (Map<String, Integer> jobs : latest.values()) {
      jobs.values().stream()
          .sorted(Comparator.reverseOrder())
          .limit(JOBS_KEPT_PER_COMMITTER)
          .forEach(place -> kept.add(log.get(place).snapshotId()));
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
