package io.icebergcdc.sink.internal;

import java.io.IOException;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.TypeSerializerSchemaCompatibility;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.base.TypeSerializerSingleton;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/**
 * Serializes the key index's {@link RowLocation}s. Each value starts with its format version;
 * fields are only ever appended.
 *
 * <p>Format version 1: the data file's location as modified UTF-8, then the position.
 */
final class RowLocationSerializer extends TypeSerializerSingleton<RowLocation> {

  private static final long serialVersionUID = 1L;

  static final int FORMAT_VERSION_1 = 1;

  static final RowLocationSerializer INSTANCE = new RowLocationSerializer();

  @Override
  public boolean isImmutableType() {
    return true;
  }

  @Override
  public RowLocation createInstance() {
    return null;
  }

  @Override
  public RowLocation copy(RowLocation from) {
    return from;
  }

  @Override
  public RowLocation copy(RowLocation from, RowLocation reuse) {
    return from;
  }

  @Override
  public int getLength() {
    return -1;
  }

  @Override
  public void serialize(RowLocation location, DataOutputView out) throws IOException {
    out.writeByte(FORMAT_VERSION_1);
    out.writeUTF(location.file());
    out.writeLong(location.position());
  }

  @Override
  public RowLocation deserialize(DataInputView in) throws IOException {
    int format = in.readByte();
    if (format != FORMAT_VERSION_1) {
      throw new IOException(
          "unknown format version "
              + format
              + " of the key index; it was written by a newer"
              + " release");
    }
    return new RowLocation(in.readUTF(), in.readLong());
  }

  @Override
  public RowLocation deserialize(RowLocation reuse, DataInputView in) throws IOException {
    return deserialize(in);
  }

  @Override
  public void copy(DataInputView in, DataOutputView out) throws IOException {
    serialize(deserialize(in), out);
  }

  @Override
  public TypeSerializerSnapshot<RowLocation> snapshotConfiguration() {
    return new RowLocationSerializerSnapshot();
  }

  /** Snapshot of {@link RowLocationSerializer}; values carry their own format version. */
  public static final class RowLocationSerializerSnapshot
      implements TypeSerializerSnapshot<RowLocation> {

    private static final int VERSION_1 = 1;

    @Override
    public int getCurrentVersion() {
      return VERSION_1;
    }

    @Override
    public void writeSnapshot(DataOutputView out) {}

    @Override
    public void readSnapshot(int readVersion, DataInputView in, ClassLoader classLoader)
        throws IOException {
      if (readVersion != VERSION_1) {
        throw new IOException("unknown version " + readVersion + " of the key index's snapshot");
      }
    }

    @Override
    public TypeSerializer<RowLocation> restoreSerializer() {
      return INSTANCE;
    }

    @Override
    public TypeSerializerSchemaCompatibility<RowLocation> resolveSchemaCompatibility(
        TypeSerializerSnapshot<RowLocation> oldSnapshot) {
      return oldSnapshot instanceof RowLocationSerializerSnapshot
          ? TypeSerializerSchemaCompatibility.compatibleAsIs()
          : TypeSerializerSchemaCompatibility.incompatible();
    }
  }
}
