package io.icebergcdc.jobs.cli;

import io.icebergcdc.dedup.AmbiguousChangePolicy;
import io.icebergcdc.dedup.DedupOptions;
import io.icebergcdc.jobs.Checkpoints;
import io.icebergcdc.jobs.definition.RuntimeDefinition;
import io.icebergcdc.jobs.pipeline.RuntimeTranslator;
import io.icebergcdc.sink.DeleteMode;
import io.icebergcdc.sink.Distribution;
import io.icebergcdc.sink.MaintenanceOptions;
import io.icebergcdc.sink.SinkOptions;
import java.net.URI;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.configuration.ReadableConfig;

/**
 * The flags of every job: the sink's and dedup's options (named from their keys), and how the job
 * runs (parallelism, checkpoints, state backend, restore).
 */
final class JobFlags {

  private JobFlags() {}

  /** Flink's smallest checkpoint interval. */
  private static final Duration MIN_CHECKPOINT_INTERVAL = Duration.ofMillis(10);

  /**
   * How often a job on its embedded Flink restarts from its last checkpoint after a failure (a lost
   * database connection, an unreachable catalog) before it gives up and reports the error.
   */
  static final int RESTART_ATTEMPTS = 3;

  private static final List<ConfigOption<?>> SINK_OPTIONS =
      List.of(
          SinkOptions.DISTRIBUTION,
          SinkOptions.DELETE_MODE,
          SinkOptions.BOOTSTRAP_INDEX,
          SinkOptions.COMPACTION_DELETED_RATIO,
          SinkOptions.COMPACTION_CACHE_SIZE,
          SinkOptions.COMPACTION_SMALL_FILE_SIZE,
          SinkOptions.COMMIT_CATALOG_RETRY_TIMEOUT,
          SinkOptions.COMMIT_ATOMIC_ACROSS_TABLES,
          DedupOptions.TOMBSTONE_TTL,
          DedupOptions.ON_AMBIGUOUS_CHANGE,
          DedupOptions.INDEX_MAX_KEYS,
          DedupOptions.IGNORE_TABLE_POSITION,
          MaintenanceOptions.EXPIRE_SNAPSHOTS,
          MaintenanceOptions.SNAPSHOT_MAX_AGE,
          MaintenanceOptions.SNAPSHOTS_RETAINED,
          MaintenanceOptions.RESTORE_POINT_MAX_AGE,
          MaintenanceOptions.INTERVAL,
          MaintenanceOptions.REMOVE_ORPHANS,
          MaintenanceOptions.ORPHAN_MIN_AGE,
          MaintenanceOptions.ORPHAN_INTERVAL);

  static final List<Flag> SINK =
      List.of(
          Flag.of(SinkOptions.DISTRIBUTION, "primary_key|partition").defaultInDescription(),
          Flag.of(SinkOptions.DELETE_MODE, "position|equality"),
          Flag.of(SinkOptions.BOOTSTRAP_INDEX, "true|false"),
          Flag.of(SinkOptions.COMPACTION_DELETED_RATIO, "<0..1>"),
          Flag.of(SinkOptions.COMPACTION_CACHE_SIZE, "<size>"),
          Flag.of(SinkOptions.COMPACTION_SMALL_FILE_SIZE, "<size>"),
          Flag.of(SinkOptions.COMMIT_CATALOG_RETRY_TIMEOUT, "<duration>"),
          Flag.of(SinkOptions.COMMIT_ATOMIC_ACROSS_TABLES, "true|false"),
          Flag.of(DedupOptions.TOMBSTONE_TTL, "<duration>"),
          Flag.of(DedupOptions.ON_AMBIGUOUS_CHANGE, "fail|dead_letter"),
          Flag.of(DedupOptions.INDEX_MAX_KEYS, "<N>"),
          Flag.of(DedupOptions.IGNORE_TABLE_POSITION, "true|false"));

  static final List<Flag> MAINTENANCE =
      List.of(
          Flag.of(MaintenanceOptions.EXPIRE_SNAPSHOTS, "true|false"),
          Flag.of(MaintenanceOptions.SNAPSHOT_MAX_AGE, "<duration>").defaultInDescription(),
          Flag.of(MaintenanceOptions.SNAPSHOTS_RETAINED, "<N>").defaultInDescription(),
          Flag.of(MaintenanceOptions.RESTORE_POINT_MAX_AGE, "<duration>"),
          Flag.of(MaintenanceOptions.INTERVAL, "<duration>"),
          Flag.of(MaintenanceOptions.REMOVE_ORPHANS, "true|false"),
          Flag.of(MaintenanceOptions.ORPHAN_MIN_AGE, "<duration>"),
          Flag.of(MaintenanceOptions.ORPHAN_INTERVAL, "<duration>"));

  static final List<Flag> RUNTIME =
      List.of(
          Flag.of("parallelism", "<N>", "The parallelism of dedup and writers.", 2),
          Flag.of(
              "checkpoint-interval",
              "<duration>",
              "How often the job checkpoints, and so commits.",
              "10s"),
          Flag.of(
              "checkpoint-dir",
              "<dir or uri>",
              "Where checkpoints are kept (s3://... with Flink's S3 file system plugin). Default:"
                  + " the cluster's execution.checkpointing.dir, or a temporary directory when"
                  + " embedded."),
          Flag.of(
              "state-backend",
              "hashmap|rocksdb",
              "Flink's state backend. Default: the cluster's, or hashmap when embedded."),
          Flag.of(
              "restore-from",
              "<checkpoint>|latest",
              "Resume from a checkpoint or savepoint; latest is the newest completed checkpoint in"
                  + " --checkpoint-dir."),
          Flag.of(
              "allow-non-restored-state",
              "true|false",
              "With --restore-from: let state that no operator of the job claims go (as flink run"
                  + " -n), such as the per-table committers of earlier builds after a stop with a"
                  + " savepoint.",
              false),
          Flag.of(
              "dead-letter-path",
              "<dir or uri>",
              "Write records that cannot be applied there as JSON lines, instead of failing the"
                  + " job."));

  /** The sink and dedup options of the flags, checked. */
  static Configuration sinkOptions(Arguments args) {
    Configuration options = new Configuration();
    Distribution distribution = args.enumValue("distribution", Distribution.class);
    if (distribution != null) {
      options.set(SinkOptions.DISTRIBUTION, distribution);
    }
    DeleteMode deleteMode = args.enumValue("delete-mode", DeleteMode.class);
    if (deleteMode != null) {
      options.set(SinkOptions.DELETE_MODE, deleteMode);
    }
    Boolean bootstrap = args.bool("bootstrap-index");
    if (bootstrap != null) {
      options.set(SinkOptions.BOOTSTRAP_INDEX, bootstrap);
    }
    String ratio = args.optional("compaction-deleted-ratio", null);
    if (ratio != null) {
      try {
        options.set(SinkOptions.COMPACTION_DELETED_RATIO, Double.parseDouble(ratio.trim()));
      } catch (NumberFormatException e) {
        throw args.invalid("compaction-deleted-ratio", ratio, "a number above 0");
      }
    }
    MemorySize cacheSize = args.size("compaction-cache-size", "64mb", true);
    if (cacheSize != null) {
      options.set(SinkOptions.COMPACTION_CACHE_SIZE, cacheSize);
    }
    MemorySize smallFileSize = args.size("compaction-small-file-size", "32mb", true);
    if (smallFileSize != null) {
      options.set(SinkOptions.COMPACTION_SMALL_FILE_SIZE, smallFileSize);
    }
    if (args.has("commit-catalog-retry-timeout")) {
      options.set(
          SinkOptions.COMMIT_CATALOG_RETRY_TIMEOUT,
          args.duration("commit-catalog-retry-timeout", null));
    }
    Boolean atomic = args.bool("commit-atomic-across-tables");
    if (atomic != null) {
      options.set(SinkOptions.COMMIT_ATOMIC_ACROSS_TABLES, atomic);
    }
    if (args.has("tombstone-ttl")) {
      options.set(DedupOptions.TOMBSTONE_TTL, args.duration("tombstone-ttl", null));
    }
    AmbiguousChangePolicy ambiguous =
        args.enumValue("on-ambiguous-change", AmbiguousChangePolicy.class);
    if (ambiguous != null) {
      options.set(DedupOptions.ON_AMBIGUOUS_CHANGE, ambiguous);
    }
    if (args.has("index-max-keys")) {
      options.set(DedupOptions.INDEX_MAX_KEYS, args.longValue("index-max-keys", 0));
    }
    Boolean ignorePosition = args.bool("ignore-table-position");
    if (ignorePosition != null) {
      options.set(DedupOptions.IGNORE_TABLE_POSITION, ignorePosition);
    }
    maintenanceOptions(args, options);
    try {
      SinkOptions.validate(options);
    } catch (IllegalArgumentException e) {
      throw new Arguments.UsageException(args.command() + ": " + withFlagNames(e.getMessage()));
    }
    return options;
  }

  private static void maintenanceOptions(Arguments args, Configuration options) {
    Boolean expire = args.bool(Flag.flagName(MaintenanceOptions.EXPIRE_SNAPSHOTS.key()));
    if (expire != null) {
      options.set(MaintenanceOptions.EXPIRE_SNAPSHOTS, expire);
    }
    String maxAge = Flag.flagName(MaintenanceOptions.SNAPSHOT_MAX_AGE.key());
    if (args.has(maxAge)) {
      options.set(MaintenanceOptions.SNAPSHOT_MAX_AGE, args.duration(maxAge, null));
    }
    String retained = Flag.flagName(MaintenanceOptions.SNAPSHOTS_RETAINED.key());
    if (args.has(retained)) {
      options.set(MaintenanceOptions.SNAPSHOTS_RETAINED, args.intValue(retained, 0, 1));
    }
    Boolean orphans = args.bool(Flag.flagName(MaintenanceOptions.REMOVE_ORPHANS.key()));
    if (orphans != null) {
      options.set(MaintenanceOptions.REMOVE_ORPHANS, orphans);
    }
    for (ConfigOption<Duration> option :
        List.of(
            MaintenanceOptions.RESTORE_POINT_MAX_AGE,
            MaintenanceOptions.INTERVAL,
            MaintenanceOptions.ORPHAN_MIN_AGE,
            MaintenanceOptions.ORPHAN_INTERVAL)) {
      String flag = Flag.flagName(option.key());
      if (args.has(flag)) {
        options.set(option, args.duration(flag, null));
      }
    }
  }

  /** A message of the options' checks, with each option's key replaced by its flag. */
  private static String withFlagNames(String message) {
    for (ConfigOption<?> option : SINK_OPTIONS) {
      message =
          message.replace("option '" + option.key() + "'", "--" + Flag.flagName(option.key()));
      message = message.replace("'" + option.key() + "'", "--" + Flag.flagName(option.key()));
    }
    return message;
  }

  /** How the job runs, from the flags and, submitted to a cluster, the cluster's configuration. */
  static RuntimeDefinition runtime(Arguments args) {
    String command = args.command();
    // Submitted to a cluster, the job takes the cluster's state backend and checkpoint directory
    // unless told otherwise; run embedded, it has defaults of its own.
    Optional<ReadableConfig> cluster = RuntimeTranslator.clusterConfiguration();
    String stateBackend =
        args.choice(
            "state-backend", cluster.isPresent() ? null : "hashmap", List.of("hashmap", "rocksdb"));
    int parallelism = args.intValue("parallelism", 2, 1);
    Duration interval = args.duration("checkpoint-interval", Duration.ofSeconds(10));
    if (interval.compareTo(MIN_CHECKPOINT_INTERVAL) < 0) {
      throw args.invalid(
          "checkpoint-interval", args.peek("checkpoint-interval"), "at least 10ms, such as 10s");
    }
    String checkpointDirectory = checkpointDirectory(args, cluster);
    String restoreFrom = restoreFrom(args, checkpointDirectory, cluster.isPresent());
    boolean allowNonRestoredState = Boolean.TRUE.equals(args.bool("allow-non-restored-state"));
    if (allowNonRestoredState && restoreFrom == null) {
      throw new Arguments.UsageException(
          args.command()
              + ": --allow-non-restored-state applies to a restore: give --restore-from");
    }
    return new RuntimeDefinition(
        parallelism,
        interval,
        checkpointDirectory,
        stateBackend,
        restoreFrom,
        RESTART_ATTEMPTS,
        allowNonRestoredState);
  }

  /**
   * The job's checkpoint directory: {@code --checkpoint-dir}; else, on a cluster, the cluster's
   * {@code execution.checkpointing.dir}; else a temporary directory.
   */
  private static String checkpointDirectory(Arguments args, Optional<ReadableConfig> cluster) {
    String given = args.optional("checkpoint-dir", null);
    if (given != null) {
      return given;
    }
    if ("latest".equalsIgnoreCase(args.peek("restore-from")) && cluster.isPresent()) {
      // The cluster's directory is shared by all its jobs: the newest checkpoint in it may be
      // another job's.
      throw new Arguments.UsageException(
          args.command()
              + ": --restore-from latest on a cluster needs the job's own --checkpoint-dir");
    }
    if (cluster.isEmpty()) {
      return defaultCheckpointDirectory();
    }
    String clusters = cluster.get().get(CheckpointingOptions.CHECKPOINTS_DIRECTORY);
    if (clusters == null) {
      throw new Arguments.UsageException(
          args.command()
              + ": the cluster has no execution.checkpointing.dir; give --checkpoint-dir");
    }
    return clusters.startsWith("file:") ? Paths.get(URI.create(clusters)).toString() : clusters;
  }

  static String defaultCheckpointDirectory() {
    return Paths.get(System.getProperty("java.io.tmpdir"), "iceberg-cdc-checkpoints").toString();
  }

  /**
   * The checkpoint to resume from: the flag's, or the newest in the directory for latest. One named
   * that is not there is refused here where the job runs in this process; a cluster's JobManager
   * may see a path that this process does not (a volume only it mounts), so there Flink decides.
   */
  private static String restoreFrom(
      Arguments args, String checkpointDirectory, boolean onACluster) {
    String restoreFrom = args.optional("restore-from", null);
    if (restoreFrom != null && !"latest".equalsIgnoreCase(restoreFrom)) {
      if (!onACluster && Checkpoints.missing(restoreFrom)) {
        // Refused before the job makes any table, not by Flink when it submits the job.
        throw new Arguments.UsageException(
            args.command()
                + ": --restore-from "
                + restoreFrom
                + ": nothing is there; give a checkpoint or savepoint (its directory or its"
                + " _metadata), or latest");
      }
      return restoreFrom;
    }
    if (restoreFrom != null) {
      Optional<String> latest;
      try {
        latest = Checkpoints.latest(checkpointDirectory);
      } catch (java.io.UncheckedIOException e) {
        throw new Arguments.UsageException(
            args.command() + ": --restore-from latest, but " + e.getMessage());
      }
      restoreFrom =
          latest.orElseThrow(
              () ->
                  new Arguments.UsageException(
                      args.command()
                          + ": --restore-from latest, but "
                          + checkpointDirectory
                          + " holds no completed checkpoint"));
    }
    return restoreFrom;
  }
}
