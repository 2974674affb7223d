package io.icebergcdc.sink.internal;

import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.types.logical.RowType;
import org.apache.iceberg.PartitionKey;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.flink.RowDataWrapper;

/** The partition of a row, as its partition path: the key that spreads rows by partition. */
public final class PartitionOfRow implements KeySelector<RowData, String> {

  private static final long serialVersionUID = 1L;

  private final Schema schema;
  private final PartitionSpec spec;
  private final RowType rowType;
  private transient PartitionKey partitionKey;
  private transient RowDataWrapper wrapper;

  public PartitionOfRow(Schema schema, PartitionSpec spec, RowType rowType) {
    this.schema = schema;
    this.spec = spec;
    this.rowType = rowType;
  }

  @Override
  public String getKey(RowData row) {
    if (partitionKey == null) {
      partitionKey = new PartitionKey(spec, schema);
      wrapper = new RowDataWrapper(rowType, schema.asStruct());
    }
    partitionKey.partition(wrapper.wrap(row));
    return partitionKey.toPath();
  }
}
