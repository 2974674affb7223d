package io.icebergcdc.sink.internal;

import io.icebergcdc.cdc.typeutils.FormatVersionedSerializer;
import java.io.IOException;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/**
 * A data file that one writer subtask wrote, with all rows of keys that it owns: the files it may
 * compact. Kept in operator list state with the subtask and parallelism that wrote it: at an
 * unchanged parallelism each subtask gets its own entries back, and after a rescaling none are
 * taken (keys then move between subtasks, and no subtask owns every key of a file any more).
 *
 * @param file the file's location as the key index stores it
 * @param rows the rows written to it
 * @param deleted how many of them this subtask has deleted since
 * @param checkpoint the checkpoint whose commit adds the file
 */
record OwnDataFile(
    String file, long rows, long deleted, long checkpoint, int subtask, int parallelism) {

  OwnDataFile withDeleted(long count) {
    return new OwnDataFile(file, rows, count, checkpoint, subtask, parallelism);
  }

  /** Serializes {@link OwnDataFile}s. Format version 1: the fields in order. */
  static final class Serializer extends FormatVersionedSerializer<OwnDataFile> {

    private static final long serialVersionUID = 1L;

    static final int FORMAT_VERSION_1 = 1;

    static final Serializer INSTANCE = new Serializer();

    @Override
    protected int currentFormat() {
      return FORMAT_VERSION_1;
    }

    @Override
    protected void writeFields(OwnDataFile value, DataOutputView out) throws IOException {
      out.writeUTF(value.file());
      out.writeLong(value.rows());
      out.writeLong(value.deleted());
      out.writeLong(value.checkpoint());
      out.writeInt(value.subtask());
      out.writeInt(value.parallelism());
    }

    @Override
    protected OwnDataFile readFields(int format, DataInputView in) throws IOException {
      if (format != FORMAT_VERSION_1) {
        throw unknownFormat(format);
      }
      return new OwnDataFile(
          in.readUTF(), in.readLong(), in.readLong(), in.readLong(), in.readInt(), in.readInt());
    }

    @Override
    protected String describe() {
      return "the writer's own data files";
    }

    @Override
    public TypeSerializerSnapshot<OwnDataFile> snapshotConfiguration() {
      return new SerializerSnapshot();
    }
  }

  /** Snapshot of {@link Serializer}. */
  public static final class SerializerSnapshot
      extends FormatVersionedSerializer.Snapshot<OwnDataFile> {
    public SerializerSnapshot() {
      super(Serializer.INSTANCE);
    }
  }
}
