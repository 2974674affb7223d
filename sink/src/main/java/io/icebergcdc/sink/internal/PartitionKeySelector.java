package io.icebergcdc.sink.internal;

import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.ChangeSchema;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.iceberg.PartitionKey;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.flink.RowDataWrapper;

/**
 * Keys a changelog by the Iceberg partition of each change's row, as its partition path. All
 * changes of one primary key share a partition, since the partition columns are key columns.
 */
public final class PartitionKeySelector implements KeySelector<ChangeEvent, String> {

  private static final long serialVersionUID = 1L;

  private final ChangeSchema schema;
  private final PartitionSpec spec;
  private transient PartitionKey partitionKey;
  private transient RowDataWrapper wrapper;

  public PartitionKeySelector(ChangeSchema schema, PartitionSpec spec) {
    this.schema = schema;
    this.spec = spec;
  }

  @Override
  public String getKey(ChangeEvent event) {
    if (partitionKey == null) {
      partitionKey = new PartitionKey(spec, schema.schema());
      wrapper = new RowDataWrapper(schema.rowType(), schema.schema().asStruct());
    }
    partitionKey.partition(wrapper.wrap(event.keyRow()));
    return partitionKey.toPath();
  }
}
