package io.icebergcdc.sink;

import io.icebergcdc.cdc.SourceSequence;
import io.icebergcdc.commit.RecordedPositions;
import io.icebergcdc.commit.SnapshotSummaryKeys;
import io.icebergcdc.dedup.DedupOptions;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.iceberg.DataOperations;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.util.SnapshotUtil;

/**
 * Where a table that this project wrote stands in its source, from its snapshots' summaries: what a
 * job that starts without state reads so that it takes up from there.
 */
public final class TablePosition {

  private static final String IGNORE_HINT =
      "start with --ignore-table-position ("
          + DedupOptions.IGNORE_TABLE_POSITION.key()
          + " = true) to read the source without it";

  private TablePosition() {}

  /**
   * The source position of the table's latest snapshot that records one ({@link
   * SnapshotSummaryKeys#SOURCE_SEQUENCE}), or null.
   */
  public static SourceSequence of(Table table) {
    return latestSequence(table, SnapshotSummaryKeys.SOURCE_SEQUENCE, "a source position");
  }

  /**
   * The source position of the table's latest truncate that this project applied ({@link
   * SnapshotSummaryKeys#TRUNCATED_AT}), as its latest snapshot that records one says; or null.
   */
  public static SourceSequence truncatedAt(Table table) {
    return latestSequence(table, SnapshotSummaryKeys.TRUNCATED_AT, "a truncate position");
  }

  private static SourceSequence latestSequence(Table table, String key, String what) {
    String encoded = latest(table, key);
    if (encoded == null) {
      return null;
    }
    try {
      return SourceSequence.decode(encoded);
    } catch (IllegalArgumentException e) {
      throw new IllegalStateException(
          "table "
              + table.name()
              + " records "
              + what
              + " that cannot be read ("
              + key
              + " = '"
              + encoded
              + "'); "
              + IGNORE_HINT,
          e);
    }
  }

  /**
   * The Kafka offsets the table's latest snapshot that records any holds, as {@code
   * topic/partition} to the highest offset whose changes are in the table; empty if none.
   */
  public static Map<String, Long> kafkaOffsets(Table table) {
    Map<String, Long> offsets = new LinkedHashMap<>();
    String text = latest(table, SnapshotSummaryKeys.KAFKA_OFFSETS);
    if (text == null || text.isBlank()) {
      return offsets;
    }
    for (String pair : text.split(",")) {
      int eq = pair.lastIndexOf('=');
      int slash = pair.lastIndexOf('/', eq);
      try {
        Integer.parseInt(pair.substring(slash + 1, eq));
        offsets.put(pair.substring(0, eq), Long.parseLong(pair.substring(eq + 1)));
      } catch (RuntimeException e) {
        throw new IllegalStateException(
            "table "
                + table.name()
                + " records Kafka offsets that cannot be read ("
                + SnapshotSummaryKeys.KAFKA_OFFSETS
                + " = '"
                + text
                + "'); "
                + IGNORE_HINT,
            e);
      }
    }
    return offsets;
  }

  /**
   * The id of each topic, by its name, as the job that committed the snapshot whose offsets {@link
   * #kafkaOffsets} gives found it ({@link SnapshotSummaryKeys#KAFKA_TOPIC_IDS}); empty where that
   * snapshot records none (a build before ids were recorded, or a topic taken in flight).
   */
  public static Map<String, String> kafkaTopicIds(Table table) {
    Map<String, String> ids = new LinkedHashMap<>();
    Snapshot snapshot = latestWith(table, SnapshotSummaryKeys.KAFKA_OFFSETS);
    String text =
        snapshot == null ? null : snapshot.summary().get(SnapshotSummaryKeys.KAFKA_TOPIC_IDS);
    if (text != null) {
      for (String pair : text.split(",")) {
        int eq = pair.lastIndexOf('=');
        if (eq > 0) {
          ids.put(pair.substring(0, eq), pair.substring(eq + 1));
        }
      }
    }
    return ids;
  }

  /**
   * {@code key} of the latest snapshot that has it; null if there is none, or if a later snapshot
   * voids it ({@link RecordedPositions#voidedBy}: an overwrite or delete that records no position,
   * such as an {@code INSERT OVERWRITE}, a {@code DELETE} or another engine's commit), after which
   * the position no longer says what the table holds. The committers carry a position forward by
   * the same rule.
   *
   * <p>A truncate position ends at any overwrite or delete that lacks it, even one that records a
   * position: the writers that know of a truncate repeat it in every commit, so a commit without it
   * comes from a job that did not start from it (one that ignored the table's position).
   */
  private static String latest(Table table, String key) {
    Snapshot snapshot = latestWith(table, key);
    return snapshot == null ? null : snapshot.summary().get(key);
  }

  /** The snapshot whose {@code key} {@link #latest} gives; null where it gives none. */
  private static Snapshot latestWith(Table table, String key) {
    for (Snapshot s : SnapshotUtil.currentAncestors(table)) {
      if (s.summary().get(key) != null) {
        return s;
      }
      if (SnapshotSummaryKeys.TRUNCATED_AT.equals(key)
          ? rewritesRows(s.operation())
          : RecordedPositions.voidedBy(s)) {
        return null;
      }
    }
    return null;
  }

  private static boolean rewritesRows(String operation) {
    return DataOperations.OVERWRITE.equals(operation) || DataOperations.DELETE.equals(operation);
  }
}
