package io.icebergcdc.cdc.typeutils;

import org.apache.flink.api.common.serialization.SerializerConfig;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.core.io.SimpleVersionedSerializerTypeSerializerProxy;
import org.apache.flink.util.function.SerializableSupplier;

/**
 * Type information for values that have a hand-written, versioned {@link
 * SimpleVersionedSerializer}: the same bytes travel between operators as are kept in state.
 */
public final class SimpleVersionedTypeInfo<T> extends TypeInformation<T> {

  private static final long serialVersionUID = 1L;

  private final Class<T> type;
  private final SerializableSupplier<SimpleVersionedSerializer<T>> serializer;

  public SimpleVersionedTypeInfo(
      Class<T> type, SerializableSupplier<SimpleVersionedSerializer<T>> serializer) {
    this.type = type;
    this.serializer = serializer;
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
  public Class<T> getTypeClass() {
    return type;
  }

  @Override
  public boolean isKeyType() {
    return false;
  }

  @Override
  public TypeSerializer<T> createSerializer(SerializerConfig config) {
    return new SimpleVersionedSerializerTypeSerializerProxy<>(serializer);
  }

  @Override
  public String toString() {
    return type.getSimpleName();
  }

  @Override
  public boolean equals(Object obj) {
    return obj instanceof SimpleVersionedTypeInfo
        && type.equals(((SimpleVersionedTypeInfo<?>) obj).type);
  }

  @Override
  public int hashCode() {
    return type.hashCode();
  }

  @Override
  public boolean canEqual(Object obj) {
    return obj instanceof SimpleVersionedTypeInfo;
  }
}
