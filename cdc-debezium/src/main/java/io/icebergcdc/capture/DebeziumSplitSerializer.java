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
 * Writes {@link DebeziumSplit}s, and lists of them (the enumerator's state), into checkpoints.
 *
 * <p>Version 1: the number of offset entries, each as key and value string; the number of history
 * records, each as a string. Strings are written with Flink's {@link StringUtils#writeString},
 * which has no 64 KB limit.
 */
public final class DebeziumSplitSerializer implements SimpleVersionedSerializer<DebeziumSplit> {

  public static final DebeziumSplitSerializer INSTANCE = new DebeziumSplitSerializer();

  private static final int VERSION = 1;

  @Override
  public int getVersion() {
    return VERSION;
  }

  @Override
  public byte[] serialize(DebeziumSplit split) throws IOException {
    DataOutputSerializer out = new DataOutputSerializer(256);
    write(split, out);
    return out.getCopyOfBuffer();
  }

  @Override
  public DebeziumSplit deserialize(int version, byte[] bytes) throws IOException {
    checkVersion(version);
    return read(new DataInputDeserializer(bytes));
  }

  static void write(DebeziumSplit split, DataOutputView out) throws IOException {
    out.writeInt(split.offsets().size());
    for (Map.Entry<String, String> entry : split.offsets().entrySet()) {
      StringUtils.writeString(entry.getKey(), out);
      StringUtils.writeString(entry.getValue(), out);
    }
    out.writeInt(split.schemaHistory().size());
    for (String record : split.schemaHistory()) {
      StringUtils.writeString(record, out);
    }
  }

  static DebeziumSplit read(DataInputView in) throws IOException {
    int offsetCount = in.readInt();
    Map<String, String> offsets = new LinkedHashMap<>();
    for (int i = 0; i < offsetCount; i++) {
      offsets.put(StringUtils.readString(in), StringUtils.readString(in));
    }
    int historyCount = in.readInt();
    List<String> history = new ArrayList<>(historyCount);
    for (int i = 0; i < historyCount; i++) {
      history.add(StringUtils.readString(in));
    }
    return new DebeziumSplit(offsets, history);
  }

  static void checkVersion(int version) throws IOException {
    if (version != VERSION) {
      throw new IOException(
          "unknown version " + version + " of the Debezium split; this build reads " + VERSION);
    }
  }

  /** The enumerator's state: the splits it has not handed out. */
  static final class ListSerializer implements SimpleVersionedSerializer<List<DebeziumSplit>> {

    @Override
    public int getVersion() {
      return VERSION;
    }

    @Override
    public byte[] serialize(List<DebeziumSplit> splits) throws IOException {
      DataOutputSerializer out = new DataOutputSerializer(256);
      out.writeInt(splits.size());
      for (DebeziumSplit split : splits) {
        write(split, out);
      }
      return out.getCopyOfBuffer();
    }

    @Override
    public List<DebeziumSplit> deserialize(int version, byte[] bytes) throws IOException {
      checkVersion(version);
      DataInputDeserializer in = new DataInputDeserializer(bytes);
      int count = in.readInt();
      List<DebeziumSplit> splits = new ArrayList<>(count);
      for (int i = 0; i < count; i++) {
        splits.add(read(in));
      }
      return splits;
    }
  }
}
