package io.icebergcdc.sink.internal;

import io.icebergcdc.cdc.typeutils.FormatVersionedSerializer;
import java.io.IOException;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/**
 * Serializes the key index's {@link RowLocation}s.
 *
 * <p>Format version 1: the data file's location as modified UTF-8, then the position.
 */
final class RowLocationSerializer extends FormatVersionedSerializer<RowLocation> {

  private static final long serialVersionUID = 1L;

  static final int FORMAT_VERSION_1 = 1;

  static final RowLocationSerializer INSTANCE = new RowLocationSerializer();

  @Override
  protected int currentFormat() {
    return FORMAT_VERSION_1;
  }

  @Override
  protected void writeFields(RowLocation location, DataOutputView out) throws IOException {
    out.writeUTF(location.file());
    out.writeLong(location.position());
  }

  @Override
  protected RowLocation readFields(int format, DataInputView in) throws IOException {
    if (format != FORMAT_VERSION_1) {
      throw unknownFormat(format);
    }
    return new RowLocation(in.readUTF(), in.readLong());
  }

  @Override
  protected String describe() {
    return "the key index";
  }

  @Override
  public TypeSerializerSnapshot<RowLocation> snapshotConfiguration() {
    return new RowLocationSerializerSnapshot();
  }

  /** Snapshot of {@link RowLocationSerializer}. */
  public static final class RowLocationSerializerSnapshot
      extends FormatVersionedSerializer.Snapshot<RowLocation> {
    public RowLocationSerializerSnapshot() {
      super(INSTANCE);
    }
  }
}
