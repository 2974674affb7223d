package io.icebergcdc.cdc.typeutils;

import io.icebergcdc.cdc.TableKey;
import org.apache.flink.api.common.serialization.SerializerConfig;
import org.apache.flink.api.common.typeutils.TypeSerializer;

/**
 * Type information for {@link TableKey}: usable as a key, serialized by {@link TableKeySerializer}.
 */
public final class TableKeyTypeInfo extends OpaqueTypeInfo<TableKey> {

  private static final long serialVersionUID = 1L;

  public static final TableKeyTypeInfo INSTANCE = new TableKeyTypeInfo();

  private TableKeyTypeInfo() {
    super(TableKey.class);
  }

  @Override
  public boolean isKeyType() {
    return true;
  }

  @Override
  public TypeSerializer<TableKey> createSerializer(SerializerConfig config) {
    return new TableKeySerializer();
  }

  @Override
  public String toString() {
    return "TableKey";
  }

  @Override
  public boolean equals(Object obj) {
    return obj instanceof TableKeyTypeInfo;
  }

  @Override
  public int hashCode() {
    return TableKeyTypeInfo.class.hashCode();
  }
}
