package io.icebergcdc.cdc.typeutils;

import io.icebergcdc.cdc.ChangeStats;
import java.io.IOException;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.core.memory.DataOutputView;

/**
 * Versioned serializer of {@link ChangeStats}. Version 1: six counters and the nullable last source
 * position. Fields are only ever appended in later versions.
 */
public final class ChangeStatsSerializer implements SimpleVersionedSerializer<ChangeStats> {

  public static final int VERSION_1 = 1;
  private static final int CURRENT = VERSION_1;

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
  }

  /** Reads stats written in {@code version}, inside another serializer's input. */
  public static ChangeStats read(int version, DataInputView in) throws IOException {
    if (version != VERSION_1) {
      throw new IOException("unknown version " + version + " of serialized change statistics");
    }
    return new ChangeStats(
        in.readLong(),
        in.readLong(),
        in.readLong(),
        in.readLong(),
        in.readLong(),
        in.readLong(),
        SourceSequenceCodec.readNullable(in));
  }
}
