package io.icebergcdc.cdc.typeutils;

import io.icebergcdc.cdc.RowKey;
import org.apache.flink.api.common.serialization.SerializerConfig;
import org.apache.flink.api.common.typeutils.TypeSerializer;

/** Type information for {@link RowKey}: usable as a key, serialized by {@link RowKeySerializer}. */
public final class RowKeyTypeInfo extends OpaqueTypeInfo<RowKey> {

  private static final long serialVersionUID = 1L;

  public static final RowKeyTypeInfo INSTANCE = new RowKeyTypeInfo();

  private RowKeyTypeInfo() {
    super(RowKey.class);
  }

  @Override
  public boolean isKeyType() {
    return true;
  }

  @Override
  public TypeSerializer<RowKey> createSerializer(SerializerConfig config) {
    return RowKeySerializer.INSTANCE;
  }

  @Override
  public String toString() {
    return "RowKey";
  }

  @Override
  public boolean equals(Object obj) {
    return obj instanceof RowKeyTypeInfo;
  }

  @Override
  public int hashCode() {
    return RowKeyTypeInfo.class.hashCode();
  }
}
