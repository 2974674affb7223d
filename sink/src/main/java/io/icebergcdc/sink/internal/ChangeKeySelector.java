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

  @Override
  default K getKey(ChangeEvent event) {
    return keyOf(event.key(), event.keyRow());
  }
}
