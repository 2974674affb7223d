package io.icebergcdc.sink.internal;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataInputViewStreamWrapper;
import org.apache.flink.core.memory.DataOutputViewStreamWrapper;
import org.apache.flink.runtime.state.KeyGroupStatePartitionStreamProvider;
import org.apache.flink.runtime.state.KeyGroupsList;
import org.apache.flink.runtime.state.KeyedStateCheckpointOutputStream;
import org.apache.flink.runtime.state.StateInitializationContext;
import org.apache.flink.runtime.state.StateSnapshotContext;

/**
 * The in-memory key indexes of the tables of a {@link PositionDeltaWriterOperator} of several, in
 * its raw keyed state: one stream per key group for the whole operator, each holding a format
 * number, the count of tables, and per table its name, the length of its part and the part as the
 * table's index writes a key group ({@link io.icebergcdc.dedup.KeyedDedup#writeIndex}). A restore
 * drops the parts of tables the operator does not write.
 */
final class TableIndexes {

  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(TableIndexes.class);

  /** The format of a key group of the raw keyed state of an operator of several tables. */
  private static final int INDEXES_FORMAT_1 = 1;

  /**
   * About how many bytes of index entries are held in memory at a time while a snapshot is written:
   * the key groups are written in as few runs as keep within it, each run sweeping every table's
   * index once.
   */
  private static final long BYTES_AT_A_TIME = 64L << 20;

  /** About the bytes of an entry as the index writes it. */
  private static final long BYTES_PER_ENTRY = 48;

  private TableIndexes() {}

  /** Hands each table's part of each restored key group of raw keyed state to its writer. */
  static void read(StateInitializationContext context, Map<String, TableDeltaWriter<?>> byTable)
      throws Exception {
    java.util.Set<String> dropped = new java.util.TreeSet<>();
    for (KeyGroupStatePartitionStreamProvider group : context.getRawKeyedStateInputs()) {
      try (java.io.InputStream stream = group.getStream()) {
        DataInputViewStreamWrapper in = new DataInputViewStreamWrapper(stream);
        int format = in.readInt();
        if (format != INDEXES_FORMAT_1) {
          throw new java.io.IOException(
              "unknown format "
                  + format
                  + " of the key indexes of key group "
                  + group.getKeyGroupId());
        }
        int tables = in.readInt();
        for (int i = 0; i < tables; i++) {
          String table = in.readUTF();
          byte[] part = new byte[in.readInt()];
          in.readFully(part);
          TableDeltaWriter<?> writer = byTable.get(table);
          if (writer == null) {
            dropped.add(table);
          } else {
            writer.readIndex(group.getKeyGroupId(), new DataInputDeserializer(part));
          }
        }
      }
    }
    for (TableDeltaWriter<?> writer : byTable.values()) {
      writer.indexRestored();
    }
    if (!dropped.isEmpty()) {
      LOG.info("Dropped the restored key index of tables this job no longer writes: {}", dropped);
    }
  }

  /**
   * Writes every key group of this subtask with each table's part of it, in runs of key groups:
   * each table's index writes the entries of a run's key groups into memory, then they are written
   * one key group after the other.
   */
  static void write(StateSnapshotContext context, Map<String, TableDeltaWriter<?>> byTable)
      throws Exception {
    KeyedStateCheckpointOutputStream out = context.getRawKeyedOperatorStateOutput();
    KeyGroupsList range = out.getKeyGroupList();
    int first = range.getKeyGroupId(0);
    int count = range.getNumberOfKeyGroups();
    DataOutputViewStreamWrapper view = new DataOutputViewStreamWrapper(out);
    long entries = 0;
    for (TableDeltaWriter<?> writer : byTable.values()) {
      entries += writer.indexSize();
    }
    long runs = Math.min(count, Math.max(1, entries * BYTES_PER_ENTRY / BYTES_AT_A_TIME + 1));
    int atATime = (int) ((count + runs - 1) / runs);
    for (int from = 0; from < count; from += atATime) {
      int groups = Math.min(atATime, count - from);
      Map<String, KeyGroupParts> parts = new TreeMap<>();
      for (Map.Entry<String, TableDeltaWriter<?>> table : byTable.entrySet()) {
        KeyGroupParts tableParts = new KeyGroupParts(first + from, groups);
        table.getValue().writeIndex(first + from, groups, tableParts, tableParts.view());
        if (tableParts.any()) {
          parts.put(table.getKey(), tableParts);
        }
      }
      for (int g = 0; g < groups; g++) {
        out.startNewKeyGroup(first + from + g);
        view.writeInt(INDEXES_FORMAT_1);
        int tables = 0;
        for (KeyGroupParts tableParts : parts.values()) {
          tables += tableParts.has(g) ? 1 : 0;
        }
        view.writeInt(tables);
        for (Map.Entry<String, KeyGroupParts> table : parts.entrySet()) {
          if (table.getValue().has(g)) {
            view.writeUTF(table.getKey());
            table.getValue().writeTo(g, view);
          }
        }
      }
    }
  }

  /** One table's parts of a run of key groups, as its index writes them, in memory. */
  private static final class KeyGroupParts extends java.io.OutputStream
      implements io.icebergcdc.dedup.KeyedDedup.KeyGroupStart {
    private final int first;
    private final Part[] parts;
    private Part current;

    KeyGroupParts(int first, int count) {
      this.first = first;
      this.parts = new Part[count];
    }

    DataOutputViewStreamWrapper view() {
      return new DataOutputViewStreamWrapper(this);
    }

    @Override
    public void start(int keyGroup) {
      current = new Part();
      parts[keyGroup - first] = current;
    }

    @Override
    public void write(int b) {
      current.write(b);
    }

    @Override
    public void write(byte[] bytes, int offset, int length) {
      current.write(bytes, offset, length);
    }

    boolean any() {
      return current != null;
    }

    boolean has(int index) {
      return parts[index] != null;
    }

    /** Writes the part of key group {@code index}: its length, then its bytes. */
    void writeTo(int index, DataOutputViewStreamWrapper out) throws java.io.IOException {
      parts[index].writeTo(out);
    }
  }

  /**
   * The bytes of one key group's part. An index writes a few small values, then its entries in one
   * large write: those are copied once, at their size, where a growing array would copy them again
   * at every doubling (a tenth of the writers' time at checkpoints every second, when it did).
   */
  private static final class Part {
    private static final int LARGE = 1024;
    private final List<byte[]> chunks = new ArrayList<>();
    private byte[] small = new byte[64];
    private int smallUsed;
    private int size;

    void write(int b) {
      if (smallUsed == small.length) {
        small = Arrays.copyOf(small, small.length * 2);
      }
      small[smallUsed++] = (byte) b;
      size++;
    }

    void write(byte[] bytes, int offset, int length) {
      if (length >= LARGE) {
        endSmall();
        chunks.add(Arrays.copyOfRange(bytes, offset, offset + length));
      } else {
        if (smallUsed + length > small.length) {
          small = Arrays.copyOf(small, Math.max(small.length * 2, smallUsed + length));
        }
        System.arraycopy(bytes, offset, small, smallUsed, length);
        smallUsed += length;
      }
      size = Math.addExact(size, length);
    }

    private void endSmall() {
      if (smallUsed > 0) {
        chunks.add(Arrays.copyOf(small, smallUsed));
        smallUsed = 0;
      }
    }

    void writeTo(DataOutputViewStreamWrapper out) throws java.io.IOException {
      out.writeInt(size);
      for (byte[] chunk : chunks) {
        out.write(chunk);
      }
      out.write(small, 0, smallUsed);
    }
  }
}
