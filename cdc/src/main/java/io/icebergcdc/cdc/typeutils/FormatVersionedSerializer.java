package io.icebergcdc.cdc.typeutils;

import java.io.IOException;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.TypeSerializerSchemaCompatibility;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.base.TypeSerializerSingleton;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/**
 * A serializer of immutable keyed-state values in which every value starts with the version of its
 * format, so that values written by an older release stay readable value by value, whatever the
 * state backend. Subclasses write the fields of the current format and read those of every format
 * they know; fields are only ever appended.
 */
public abstract class FormatVersionedSerializer<T> extends TypeSerializerSingleton<T> {

  private static final long serialVersionUID = 1L;

  /** The format version that {@link #writeFields} writes. */
  protected abstract int currentFormat();

  protected abstract void writeFields(T value, DataOutputView out) throws IOException;

  /**
   * Reads the fields of a value written in {@code format}.
   *
   * @throws IOException if the format is unknown
   */
  protected abstract T readFields(int format, DataInputView in) throws IOException;

  /** What the values are, for messages. */
  protected abstract String describe();

  @Override
  public final boolean isImmutableType() {
    return true;
  }

  @Override
  public final T createInstance() {
    return null;
  }

  @Override
  public final T copy(T from) {
    return from;
  }

  @Override
  public final T copy(T from, T reuse) {
    return from;
  }

  @Override
  public final int getLength() {
    return -1;
  }

  @Override
  public final void serialize(T value, DataOutputView out) throws IOException {
    out.writeByte(currentFormat());
    writeFields(value, out);
  }

  @Override
  public final T deserialize(DataInputView in) throws IOException {
    return readFields(in.readByte(), in);
  }

  @Override
  public final T deserialize(T reuse, DataInputView in) throws IOException {
    return deserialize(in);
  }

  @Override
  public final void copy(DataInputView in, DataOutputView out) throws IOException {
    serialize(deserialize(in), out);
  }

  /** The failure for a format this release does not know. */
  protected final IOException unknownFormat(int format) {
    return new IOException(
        "unknown format version "
            + format
            + " of "
            + describe()
            + "; it was written by a newer release");
  }

  /**
   * The snapshot of a {@link FormatVersionedSerializer}: it has no configuration, since values
   * carry their format. Each serializer has its own subclass, so that state written by one is never
   * taken for the other's.
   */
  public abstract static class Snapshot<T> implements TypeSerializerSnapshot<T> {

    private static final int VERSION_1 = 1;

    private final TypeSerializer<T> serializer;

    protected Snapshot(TypeSerializer<T> serializer) {
      this.serializer = serializer;
    }

    @Override
    public final int getCurrentVersion() {
      return VERSION_1;
    }

    @Override
    public final void writeSnapshot(DataOutputView out) {}

    @Override
    public final void readSnapshot(int readVersion, DataInputView in, ClassLoader classLoader)
        throws IOException {
      if (readVersion != VERSION_1) {
        throw new IOException(
            "unknown version " + readVersion + " of the snapshot of " + serializer.getClass());
      }
    }

    @Override
    public final TypeSerializer<T> restoreSerializer() {
      return serializer;
    }

    @Override
    public final TypeSerializerSchemaCompatibility<T> resolveSchemaCompatibility(
        TypeSerializerSnapshot<T> oldSnapshot) {
      return oldSnapshot.getClass() == getClass()
          ? TypeSerializerSchemaCompatibility.compatibleAsIs()
          : TypeSerializerSchemaCompatibility.incompatible();
    }
  }
}
