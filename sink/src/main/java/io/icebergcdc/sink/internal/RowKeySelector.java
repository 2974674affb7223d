package io.icebergcdc.sink.internal;

import io.icebergcdc.cdc.RowKey;
import org.apache.flink.table.data.RowData;

/** Keys a changelog by primary key, hashed by primary key. */
public final class RowKeySelector implements ChangeKeySelector<RowKey> {

  private static final long serialVersionUID = 1L;

  @Override
  public RowKey keyOf(RowKey key, RowData keyRow) {
    return key;
  }
}
