package io.icebergcdc.commit;

import io.icebergcdc.cdc.ChangeStats;
import io.icebergcdc.cdc.typeutils.ChangeStatsSerializer;
import io.icebergcdc.cdc.typeutils.Utf8Strings;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.core.memory.DataOutputView;

/**
 * Versioned serializer of {@link ChangeCommittable}s, used between writers and the committer and in
 * the committer's state.
 *
 * <p>Version 1: data files, delete files, referenced data files (each a count and strings of any
 * length), then the statistics in {@link ChangeStatsSerializer} version 1. Version 2 appends the
 * position deletes (a count of files, then per file its location, a count and the positions) and
 * the number of equality fallbacks. Version 3 writes the statistics in {@link
 * ChangeStatsSerializer} version 2, with the Kafka offsets. Version 4 appends the compacted data
 * files (a count and strings). Version 5 appends the positions of the compacted rows, in the form
 * of the position deletes. Version 6 appends the table, where one committer commits several tables:
 * whether it follows, then the name. Version 7 writes the statistics in {@link
 * ChangeStatsSerializer} version 3, with the position of the table's latest truncate.
 */
public final class ChangeCommittableSerializer
    implements SimpleVersionedSerializer<ChangeCommittable> {

  public static final int VERSION_1 = 1;
  public static final int VERSION_2 = 2;
  public static final int VERSION_3 = 3;
  public static final int VERSION_4 = 4;
  public static final int VERSION_5 = 5;
  public static final int VERSION_6 = 6;
  public static final int VERSION_7 = 7;
  private static final int CURRENT = VERSION_7;

  @Override
  public int getVersion() {
    return CURRENT;
  }

  @Override
  public byte[] serialize(ChangeCommittable committable) throws IOException {
    DataOutputSerializer out = new DataOutputSerializer(256);
    writeStrings(committable.dataFiles(), out);
    writeStrings(committable.deleteFiles(), out);
    writeStrings(committable.referencedDataFiles(), out);
    ChangeStatsSerializer.write(committable.stats(), out);
    writePositions(committable.positionDeletes(), out);
    out.writeLong(committable.equalityFallbacks());
    writeStrings(committable.compactedDataFiles(), out);
    writePositions(committable.compactedRows(), out);
    out.writeBoolean(committable.table() != null);
    if (committable.table() != null) {
      Utf8Strings.write(committable.table(), out);
    }
    return out.getCopyOfBuffer();
  }

  @Override
  public ChangeCommittable deserialize(int version, byte[] bytes) throws IOException {
    if (version < VERSION_1 || version > VERSION_7) {
      throw new IOException("unknown version " + version + " of a serialized change committable");
    }
    DataInputDeserializer in = new DataInputDeserializer(bytes);
    List<String> data = readStrings(in);
    List<String> deletes = readStrings(in);
    List<String> referenced = readStrings(in);
    ChangeStats stats =
        ChangeStatsSerializer.read(
            version >= VERSION_7
                ? ChangeStatsSerializer.VERSION_3
                : version >= VERSION_3
                    ? ChangeStatsSerializer.VERSION_2
                    : ChangeStatsSerializer.VERSION_1,
            in);
    if (version == VERSION_1) {
      return new ChangeCommittable(data, deletes, referenced, stats);
    }
    PositionDeletes positions = readPositions(in);
    long fallbacks = in.readLong();
    List<String> compacted = version >= VERSION_4 ? readStrings(in) : List.of();
    PositionDeletes compactedRows = version >= VERSION_5 ? readPositions(in) : PositionDeletes.NONE;
    String table = version >= VERSION_6 && in.readBoolean() ? Utf8Strings.read(in) : null;
    return new ChangeCommittable(
        data, deletes, referenced, stats, positions, fallbacks, compacted, compactedRows, table);
  }

  private static void writePositions(PositionDeletes deletes, DataOutputView out)
      throws IOException {
    out.writeInt(deletes.files().size());
    for (String file : deletes.files()) {
      Utf8Strings.write(file, out);
      long[] positions = deletes.positions(file);
      out.writeInt(positions.length);
      for (long position : positions) {
        out.writeLong(position);
      }
    }
  }

  private static PositionDeletes readPositions(DataInputView in) throws IOException {
    int files = in.readInt();
    Map<String, long[]> positions = new HashMap<>(files);
    for (int i = 0; i < files; i++) {
      String file = Utf8Strings.read(in);
      long[] filePositions = new long[in.readInt()];
      for (int j = 0; j < filePositions.length; j++) {
        filePositions[j] = in.readLong();
      }
      positions.put(file, filePositions);
    }
    return PositionDeletes.of(positions);
  }

  private static void writeStrings(List<String> values, DataOutputView out) throws IOException {
    out.writeInt(values.size());
    for (String value : values) {
      Utf8Strings.write(value, out);
    }
  }

  private static List<String> readStrings(DataInputView in) throws IOException {
    int count = in.readInt();
    List<String> values = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      values.add(Utf8Strings.read(in));
    }
    return values;
  }
}
