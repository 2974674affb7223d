package io.icebergcdc.dedup;

import java.time.Duration;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;

/** Options of the sequence-ordered dedup. */
public final class DedupOptions {

  private DedupOptions() {}

  public static final ConfigOption<Duration> TOMBSTONE_TTL =
      ConfigOptions.key("dedup.tombstone-ttl")
          .durationType()
          .defaultValue(Duration.ofDays(7))
          .withDescription(
              "How long the sequence of a deleted key is kept after the delete, in processing"
                  + " time. While it is kept, a late change older than the delete is dropped;"
                  + " after it expires such a change would bring the row back. Live keys keep"
                  + " their sequence for as long as they exist.");

  public static final ConfigOption<Long> INDEX_MAX_KEYS =
      ConfigOptions.key("dedup.index.max-keys")
          .longType()
          .defaultValue(4_000_000L)
          .withDescription(
              "With the heap state backend and checkpoints, the most keys per subtask whose"
                  + " entries the dedup keeps in its own in-memory index. The index is cheaper per"
                  + " change than Flink's keyed state, but its snapshot is synchronous: the task"
                  + " pauses for it at every checkpoint, about 120 ns per key measured (0.3 s at"
                  + " 2.5 million keys). Past this many keys the entries move into keyed state at"
                  + " the next checkpoint, whose snapshots run beside the task; 0 keeps them in"
                  + " keyed state from the start.");

  /** Returns {@code maxKeys}, a value of {@link #INDEX_MAX_KEYS}; fails, naming it, if negative. */
  public static long checkIndexMaxKeys(long maxKeys) {
    if (maxKeys < 0) {
      throw new IllegalArgumentException(
          "option '"
              + INDEX_MAX_KEYS.key()
              + "' is "
              + maxKeys
              + "; it must be 0 or more (0 keeps the dedup's entries in keyed state)");
    }
    return maxKeys;
  }

  public static final ConfigOption<Boolean> IGNORE_TABLE_POSITION =
      ConfigOptions.key("dedup.ignore-table-position")
          .booleanType()
          .defaultValue(false)
          .withDescription(
              "A job that starts without state on a table this project wrote takes up where the"
                  + " table stands: a file or database job drops the changes at or before the"
                  + " table's source position (LSN, binlog position) as stale, a Kafka job starts"
                  + " after the table's offsets; and a key-indexed writer (the default delete mode)"
                  + " drops the changes before the table's latest source truncate that it applied."
                  + " True goes back: every change read is applied again, as by a job that never"
                  + " wrote the table.");

  public static final ConfigOption<AmbiguousChangePolicy> ON_AMBIGUOUS_CHANGE =
      ConfigOptions.key("dedup.on-ambiguous-change")
          .enumType(AmbiguousChangePolicy.class)
          .defaultValue(AmbiguousChangePolicy.FAIL)
          .withDescription(
              "What to do with a change whose key already has a different change applied at the"
                  + " same source sequence: fail the job, or send it to the dead-letter output.");
}
