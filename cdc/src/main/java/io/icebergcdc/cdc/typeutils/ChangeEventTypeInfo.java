package io.icebergcdc.cdc.typeutils;

import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.ChangeSchema;
import org.apache.flink.api.common.serialization.SerializerConfig;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.table.runtime.typeutils.RowDataSerializer;
import org.apache.flink.table.types.logical.RowType;

/** Type information for the {@link ChangeEvent}s of one table schema. */
public final class ChangeEventTypeInfo extends TypeInformation<ChangeEvent> {

  private static final long serialVersionUID = 1L;

  private final RowType rowType;

  public ChangeEventTypeInfo(RowType rowType) {
    this.rowType = rowType;
  }

  public static ChangeEventTypeInfo of(ChangeSchema schema) {
    return new ChangeEventTypeInfo(schema.rowType());
  }

  @Override
  public boolean isBasicType() {
    return false;
  }

  @Override
  public boolean isTupleType() {
    return false;
  }

  @Override
  public int getArity() {
    return 1;
  }

  @Override
  public int getTotalFields() {
    return 1;
  }

  @Override
  public Class<ChangeEvent> getTypeClass() {
    return ChangeEvent.class;
  }

  @Override
  public boolean isKeyType() {
    return false;
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

  @Override
  public boolean canEqual(Object obj) {
    return obj instanceof ChangeEventTypeInfo;
  }
}
