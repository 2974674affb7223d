package io.icebergcdc.sink;

import io.icebergcdc.dedup.DedupOptions;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.MemorySize;

/**
 * Options of the sink. Write properties of the table (file size, Parquet codec and sizes) are
 * Iceberg table properties and are read from the table.
 */
public final class SinkOptions {

  private SinkOptions() {}

  public static final ConfigOption<Distribution> DISTRIBUTION =
      ConfigOptions.key("sink.distribution")
          .enumType(Distribution.class)
          .defaultValue(Distribution.PRIMARY_KEY)
          .withDescription(
              "How changes are spread over writers: by primary key (even load, chained with the"
                  + " dedup) or by partition (fewer files). Unset, the table's"
                  + " write.distribution-mode decides (hash: by partition; none: by primary"
                  + " key), and without it, by primary key.");

  public static final ConfigOption<DeleteMode> DELETE_MODE =
      ConfigOptions.key("sink.delete-mode")
          .enumType(DeleteMode.class)
          .defaultValue(DeleteMode.POSITION)
          .withDescription(
              "How updates and deletes are written: POSITION (a key index in state turns them into"
                  + " position deletes or deletion vectors) or EQUALITY (equality deletes on the"
                  + " primary key, as Iceberg's upsert writes them).");

  public static final ConfigOption<Boolean> BOOTSTRAP_INDEX =
      ConfigOptions.key("sink.bootstrap-index")
          .booleanType()
          .defaultValue(true)
          .withDescription(
              "Whether a job that starts without state on a table that already has rows first"
                  + " reads the table's keys with their data files and positions into the key"
                  + " index. Without it, changes to rows the index does not know fall back to"
                  + " equality deletes. Only used with sink.delete-mode = POSITION.");

  public static final ConfigOption<Double> COMPACTION_DELETED_RATIO =
      ConfigOptions.key("sink.compaction.deleted-ratio")
          .doubleType()
          .defaultValue(0.5)
          .withDescription(
              "In position mode, a writer compacts a data file it wrote, once committed, when at"
                  + " least this fraction of its rows is deleted: at a checkpoint it writes the"
                  + " file's live rows again into its new files, moves their keys in the index, and"
                  + " the commit removes the old file with its deletion vector. Reads then scan"
                  + " few deleted rows. Between 0 (exclusive) and 1; 1 or more turns compaction"
                  + " off.");

  public static final ConfigOption<MemorySize> COMPACTION_CACHE_SIZE =
      ConfigOptions.key("sink.compaction.cache-size")
          .memoryType()
          .defaultValue(MemorySize.parse("64mb"))
          .withDescription(
              "In position mode, how much of the rows of its most recent data files each writer"
                  + " subtask keeps in memory (Flink's binary row format, on the heap), for all of"
                  + " its tables together, so that compacting such a file copies its live rows"
                  + " from memory instead of decoding the whole file from Parquet again. The files"
                  + " written first, of whichever table, are forgotten first; a file not held is"
                  + " read. 0 keeps none.");

  public static final ConfigOption<MemorySize> COMPACTION_SMALL_FILE_SIZE =
      ConfigOptions.key("sink.compaction.small-file-size")
          .memoryType()
          .defaultValue(MemorySize.parse("32mb"))
          .withDescription(
              "In position mode, data files below this size are merged: once a partition has 4"
                  + " files of similar size (within a factor of 4), each writer writes their live"
                  + " rows again into its new files at a checkpoint, and the commit removes them;"
                  + " so a row is copied about log4(this size / the size written per checkpoint)"
                  + " times. Files of other writers (before a rescaling, or of another engine) are"
                  + " merged too, each writer moving the rows of its own keys. 0 merges none.");

  public static final ConfigOption<Duration> COMMIT_CATALOG_RETRY_TIMEOUT =
      ConfigOptions.key("sink.commit.catalog-retry-timeout")
          .durationType()
          .defaultValue(Duration.ofMinutes(5))
          .withDescription(
              "How long the committer keeps trying a commit while the catalog cannot be reached"
                  + " (refused or timed-out connections, 503 answers), pausing 1 s, then up to 15"
                  + " s, between attempts; a commit whose answer was lost is looked up in the"
                  + " snapshot log first. Past it the job fails. Keep it below the checkpoint"
                  + " timeout: no checkpoint completes while the committer waits.");

  /**
   * Whether a job of several tables commits the tables of each checkpoint in one transaction of a
   * REST catalog. Not an option of the SQL connector, whose sink writes one table.
   */
  public static final ConfigOption<Boolean> COMMIT_ATOMIC_ACROSS_TABLES =
      ConfigOptions.key("sink.commit.atomic-across-tables")
          .booleanType()
          .defaultValue(false)
          .withDescription(
              "Whether a job of several tables (a capture or Kafka job) commits all the tables a"
                  + " checkpoint changed in one transaction of the catalog (a REST catalog's"
                  + " multi-table commit): a reader then sees them all take their new snapshots"
                  + " at once, or none of them. Needs a REST catalog. Off: each table's snapshot"
                  + " of a checkpoint is committed on its own, so a reader may see one table"
                  + " changed by a checkpoint and another not yet.");

  public static final ConfigOption<Integer> PARALLELISM =
      ConfigOptions.key("sink.parallelism")
          .intType()
          .noDefaultValue()
          .withDescription(
              "Parallelism of the dedup and the writers; the job's default parallelism when"
                  + " unset. The committer always runs with parallelism 1.");

  public static final ConfigOption<String> UID_PREFIX =
      ConfigOptions.key("sink.uid-prefix")
          .stringType()
          .defaultValue("iceberg-cdc")
          .withDescription(
              "Prefix of the uids of the sink's stateful operators. Changing it, like changing"
                  + " any uid, makes savepoints of the earlier job unrestorable.");

  public static final ConfigOption<Boolean> OVERWRITE_ALLOW_EMPTY_INPUT =
      ConfigOptions.key(io.icebergcdc.commit.Overwrite.ALLOW_EMPTY_INPUT_OPTION)
          .booleanType()
          .defaultValue(false)
          .withDescription(
              "Whether an INSERT OVERWRITE whose input has no rows may commit: it then empties a"
                  + " static partition or an unpartitioned table, and changes nothing when it"
                  + " replaces the partitions in its input. By default such an overwrite fails"
                  + " and leaves the table as it was.");

  /** Every option of the sink, of its dedup and of its maintenance. */
  public static List<ConfigOption<?>> all() {
    List<ConfigOption<?>> all = new java.util.ArrayList<>(sinkAndDedup());
    all.addAll(MaintenanceOptions.all());
    return all;
  }

  private static List<ConfigOption<?>> sinkAndDedup() {
    return List.of(
        DISTRIBUTION,
        DELETE_MODE,
        BOOTSTRAP_INDEX,
        COMPACTION_DELETED_RATIO,
        COMPACTION_CACHE_SIZE,
        COMPACTION_SMALL_FILE_SIZE,
        COMMIT_CATALOG_RETRY_TIMEOUT,
        PARALLELISM,
        UID_PREFIX,
        OVERWRITE_ALLOW_EMPTY_INPUT,
        DedupOptions.TOMBSTONE_TTL,
        DedupOptions.ON_AMBIGUOUS_CHANGE,
        DedupOptions.INDEX_MAX_KEYS,
        DedupOptions.IGNORE_TABLE_POSITION);
  }

  /**
   * Fails on a key in the sink's or dedup's namespace that is no option, or on a value that is not
   * valid for its option, naming the key; keys of other namespaces are left to their owners.
   */
  public static void validate(Configuration config) {
    Set<String> known =
        all().stream()
            .map(ConfigOption::key)
            .collect(Collectors.toCollection(java.util.HashSet::new));
    // A job's option, not a table's: the SQL connector does not take it.
    known.add(COMMIT_ATOMIC_ACROSS_TABLES.key());
    for (String key : config.keySet()) {
      if ((key.startsWith("sink.") || key.startsWith("dedup.") || key.startsWith("maintenance."))
          && !known.contains(key)) {
        throw new IllegalArgumentException(
            "unknown option '" + key + "'; the options are " + known);
      }
    }
    double ratio = config.get(COMPACTION_DELETED_RATIO);
    if (!(ratio > 0)) {
      throw new IllegalArgumentException(
          "option '"
              + COMPACTION_DELETED_RATIO.key()
              + "' is "
              + ratio
              + "; it must be above 0 (1 or more turns compaction off)");
    }
    java.time.Duration ttl = config.get(DedupOptions.TOMBSTONE_TTL);
    if (ttl.toMillis() < 1) {
      throw new IllegalArgumentException(
          "option '"
              + DedupOptions.TOMBSTONE_TTL.key()
              + "' is "
              + ttl
              + "; it must be at least 1 ms (Flink's state time-to-live counts milliseconds)");
    }
    DedupOptions.checkIndexMaxKeys(config.get(DedupOptions.INDEX_MAX_KEYS));
    checkCompactionCacheBytes(config.get(COMPACTION_CACHE_SIZE).getBytes());
    checkSmallFileSize(config.get(COMPACTION_SMALL_FILE_SIZE).getBytes());
    MaintenanceOptions.validate(config);
  }

  /** Returns {@code bytes}, the value of {@link #COMPACTION_CACHE_SIZE}, if it is not negative. */
  public static long checkCompactionCacheBytes(long bytes) {
    if (bytes < 0) {
      throw new IllegalArgumentException(
          "option '"
              + COMPACTION_CACHE_SIZE.key()
              + "' is "
              + bytes
              + " bytes; it must be 0 (keep no rows) or more");
    }
    return bytes;
  }

  /** Returns {@code bytes}, the value of {@link #COMPACTION_SMALL_FILE_SIZE}, if not negative. */
  public static long checkSmallFileSize(long bytes) {
    if (bytes < 0) {
      throw new IllegalArgumentException(
          "option '"
              + COMPACTION_SMALL_FILE_SIZE.key()
              + "' is "
              + bytes
              + " bytes; it must be 0 (merge no files) or more");
    }
    return bytes;
  }
}
