package io.icebergcdc.sink.internal;

import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.RowKey;
import org.apache.flink.api.java.functions.KeySelector;

/** Keys a changelog by primary key. */
public final class RowKeySelector implements KeySelector<ChangeEvent, RowKey> {

  private static final long serialVersionUID = 1L;

  @Override
  public RowKey getKey(ChangeEvent event) {
    return event.key();
  }
}
