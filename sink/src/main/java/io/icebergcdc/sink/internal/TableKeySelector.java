package io.icebergcdc.sink.internal;

import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.Operation;
import io.icebergcdc.cdc.TableKey;
import java.util.Map;
import org.apache.flink.api.java.functions.KeySelector;

/**
 * Keys the changes of several tables by (table, primary key), for the writer of several tables: the
 * table is the name the change carries ({@link ChangeEvent#table()}). The keys of a table whose
 * changes are distributed by partition are hashed by their partition ({@link TableKey#hashedBy}),
 * as that table's writer of its own would hash them ({@link PartitionedKeySelector}); a truncate's
 * copies by their keys, as {@link io.icebergcdc.cdc.TruncateCopies#forTables} chose them.
 */
public final class TableKeySelector implements KeySelector<ChangeEvent, TableKey> {

  private static final long serialVersionUID = 1L;

  /** The partitions of the tables distributed by partition, by the name their changes carry. */
  private final Map<String, PartitionedKeySelector> byPartition;

  public TableKeySelector() {
    this(Map.of());
  }

  public TableKeySelector(Map<String, PartitionedKeySelector> byPartition) {
    this.byPartition = Map.copyOf(byPartition);
  }

  @Override
  public TableKey getKey(ChangeEvent change) {
    PartitionedKeySelector partitions = byPartition.get(change.table());
    if (partitions == null || change.operation() == Operation.TRUNCATE) {
      return new TableKey(change.table(), change.key());
    }
    PartitionedKey key = partitions.getKey(change);
    return TableKey.hashedBy(change.table(), key.key(), key.partitionHash());
  }
}
