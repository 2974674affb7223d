package io.icebergcdc.commit;

import java.io.Serializable;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.util.PropertyUtil;

/**
 * What the committer does after its commits to keep a table that it writes for months healthy.
 *
 * <p>The committer is the one place that sees every commit of the job, and it commits one at a
 * time: maintenance done there, between two commits, never races the stream's own commits for the
 * table's metadata, and needs no lock.
 *
 * @param expireSnapshots whether snapshots past {@code snapshotMaxAge} are expired (Iceberg's
 *     {@code ExpireSnapshots}, deleting the files only they referenced)
 * @param snapshotMaxAge how old a snapshot may get before it is expired
 * @param snapshotsRetained how many of the latest snapshots stay, however old
 * @param interval how often, at most, the maintenance runs: after the first commit once this much
 *     time has passed since the last run
 * @param removeOrphans whether files under the table's location that nothing references are deleted
 *     ({@link OrphanFiles}): those this job's writers and committer named ({@link OwnedFileNames})
 *     once no pending checkpoint can still commit them, any other once older than {@code
 *     orphanMinAge}
 * @param orphanMinAge how old an unreferenced file that this job did not write must be before it is
 *     deleted: older than any write still in flight (another engine's, or a job's that ran before
 *     this one without handing on its state)
 * @param orphanInterval how often, at most, the table's files are listed to look for orphans
 * @param restorePointMaxAge how long the latest snapshot of a committer's job is kept beyond {@code
 *     snapshotMaxAge} for the job's restore: a job that stops committing (stopped, or replaced by
 *     another committer) holds the table's history back no longer than this; restored later, it is
 *     refused rather than committing again
 */
public record MaintenancePolicy(
    boolean expireSnapshots,
    Duration snapshotMaxAge,
    int snapshotsRetained,
    Duration interval,
    boolean removeOrphans,
    Duration orphanMinAge,
    Duration orphanInterval,
    Duration restorePointMaxAge)
    implements Serializable {

  /**
   * Keep one hour of snapshots and at least ten, checked every minute: an hour covers a reader's
   * time travel over the last hour, a query planned on an older snapshot, and the restore of a job
   * from any checkpoint of that hour; at the default 10 s checkpoints that is 360 snapshots, and a
   * metadata file that stays about the same size whatever the table's age.
   */
  public static final MaintenancePolicy DEFAULT =
      new MaintenancePolicy(
          true,
          Duration.ofHours(1),
          10,
          Duration.ofMinutes(1),
          true,
          Duration.ofDays(3),
          Duration.ofHours(1),
          Duration.ofDays(7));

  /** No maintenance. */
  public static final MaintenancePolicy NONE =
      new MaintenancePolicy(
          false,
          Duration.ofHours(1),
          10,
          Duration.ofMinutes(1),
          false,
          Duration.ofDays(3),
          Duration.ofHours(1),
          Duration.ofDays(7));

  public MaintenancePolicy {
    if (snapshotMaxAge == null || snapshotMaxAge.isNegative()) {
      throw new IllegalArgumentException(
          "the snapshots' maximum age must be 0 or more, not " + snapshotMaxAge);
    }
    if (snapshotsRetained < 1) {
      throw new IllegalArgumentException(
          "at least one snapshot must be retained, not " + snapshotsRetained);
    }
    if (interval == null || interval.isNegative()) {
      throw new IllegalArgumentException(
          "the maintenance interval must be 0 or more, not " + interval);
    }
    if (orphanMinAge == null || orphanMinAge.isNegative()) {
      throw new IllegalArgumentException(
          "the minimum age of an orphan file must be 0 or more, not " + orphanMinAge);
    }
    if (orphanInterval == null || orphanInterval.isNegative()) {
      throw new IllegalArgumentException(
          "the interval of the orphan file removal must be 0 or more, not " + orphanInterval);
    }
    if (restorePointMaxAge == null || restorePointMaxAge.isNegative()) {
      throw new IllegalArgumentException(
          "the restore points' maximum age must be 0 or more, not " + restorePointMaxAge);
    }
  }

  /** This policy with orphan file removal as given. */
  public MaintenancePolicy withOrphanRemoval(boolean remove, Duration minAge, Duration every) {
    return new MaintenancePolicy(
        expireSnapshots,
        snapshotMaxAge,
        snapshotsRetained,
        interval,
        remove,
        minAge,
        every,
        restorePointMaxAge);
  }

  /**
   * The table properties that keep a long-running job's metadata files bounded, as {@code
   * key=value} advice, that {@code properties} lacks: a table this project creates has them; an
   * existing one is told about, not changed.
   */
  public static List<String> missingMetadataRetention(Map<String, String> properties) {
    List<String> missing = new ArrayList<>();
    if (!PropertyUtil.propertyAsBoolean(
        properties,
        TableProperties.METADATA_DELETE_AFTER_COMMIT_ENABLED,
        TableProperties.METADATA_DELETE_AFTER_COMMIT_ENABLED_DEFAULT)) {
      missing.add(TableProperties.METADATA_DELETE_AFTER_COMMIT_ENABLED + "=true");
    }
    if (!properties.containsKey(TableProperties.METADATA_PREVIOUS_VERSIONS_MAX)) {
      missing.add(
          TableProperties.METADATA_PREVIOUS_VERSIONS_MAX
              + " (Iceberg keeps "
              + TableProperties.METADATA_PREVIOUS_VERSIONS_MAX_DEFAULT
              + " metadata files by default)");
    }
    return missing;
  }

  /** Whether any maintenance task is on. */
  public boolean any() {
    return expireSnapshots || removeOrphans;
  }
}
