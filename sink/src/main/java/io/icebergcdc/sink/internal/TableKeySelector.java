package io.icebergcdc.sink.internal;

import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.TableKey;
import org.apache.flink.api.java.functions.KeySelector;

/**
 * Keys the changes of several tables by (table, primary key), for the writer of several tables: the
 * table is the name the change carries ({@link ChangeEvent#table()}).
 */
public final class TableKeySelector implements KeySelector<ChangeEvent, TableKey> {

  private static final long serialVersionUID = 1L;

  @Override
  public TableKey getKey(ChangeEvent change) {
    return new TableKey(change.table(), change.key());
  }
}
