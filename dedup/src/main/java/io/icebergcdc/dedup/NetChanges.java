package io.icebergcdc.dedup;

import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.ChangeStats;
import io.icebergcdc.cdc.RowKey;

/**
 * What becomes of the net changes the dedup ({@link KeyedDedup}) hands on once per checkpoint: the
 * operator that hosts the dedup provides it (the dedup operator emits them to the writers, the
 * key-indexed writer writes them). Called on Flink's task thread, with the key of each change in
 * the operator's context.
 */
public interface NetChanges {

  /**
   * Applies the net change of the key in context since the last checkpoint.
   *
   * @param net the latest change accepted for the key, labelled insert, update or delete; an update
   *     may miss values the source did not send ({@link ChangeEvent#missingColumns()}), which only
   *     the key's live row, {@code prior}, can give
   * @param prior what was known of the key before: its live row (with its location, where known) or
   *     its tombstone; null if nothing
   * @return where an upsert's new row was written, or null if the handler does not track rows
   */
  Location apply(ChangeEvent net, AppliedChange prior) throws Exception;

  /** Called after the net changes of a checkpoint interval were applied, with their statistics. */
  void checkpointed(ChangeStats stats) throws Exception;

  /**
   * What is known of a key ({@code key}, in context) when the dedup's state holds nothing: null
   * unless the handler knows its row from elsewhere.
   */
  default AppliedChange unknownKey(Object key) {
    return null;
  }

  /**
   * Whether a key without state is known to have no row (true where a complete key index has no
   * entry for it); otherwise its delete is passed on as a delete of a row that may exist.
   */
  default boolean unknownKeysHaveNoRow() {
    return false;
  }

  /**
   * The primary key of a key of the operator's keyed stream ({@code key}, as the dedup's state
   * keeps it): the key itself, unless the operator's keys carry more than the primary key.
   */
  default RowKey rowKeyOf(Object key) {
    return (RowKey) key;
  }

  /** A data file (in the form the writer keeps it) and a row position in it. */
  record Location(String file, long position) {}
}
