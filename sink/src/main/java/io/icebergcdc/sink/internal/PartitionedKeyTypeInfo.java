package io.icebergcdc.sink.internal;

import io.icebergcdc.cdc.typeutils.OpaqueTypeInfo;
import org.apache.flink.api.common.serialization.SerializerConfig;
import org.apache.flink.api.common.typeutils.TypeSerializer;

/** Type information for {@link PartitionedKey}: usable as a key. */
public final class PartitionedKeyTypeInfo extends OpaqueTypeInfo<PartitionedKey> {

  private static final long serialVersionUID = 1L;

  public static final PartitionedKeyTypeInfo INSTANCE = new PartitionedKeyTypeInfo();

  private PartitionedKeyTypeInfo() {
    super(PartitionedKey.class);
  }

  @Override
  public boolean isKeyType() {
    return true;
  }

  @Override
  public TypeSerializer<PartitionedKey> createSerializer(SerializerConfig config) {
    return PartitionedKeySerializer.INSTANCE;
  }

  @Override
  public String toString() {
    return "PartitionedKey";
  }

  @Override
  public boolean equals(Object obj) {
    return obj instanceof PartitionedKeyTypeInfo;
  }

  @Override
  public int hashCode() {
    return PartitionedKeyTypeInfo.class.hashCode();
  }
}
