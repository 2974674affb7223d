package io.icebergcdc.sink.internal;

import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.RowKey;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.table.data.RowData;

/**
 * Chooses the Flink key of a change: its primary key, with a hash that decides which subtask owns
 * it. The dedup and the writers are keyed by it, so that their keyed state is per primary key and
 * every change of a key reaches one subtask.
 */
public interface ChangeKeySelector<K> extends KeySelector<ChangeEvent, K> {

  /** The key of a row with the given primary key. */
  K keyOf(RowKey key, RowData keyRow);

  /**
   * The key of a row of {@code rowSchema}, a schema the table took while the job runs whose row may
   * be in Flink's binary format (a row read back for compaction): as {@link #keyOf(RowKey,
   * RowData)} gives it for the same key in the job's schema.
   */
  default K keyOf(RowKey key, RowData row, io.icebergcdc.cdc.ChangeSchema rowSchema) {
    return keyOf(key, row);
  }

  @Override
  default K getKey(ChangeEvent event) {
    return keyOf(event.key(), event.keyRow());
  }
}
