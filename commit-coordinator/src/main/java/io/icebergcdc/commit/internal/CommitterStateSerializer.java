package io.icebergcdc.commit.internal;

import io.icebergcdc.commit.ChangeCommittable;
import io.icebergcdc.commit.ChangeCommittableSerializer;
import java.io.IOException;
import java.util.NavigableMap;
import java.util.TreeMap;
import org.apache.flink.core.io.SimpleVersionedSerialization;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;

/**
 * Versioned serializer of the {@link CommitterState}.
 *
 * <p>Version 1: the job id, the number of pending checkpoints, then for each its id and its
 * committable as version, length and bytes of {@link ChangeCommittableSerializer}, so that the two
 * formats evolve apart.
 *
 * <p>Version 2: the job id, whether the table's UUID follows and the UUID, then as version 1.
 *
 * <p>Version 3: as version 2, then whether the table's name in a committer of several tables
 * follows, and the name.
 *
 * <p>Version 4: as version 3, then whether the id of the table's latest snapshot the committer had
 * seen follows, and the id ({@link CommitterState#NO_SNAPSHOT} for none); then the number of the
 * earlier jobs of its lineage, and their ids.
 */
final class CommitterStateSerializer implements SimpleVersionedSerializer<CommitterState> {

  static final int VERSION_1 = 1;
  static final int VERSION_2 = 2;
  static final int VERSION_3 = 3;
  static final int VERSION_4 = 4;
  private static final int CURRENT = VERSION_4;

  private final ChangeCommittableSerializer committables = new ChangeCommittableSerializer();

  @Override
  public int getVersion() {
    return CURRENT;
  }

  @Override
  public byte[] serialize(CommitterState state) throws IOException {
    DataOutputSerializer out = new DataOutputSerializer(256);
    out.writeUTF(state.jobId());
    out.writeBoolean(state.tableUuid() != null);
    if (state.tableUuid() != null) {
      out.writeUTF(state.tableUuid());
    }
    out.writeInt(state.pending().size());
    for (var entry : state.pending().entrySet()) {
      out.writeLong(entry.getKey());
      SimpleVersionedSerialization.writeVersionAndSerialize(committables, entry.getValue(), out);
    }
    out.writeBoolean(state.table() != null);
    if (state.table() != null) {
      out.writeUTF(state.table());
    }
    out.writeBoolean(state.seenSnapshotId() != null);
    if (state.seenSnapshotId() != null) {
      out.writeLong(state.seenSnapshotId());
    }
    out.writeInt(state.lineage().size());
    for (String job : state.lineage()) {
      out.writeUTF(job);
    }
    return out.getCopyOfBuffer();
  }

  @Override
  public CommitterState deserialize(int version, byte[] bytes) throws IOException {
    if (version < VERSION_1 || version > VERSION_4) {
      throw new IOException("unknown version " + version + " of the committer's state");
    }
    DataInputDeserializer in = new DataInputDeserializer(bytes);
    String jobId = in.readUTF();
    String tableUuid = version >= VERSION_2 && in.readBoolean() ? in.readUTF() : null;
    int count = in.readInt();
    NavigableMap<Long, ChangeCommittable> pending = new TreeMap<>();
    for (int i = 0; i < count; i++) {
      long checkpointId = in.readLong();
      pending.put(
          checkpointId, SimpleVersionedSerialization.readVersionAndDeSerialize(committables, in));
    }
    String table = version >= VERSION_3 && in.readBoolean() ? in.readUTF() : null;
    Long seen = version >= VERSION_4 && in.readBoolean() ? in.readLong() : null;
    java.util.List<String> lineage = new java.util.ArrayList<>();
    if (version >= VERSION_4) {
      for (int i = in.readInt(); i > 0; i--) {
        lineage.add(in.readUTF());
      }
    }
    return new CommitterState(jobId, tableUuid, pending, table, seen, lineage);
  }
}
