package io.icebergcdc.cdc.typeutils;

import io.icebergcdc.cdc.ChangeStats;
import io.icebergcdc.cdc.SourceSequence;
import java.io.IOException;
import java.util.Map;
import java.util.TreeMap;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.core.memory.DataOutputView;

/**
 * Versioned serializer of {@link ChangeStats}. Version 1: six counters and the nullable last source
 * position. Version 2 appends the Kafka offsets: a count, then each topic partition and offset.
 * Version 3 appends the nullable position of the table's latest truncate. Fields are only ever
 * appended in later versions.
 */
public final class ChangeStatsSerializer implements SimpleVersionedSerializer<ChangeStats> {

  public static final int VERSION_1 = 1;
  public static final int VERSION_2 = 2;
  public static final int VERSION_3 = 3;
  public static final int CURRENT = VERSION_3;

  @Override
  public int getVersion() {
    return CURRENT;
  }

  @Override
  public byte[] serialize(ChangeStats stats) throws IOException {
    DataOutputSerializer out = new DataOutputSerializer(64);
    write(stats, out);
    return out.getCopyOfBuffer();
  }

  @Override
  public ChangeStats deserialize(int version, byte[] bytes) throws IOException {
    return read(version, new DataInputDeserializer(bytes));
  }

  /** Writes stats in the current version, inside another serializer's output. */
  public static void write(ChangeStats stats, DataOutputView out) throws IOException {
    out.writeLong(stats.inserted());
    out.writeLong(stats.updated());
    out.writeLong(stats.deleted());
    out.writeLong(stats.staleDropped());
    out.writeLong(stats.duplicatesDropped());
    out.writeLong(stats.deadLettered());
    SourceSequenceCodec.writeNullable(stats.lastSourcePosition(), out);
    out.writeInt(stats.sourceOffsets().size());
    for (Map.Entry<String, Long> offset : stats.sourceOffsets().entrySet()) {
      out.writeUTF(offset.getKey());
      out.writeLong(offset.getValue());
    }
    SourceSequenceCodec.writeNullable(stats.truncatedAt(), out);
  }

  /** Reads stats written in {@code version}, inside another serializer's input. */
  public static ChangeStats read(int version, DataInputView in) throws IOException {
    if (version < VERSION_1 || version > VERSION_3) {
      throw new IOException("unknown version " + version + " of serialized change statistics");
    }
    long inserted = in.readLong();
    long updated = in.readLong();
    long deleted = in.readLong();
    long stale = in.readLong();
    long duplicates = in.readLong();
    long deadLettered = in.readLong();
    SourceSequence position = SourceSequenceCodec.readNullable(in);
    Map<String, Long> offsets = new TreeMap<>();
    if (version >= VERSION_2) {
      int count = in.readInt();
      for (int i = 0; i < count; i++) {
        offsets.put(in.readUTF(), in.readLong());
      }
    }
    SourceSequence truncatedAt = version >= VERSION_3 ? SourceSequenceCodec.readNullable(in) : null;
    return new ChangeStats(
        inserted,
        updated,
        deleted,
        stale,
        duplicates,
        deadLettered,
        position,
        offsets,
        truncatedAt);
  }
}
