package io.icebergcdc.capture;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.core.memory.DataOutputView;
import org.apache.flink.util.StringUtils;

/**
 * Writes {@link CaptureSplit}s into checkpoints, and the enumerator's state ({@link
 * CaptureEnumeratorState}).
 *
 * <p>Version 2: a tag byte, then for the log's split the offset entries (key and value strings),
 * the history records and whether the connector snapshots; for a chunk its topic, number and the
 * three key lists. Version 1 (builds before chunked snapshots) wrote the log's split without tag
 * and flag, and is read as a split whose connector snapshots, as it did. Strings are written with
 * Flink's {@link StringUtils#writeString}, which has no 64 KB limit.
 */
public final class CaptureSplitSerializer implements SimpleVersionedSerializer<CaptureSplit> {

  public static final CaptureSplitSerializer INSTANCE = new CaptureSplitSerializer();

  static final int VERSION_1 = 1;
  private static final int VERSION = 2;
  private static final byte LOG = 0;
  private static final byte CHUNK = 1;

  @Override
  public int getVersion() {
    return VERSION;
  }

  @Override
  public byte[] serialize(CaptureSplit split) throws IOException {
    DataOutputSerializer out = new DataOutputSerializer(256);
    write(split, out);
    return out.getCopyOfBuffer();
  }

  @Override
  public CaptureSplit deserialize(int version, byte[] bytes) throws IOException {
    return read(version, new DataInputDeserializer(bytes));
  }

  static void write(CaptureSplit split, DataOutputView out) throws IOException {
    if (split instanceof DebeziumSplit log) {
      out.writeByte(LOG);
      writeLog(log, out);
      out.writeBoolean(log.connectorSnapshots());
    } else {
      SnapshotChunk chunk = (SnapshotChunk) split;
      out.writeByte(CHUNK);
      StringUtils.writeString(chunk.topic(), out);
      out.writeLong(chunk.number());
      writeList(chunk.lower(), out);
      writeList(chunk.upper(), out);
      writeList(chunk.after(), out);
    }
  }

  static CaptureSplit read(int version, DataInputView in) throws IOException {
    checkVersion(version);
    if (version == VERSION_1) {
      return readLog(in, true);
    }
    byte tag = in.readByte();
    if (tag == LOG) {
      DebeziumSplit log = readLog(in, false);
      return log.withConnectorSnapshots(in.readBoolean());
    }
    if (tag != CHUNK) {
      throw new IOException("unknown kind " + tag + " of capture split");
    }
    return new SnapshotChunk(
        StringUtils.readString(in), in.readLong(), readList(in), readList(in), readList(in));
  }

  private static void writeLog(DebeziumSplit split, DataOutputView out) throws IOException {
    out.writeInt(split.offsets().size());
    for (Map.Entry<String, String> entry : split.offsets().entrySet()) {
      StringUtils.writeString(entry.getKey(), out);
      StringUtils.writeString(entry.getValue(), out);
    }
    writeList(split.schemaHistory(), out);
  }

  private static DebeziumSplit readLog(DataInputView in, boolean connectorSnapshots)
      throws IOException {
    int offsetCount = in.readInt();
    Map<String, String> offsets = new LinkedHashMap<>();
    for (int i = 0; i < offsetCount; i++) {
      offsets.put(StringUtils.readString(in), StringUtils.readString(in));
    }
    return new DebeziumSplit(offsets, readList(in), connectorSnapshots);
  }

  static void writeList(List<String> values, DataOutputView out) throws IOException {
    out.writeInt(values.size());
    for (String value : values) {
      StringUtils.writeString(value, out);
    }
  }

  static List<String> readList(DataInputView in) throws IOException {
    int count = in.readInt();
    List<String> values = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      values.add(StringUtils.readString(in));
    }
    return values;
  }

  static void checkVersion(int version) throws IOException {
    if (version != VERSION && version != VERSION_1) {
      throw new IOException(
          "unknown version "
              + version
              + " of the capture split; this build reads "
              + VERSION_1
              + " and "
              + VERSION);
    }
  }

  /** The enumerator's state; version 1 was the list of log splits it had not handed out. */
  static final class StateSerializer implements SimpleVersionedSerializer<CaptureEnumeratorState> {

    @Override
    public int getVersion() {
      return VERSION;
    }

    @Override
    public byte[] serialize(CaptureEnumeratorState state) throws IOException {
      DataOutputSerializer out = new DataOutputSerializer(256);
      out.writeBoolean(state.chunked());
      out.writeInt(state.unassigned().size());
      for (CaptureSplit split : state.unassigned()) {
        write(split, out);
      }
      out.writeInt(state.tables().size());
      for (CaptureEnumeratorState.TableProgress table : state.tables()) {
        StringUtils.writeString(table.topic(), out);
        out.writeLong(table.nextChunk());
        writeList(table.nextLower(), out);
        out.writeBoolean(table.done());
      }
      return out.getCopyOfBuffer();
    }

    @Override
    public CaptureEnumeratorState deserialize(int version, byte[] bytes) throws IOException {
      checkVersion(version);
      DataInputDeserializer in = new DataInputDeserializer(bytes);
      boolean chunked = version != VERSION_1 && in.readBoolean();
      int count = in.readInt();
      List<CaptureSplit> splits = new ArrayList<>(count);
      for (int i = 0; i < count; i++) {
        splits.add(read(version, in));
      }
      List<CaptureEnumeratorState.TableProgress> tables = new ArrayList<>();
      if (version != VERSION_1) {
        int tableCount = in.readInt();
        for (int i = 0; i < tableCount; i++) {
          tables.add(
              new CaptureEnumeratorState.TableProgress(
                  StringUtils.readString(in), in.readLong(), readList(in), in.readBoolean()));
        }
      }
      return new CaptureEnumeratorState(chunked, splits, tables);
    }
  }
}
