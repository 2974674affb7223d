package io.icebergcdc.cdc.typeutils;

import org.apache.flink.api.common.typeinfo.TypeInformation;

/**
 * Type information of a type that Flink handles as one value with its own serializer: no fields to
 * select, no nesting. Subclasses give the serializer, equality and whether it can be a key.
 */
public abstract class OpaqueTypeInfo<T> extends TypeInformation<T> {

  private static final long serialVersionUID = 1L;

  private final Class<T> type;

  protected OpaqueTypeInfo(Class<T> type) {
    this.type = type;
  }

  @Override
  public final boolean isBasicType() {
    return false;
  }

  @Override
  public final boolean isTupleType() {
    return false;
  }

  @Override
  public final int getArity() {
    return 1;
  }

  @Override
  public final int getTotalFields() {
    return 1;
  }

  @Override
  public final Class<T> getTypeClass() {
    return type;
  }

  @Override
  public boolean isKeyType() {
    return false;
  }

  @Override
  public boolean canEqual(Object obj) {
    return obj != null && obj.getClass() == getClass();
  }
}
