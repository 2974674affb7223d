package io.icebergcdc.dedup.internal;

import io.icebergcdc.cdc.SourceSequence;
import io.icebergcdc.cdc.typeutils.FormatVersionedSerializer;
import io.icebergcdc.cdc.typeutils.SourceSequenceCodec;
import io.icebergcdc.dedup.AppliedChange;
import java.io.IOException;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/**
 * Serializes the dedup's per-key {@link AppliedChange}.
 *
 * <p>Format version 1: sequence, fingerprint, deleted flag. Format version 2: a byte of flags
 * (deleted, has a sequence, has a row location), then the sequence and fingerprint if it has a
 * sequence, then the data file as modified UTF-8 and the position if it has a location.
 */
final class AppliedChangeSerializer extends FormatVersionedSerializer<AppliedChange> {

  private static final long serialVersionUID = 1L;

  static final int FORMAT_VERSION_1 = 1;
  static final int FORMAT_VERSION_2 = 2;

  private static final int DELETED = 1;
  private static final int SEQUENCED = 2;
  private static final int LOCATED = 4;

  static final AppliedChangeSerializer INSTANCE = new AppliedChangeSerializer();

  @Override
  protected int currentFormat() {
    return FORMAT_VERSION_2;
  }

  @Override
  protected void writeFields(AppliedChange value, DataOutputView out) throws IOException {
    int flags =
        (value.deleted() ? DELETED : 0)
            | (value.sequence() != null ? SEQUENCED : 0)
            | (value.file() != null ? LOCATED : 0);
    out.writeByte(flags);
    if (value.sequence() != null) {
      SourceSequenceCodec.write(value.sequence(), out);
      out.writeLong(value.fingerprint());
    }
    if (value.file() != null) {
      out.writeUTF(value.file());
      out.writeLong(value.position());
    }
  }

  @Override
  protected AppliedChange readFields(int format, DataInputView in) throws IOException {
    if (format == FORMAT_VERSION_1) {
      return new AppliedChange(SourceSequenceCodec.read(in), in.readLong(), in.readBoolean());
    }
    if (format != FORMAT_VERSION_2) {
      throw unknownFormat(format);
    }
    int flags = in.readByte();
    SourceSequence sequence = null;
    long fingerprint = 0;
    if ((flags & SEQUENCED) != 0) {
      sequence = SourceSequenceCodec.read(in);
      fingerprint = in.readLong();
    }
    String file = null;
    long position = 0;
    if ((flags & LOCATED) != 0) {
      file = in.readUTF();
      position = in.readLong();
    }
    return AppliedChange.of(sequence, fingerprint, (flags & DELETED) != 0, file, position);
  }

  @Override
  protected String describe() {
    return "the per-key state of the dedup and key index";
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
