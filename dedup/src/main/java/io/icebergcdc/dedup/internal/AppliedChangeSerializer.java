package io.icebergcdc.dedup.internal;

import io.icebergcdc.cdc.typeutils.FormatVersionedSerializer;
import io.icebergcdc.cdc.typeutils.SourceSequenceCodec;
import java.io.IOException;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/**
 * Serializes the dedup's per-key {@link AppliedChange}.
 *
 * <p>Format version 1: sequence, fingerprint, deleted flag.
 */
final class AppliedChangeSerializer extends FormatVersionedSerializer<AppliedChange> {

  private static final long serialVersionUID = 1L;

  static final int FORMAT_VERSION_1 = 1;

  static final AppliedChangeSerializer INSTANCE = new AppliedChangeSerializer();

  @Override
  protected int currentFormat() {
    return FORMAT_VERSION_1;
  }

  @Override
  protected void writeFields(AppliedChange value, DataOutputView out) throws IOException {
    SourceSequenceCodec.write(value.sequence(), out);
    out.writeLong(value.fingerprint());
    out.writeBoolean(value.deleted());
  }

  @Override
  protected AppliedChange readFields(int format, DataInputView in) throws IOException {
    if (format != FORMAT_VERSION_1) {
      throw unknownFormat(format);
    }
    return new AppliedChange(SourceSequenceCodec.read(in), in.readLong(), in.readBoolean());
  }

  @Override
  protected String describe() {
    return "the dedup's per-key state";
  }

  @Override
  public TypeSerializerSnapshot<AppliedChange> snapshotConfiguration() {
    return new AppliedChangeSerializerSnapshot();
  }

  /** Snapshot of {@link AppliedChangeSerializer}. */
  public static final class AppliedChangeSerializerSnapshot
      extends FormatVersionedSerializer.Snapshot<AppliedChange> {
    public AppliedChangeSerializerSnapshot() {
      super(INSTANCE);
    }
  }
}
