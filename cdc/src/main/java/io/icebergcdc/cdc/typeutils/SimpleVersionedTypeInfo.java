package io.icebergcdc.cdc.typeutils;

import org.apache.flink.api.common.serialization.SerializerConfig;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.core.io.SimpleVersionedSerializerTypeSerializerProxy;
import org.apache.flink.util.function.SerializableSupplier;

/**
 * Type information for values that have a hand-written, versioned {@link
 * SimpleVersionedSerializer}: the same bytes travel between operators as are kept in state.
 */
public final class SimpleVersionedTypeInfo<T> extends OpaqueTypeInfo<T> {

  private static final long serialVersionUID = 1L;

  private final SerializableSupplier<SimpleVersionedSerializer<T>> serializer;

  public SimpleVersionedTypeInfo(
      Class<T> type, SerializableSupplier<SimpleVersionedSerializer<T>> serializer) {
    super(type);
    this.serializer = serializer;
  }

  @Override
  public TypeSerializer<T> createSerializer(SerializerConfig config) {
    return new SimpleVersionedSerializerTypeSerializerProxy<>(serializer);
  }

  @Override
  public String toString() {
    return getTypeClass().getSimpleName();
  }

  @Override
  public boolean equals(Object obj) {
    return obj instanceof SimpleVersionedTypeInfo
        && getTypeClass().equals(((SimpleVersionedTypeInfo<?>) obj).getTypeClass());
  }

  @Override
  public int hashCode() {
    return getTypeClass().hashCode();
  }
}
