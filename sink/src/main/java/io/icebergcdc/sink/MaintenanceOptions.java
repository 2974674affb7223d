package io.icebergcdc.sink;

import io.icebergcdc.commit.MaintenancePolicy;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.util.PropertyUtil;

/**
 * Options of the maintenance the committer does after its commits ({@link MaintenancePolicy}), the
 * same for the job jar's commands (as {@code --maintenance-...} flags) and the SQL connector.
 */
public final class MaintenanceOptions {

  private MaintenanceOptions() {}

  public static final ConfigOption<Boolean> EXPIRE_SNAPSHOTS =
      ConfigOptions.key("maintenance.expire-snapshots.enabled")
          .booleanType()
          .defaultValue(true)
          .withDescription(
              "Whether the committer expires old snapshots after its commits (Iceberg's"
                  + " ExpireSnapshots), deleting the files that only they referenced. What a"
                  + " restore reads is always kept: the latest snapshot of each of the five most"
                  + " recent jobs of every committer of the table, and the snapshots after the"
                  + " oldest of them. A table with gc.enabled=false is left alone.");

  public static final ConfigOption<Duration> SNAPSHOT_MAX_AGE =
      ConfigOptions.key("maintenance.expire-snapshots.max-age")
          .durationType()
          .defaultValue(MaintenancePolicy.DEFAULT.snapshotMaxAge())
          .withDescription(
              "How old a snapshot may get before it is expired: readers can travel back that"
                  + " far. Unset, the table's history.expire.max-snapshot-age-ms where it has"
                  + " one, else 1 h.");

  public static final ConfigOption<Integer> SNAPSHOTS_RETAINED =
      ConfigOptions.key("maintenance.expire-snapshots.retain-last")
          .intType()
          .defaultValue(MaintenancePolicy.DEFAULT.snapshotsRetained())
          .withDescription(
              "How many of the latest snapshots are kept however old. Unset, the table's"
                  + " history.expire.min-snapshots-to-keep where it has one, else 10.");

  public static final ConfigOption<Duration> RESTORE_POINT_MAX_AGE =
      ConfigOptions.key("maintenance.expire-snapshots.restore-points-max-age")
          .durationType()
          .defaultValue(MaintenancePolicy.DEFAULT.restorePointMaxAge())
          .withDescription(
              "How long the latest snapshot of each recent job of every committer of the table"
                  + " is kept for that job's restore, and the snapshots after it: a job that"
                  + " stopped committing (stopped, or its table taken over by another committer)"
                  + " holds the history back no longer than this. Restored later from its"
                  + " checkpoint or savepoint, its commits no longer in the history, it is refused"
                  + " with a message rather than committing again.");

  public static final ConfigOption<Duration> INTERVAL =
      ConfigOptions.key("maintenance.interval")
          .durationType()
          .defaultValue(MaintenancePolicy.DEFAULT.interval())
          .withDescription(
              "How often, at most, the committer runs its maintenance: after the first commit"
                  + " this long after the last run. A task that fails is logged, counted in the"
                  + " committer's maintenanceFailures metric and tried again then.");

  public static final ConfigOption<Boolean> REMOVE_ORPHANS =
      ConfigOptions.key("maintenance.remove-orphans.enabled")
          .booleanType()
          .defaultValue(true)
          .withDescription(
              "Whether the committer deletes the files under the table's location that no"
                  + " snapshot or metadata file references: the files its writers and itself"
                  + " named for a checkpoint it has committed (left by attempts that failed) at"
                  + " once, any other once older than maintenance.remove-orphans.older-than. A"
                  + " file a pending checkpoint holds is never deleted; a table with"
                  + " gc.enabled=false is left alone.");

  public static final ConfigOption<Duration> ORPHAN_MIN_AGE =
      ConfigOptions.key("maintenance.remove-orphans.older-than")
          .durationType()
          .defaultValue(MaintenancePolicy.DEFAULT.orphanMinAge())
          .withDescription(
              "How old an unreferenced file that this job did not write must be before it is"
                  + " deleted: longer than any other writer's write of the table may take"
                  + " (Iceberg's own orphan removal defaults to 3 days too).");

  public static final ConfigOption<Duration> ORPHAN_INTERVAL =
      ConfigOptions.key("maintenance.remove-orphans.interval")
          .durationType()
          .defaultValue(MaintenancePolicy.DEFAULT.orphanInterval())
          .withDescription(
              "How often, at most, the committer lists the table's files and reads the"
                  + " manifests of its snapshots to find orphans.");

  /** Every maintenance option. */
  public static List<ConfigOption<?>> all() {
    return List.of(
        EXPIRE_SNAPSHOTS,
        SNAPSHOT_MAX_AGE,
        SNAPSHOTS_RETAINED,
        RESTORE_POINT_MAX_AGE,
        INTERVAL,
        REMOVE_ORPHANS,
        ORPHAN_MIN_AGE,
        ORPHAN_INTERVAL);
  }

  /** Fails on a value out of range, naming the option. */
  static void validate(Configuration config) {
    Duration age = config.get(SNAPSHOT_MAX_AGE);
    if (age.isNegative()) {
      throw new IllegalArgumentException(
          "option '" + SNAPSHOT_MAX_AGE.key() + "' is " + age + "; it must be 0 or more");
    }
    int retained = config.get(SNAPSHOTS_RETAINED);
    if (retained < 1) {
      throw new IllegalArgumentException(
          "option '"
              + SNAPSHOTS_RETAINED.key()
              + "' is "
              + retained
              + "; at least 1 snapshot must be kept");
    }
    for (ConfigOption<Duration> option :
        List.of(RESTORE_POINT_MAX_AGE, INTERVAL, ORPHAN_MIN_AGE, ORPHAN_INTERVAL)) {
      Duration value = config.get(option);
      if (value.isNegative()) {
        throw new IllegalArgumentException(
            "option '" + option.key() + "' is " + value + "; it must be 0 or more");
      }
    }
  }

  /**
   * The policy of {@code config}, where an option that is not set takes the table's own property
   * ({@code history.expire.*}) before this project's default.
   */
  public static MaintenancePolicy policy(
      Configuration config, Map<String, String> tableProperties) {
    Duration age =
        config.contains(SNAPSHOT_MAX_AGE)
            ? config.get(SNAPSHOT_MAX_AGE)
            : Duration.ofMillis(
                PropertyUtil.propertyAsLong(
                    tableProperties,
                    TableProperties.MAX_SNAPSHOT_AGE_MS,
                    SNAPSHOT_MAX_AGE.defaultValue().toMillis()));
    int retained =
        config.contains(SNAPSHOTS_RETAINED)
            ? config.get(SNAPSHOTS_RETAINED)
            : PropertyUtil.propertyAsInt(
                tableProperties,
                TableProperties.MIN_SNAPSHOTS_TO_KEEP,
                SNAPSHOTS_RETAINED.defaultValue());
    return new MaintenancePolicy(
        config.get(EXPIRE_SNAPSHOTS),
        age,
        Math.max(1, retained),
        config.get(INTERVAL),
        config.get(REMOVE_ORPHANS),
        config.get(ORPHAN_MIN_AGE),
        config.get(ORPHAN_INTERVAL),
        config.get(RESTORE_POINT_MAX_AGE));
  }
}
