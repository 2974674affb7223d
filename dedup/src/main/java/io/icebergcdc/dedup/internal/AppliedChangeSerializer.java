package io.icebergcdc.dedup.internal;

import io.icebergcdc.cdc.typeutils.SourceSequenceCodec;
import java.io.IOException;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.TypeSerializerSchemaCompatibility;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.base.TypeSerializerSingleton;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/**
 * Serializes the dedup's per-key {@link AppliedChange}. Each value starts with its format version,
 * so that values written by an older release stay readable value by value, whatever the state
 * backend; fields are only ever appended.
 *
 * <p>Format version 1: sequence, fingerprint, deleted flag.
 */
final class AppliedChangeSerializer extends TypeSerializerSingleton<AppliedChange> {

  private static final long serialVersionUID = 1L;

  static final int FORMAT_VERSION_1 = 1;
  private static final int CURRENT_FORMAT = FORMAT_VERSION_1;

  static final AppliedChangeSerializer INSTANCE = new AppliedChangeSerializer();

  @Override
  public boolean isImmutableType() {
    return true;
  }

  @Override
  public AppliedChange createInstance() {
    return null;
  }

  @Override
  public AppliedChange copy(AppliedChange from) {
    return from;
  }

  @Override
  public AppliedChange copy(AppliedChange from, AppliedChange reuse) {
    return from;
  }

  @Override
  public int getLength() {
    return -1;
  }

  @Override
  public void serialize(AppliedChange record, DataOutputView out) throws IOException {
    out.writeByte(CURRENT_FORMAT);
    SourceSequenceCodec.write(record.sequence(), out);
    out.writeLong(record.fingerprint());
    out.writeBoolean(record.deleted());
  }

  @Override
  public AppliedChange deserialize(DataInputView in) throws IOException {
    int format = in.readByte();
    if (format != FORMAT_VERSION_1) {
      throw new IOException(
          "unknown format version "
              + format
              + " of the dedup's per-key state; it was written by"
              + " a newer release");
    }
    return new AppliedChange(SourceSequenceCodec.read(in), in.readLong(), in.readBoolean());
  }

  @Override
  public AppliedChange deserialize(AppliedChange reuse, DataInputView in) throws IOException {
    return deserialize(in);
  }

  @Override
  public void copy(DataInputView in, DataOutputView out) throws IOException {
    serialize(deserialize(in), out);
  }

  @Override
  public TypeSerializerSnapshot<AppliedChange> snapshotConfiguration() {
    return new AppliedChangeSerializerSnapshot();
  }

  /** Snapshot of {@link AppliedChangeSerializer}; values carry their own format version. */
  public static final class AppliedChangeSerializerSnapshot
      implements TypeSerializerSnapshot<AppliedChange> {

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
        throw new IOException(
            "unknown version " + readVersion + " of the dedup state serializer's snapshot");
      }
    }

    @Override
    public TypeSerializer<AppliedChange> restoreSerializer() {
      return INSTANCE;
    }

    @Override
    public TypeSerializerSchemaCompatibility<AppliedChange> resolveSchemaCompatibility(
        TypeSerializerSnapshot<AppliedChange> oldSnapshot) {
      return oldSnapshot instanceof AppliedChangeSerializerSnapshot
          ? TypeSerializerSchemaCompatibility.compatibleAsIs()
          : TypeSerializerSchemaCompatibility.incompatible();
    }
  }
}
