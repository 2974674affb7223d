package io.icebergcdc.sink.internal;

import io.icebergcdc.cdc.ChangeSchema;
import io.icebergcdc.cdc.RowKey;
import org.apache.flink.table.data.RowData;
import org.apache.iceberg.PartitionKey;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.flink.RowDataWrapper;

/**
 * Keys a changelog by primary key, hashed by the Iceberg partition of the row: each partition is
 * written by one subtask. All changes of a key share its partition, since the partition columns are
 * key columns.
 */
public final class PartitionedKeySelector implements ChangeKeySelector<PartitionedKey> {

  private static final long serialVersionUID = 1L;

  private final ChangeSchema schema;
  private final PartitionSpec spec;
  private transient PartitionKey partitionKey;
  private transient RowDataWrapper wrapper;

  public PartitionedKeySelector(ChangeSchema schema, PartitionSpec spec) {
    this.schema = schema;
    this.spec = spec;
  }

  @Override
  public PartitionedKey keyOf(RowKey key, RowData keyRow) {
    if (partitionKey == null) {
      partitionKey = new PartitionKey(spec, schema.schema());
      wrapper = new RowDataWrapper(schema.rowType(), schema.schema().asStruct());
    }
    partitionKey.partition(wrapper.wrap(keyRow));
    // The partition path is a stable text form of the partition values in every JVM.
    return new PartitionedKey(partitionKey.toPath().hashCode(), key);
  }
}
