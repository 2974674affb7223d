package io.icebergcdc.cdc.typeutils;

import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.ChangeSchema;
import org.apache.flink.api.common.serialization.SerializerConfig;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.table.runtime.typeutils.RowDataSerializer;
import org.apache.flink.table.types.logical.RowType;

/** Type information for the {@link ChangeEvent}s of one table schema. */
public final class ChangeEventTypeInfo extends OpaqueTypeInfo<ChangeEvent> {

  private static final long serialVersionUID = 1L;

  private final RowType rowType;

  public ChangeEventTypeInfo(RowType rowType) {
    super(ChangeEvent.class);
    this.rowType = rowType;
  }

  public static ChangeEventTypeInfo of(ChangeSchema schema) {
    return new ChangeEventTypeInfo(schema.rowType());
  }

  @Override
  public TypeSerializer<ChangeEvent> createSerializer(SerializerConfig config) {
    return new ChangeEventSerializer(new RowDataSerializer(rowType));
  }

  @Override
  public String toString() {
    return "ChangeEvent<" + rowType + ">";
  }

  @Override
  public boolean equals(Object obj) {
    return obj instanceof ChangeEventTypeInfo
        && rowType.equals(((ChangeEventTypeInfo) obj).rowType);
  }

  @Override
  public int hashCode() {
    return rowType.hashCode();
  }
}
