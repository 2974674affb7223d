package io.icebergcdc.cdc.typeutils;

import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.ColumnMask;
import io.icebergcdc.cdc.Operation;
import io.icebergcdc.cdc.RowKey;
import io.icebergcdc.cdc.SourceSequence;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.SortedMap;
import java.util.TreeMap;
import org.apache.flink.api.common.typeutils.CompositeTypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.runtime.typeutils.RowDataSerializer;

/**
 * Serializes {@link ChangeEvent}s between operators, with Flink's {@link RowDataSerializer} for the
 * rows so that no generic (Kryo) serialization is involved.
 */
public final class ChangeEventSerializer extends TypeSerializer<ChangeEvent> {

  private static final long serialVersionUID = 1L;

  private static final Operation[] OPERATIONS = Operation.values();

  // What follows the source timestamp: bits of one byte, then the parts they announce in order.
  private static final int HAS_ORIGIN = 1;
  private static final int HAS_UNAVAILABLE_COLUMNS = 2;
  private static final int HAS_ROW_SCHEMA = 4;

  private static final int NO_ROW = 0;
  private static final int ROW = 1;
  private static final int SELF_DESCRIBING_ROW = 2;

  private final RowDataSerializer rowSerializer;

  /**
   * For the events of several tables, the row serializer of each by table name ({@link
   * ChangeEvent#table()}); null for the events of one schema, whatever table they name.
   */
  private final SortedMap<String, RowDataSerializer> tables;

  // The row serializer of the table read last (readTable), for the events of several tables.
  private transient RowDataSerializer tableRows;

  // The last table name read, and its bytes: a stream's events mostly name one table, which is
  // then read without decoding a new string each time. Per instance, like the row serializer's
  // reused row: duplicate() gives each thread its own.
  private transient byte[] tableBytes;
  private transient String table;
  private transient byte[] nameBuffer;

  public ChangeEventSerializer(RowDataSerializer rowSerializer) {
    this.rowSerializer = Objects.requireNonNull(rowSerializer, "rowSerializer");
    this.tables = null;
  }

  /**
   * The serializer of the events of several tables, each with its own schema: the rows of an event
   * are serialized with the serializer of the table it names.
   */
  public static ChangeEventSerializer ofTables(Map<String, RowDataSerializer> tables) {
    if (tables.isEmpty()) {
      throw new IllegalArgumentException("no table");
    }
    return new ChangeEventSerializer(new TreeMap<>(tables));
  }

  private ChangeEventSerializer(SortedMap<String, RowDataSerializer> tables) {
    this.rowSerializer = tables.get(tables.firstKey());
    this.tables = tables;
  }

  RowDataSerializer rowSerializer() {
    return rowSerializer;
  }

  /** The row serializers by table, or null for the events of one schema. */
  SortedMap<String, RowDataSerializer> tables() {
    return tables;
  }

  /**
   * The serializer of the rows of {@code table}; null for a table this stream was not built with,
   * whose changes may still pass with rows that describe themselves (a table that appeared while
   * the job runs, whose changes carry its schema's id).
   */
  private RowDataSerializer rowsOf(String table) {
    return tables == null ? rowSerializer : tables.get(table);
  }

  /** The serializer of the rows of {@code event}'s table, which must be one of this stream's. */
  private RowDataSerializer ownRowsOf(ChangeEvent event) {
    RowDataSerializer rows = rowsOf(event.table());
    if (rows == null) {
      throw new IllegalArgumentException(
          "a change of table "
              + event.table()
              + ", which is not one of this stream's ("
              + tables.keySet()
              + "), in the job's schema");
    }
    return rows;
  }

  @Override
  public boolean isImmutableType() {
    return false;
  }

  @Override
  public TypeSerializer<ChangeEvent> duplicate() {
    if (tables != null) {
      SortedMap<String, RowDataSerializer> copies = new TreeMap<>();
      tables.forEach((table, rows) -> copies.put(table, (RowDataSerializer) rows.duplicate()));
      return new ChangeEventSerializer(copies);
    }
    return new ChangeEventSerializer((RowDataSerializer) rowSerializer.duplicate());
  }

  @Override
  public ChangeEvent createInstance() {
    throw new UnsupportedOperationException("change events are immutable and have no empty form");
  }

  @Override
  public ChangeEvent copy(ChangeEvent from) {
    boolean ownRows = from.rowSchemaId() == ChangeEvent.JOB_SCHEMA;
    RowDataSerializer rowSerializer = ownRows ? ownRowsOf(from) : null;
    ChangeEvent copy =
        new ChangeEvent(
            from.table(),
            from.operation(),
            from.key(),
            copyRow(rowSerializer, ownRows, from.before()),
            copyRow(rowSerializer, ownRows, from.after()),
            from.sequence(),
            from.sourceTimestampMillis());
    if (!from.unavailableColumns().isEmpty()) {
      copy =
          copy.withUnavailableColumns(from.unavailableColumns())
              .withFilledColumns(copy.after(), from.missingColumns());
    }
    if (from.originPartition() != null) {
      copy = copy.withOrigin(from.originPartition(), from.originOffset());
    }
    return ownRows
        ? copy
        : copy.inSchema(
            from.rowSchemaId(),
            copy.before(),
            copy.after(),
            copy.unavailableColumns(),
            copy.missingColumns());
  }

  private static RowData copyRow(RowDataSerializer rows, boolean ownRows, RowData row) {
    if (row == null) {
      return null;
    }
    return ownRows ? rows.copy(row) : SelfDescribingRows.copy(row);
  }

  @Override
  public ChangeEvent copy(ChangeEvent from, ChangeEvent reuse) {
    return copy(from);
  }

  @Override
  public int getLength() {
    return -1;
  }

  @Override
  public void serialize(ChangeEvent event, DataOutputView out) throws IOException {
    boolean ownRows = event.rowSchemaId() == ChangeEvent.JOB_SCHEMA;
    RowDataSerializer rows = ownRows ? ownRowsOf(event) : null;
    out.writeUTF(event.table());
    out.writeByte(event.operation().ordinal());
    RowKeySerializer.INSTANCE.serialize(event.key(), out);
    writeRow(rows, ownRows, event.before(), out);
    writeRow(rows, ownRows, event.after(), out);
    SourceSequenceCodec.write(event.sequence(), out);
    out.writeLong(event.sourceTimestampMillis());
    boolean unavailable = !event.unavailableColumns().isEmpty();
    out.writeByte(
        (event.originPartition() != null ? HAS_ORIGIN : 0)
            | (unavailable ? HAS_UNAVAILABLE_COLUMNS : 0)
            | (ownRows ? 0 : HAS_ROW_SCHEMA));
    if (event.originPartition() != null) {
      out.writeUTF(event.originPartition());
      out.writeLong(event.originOffset());
    }
    if (unavailable) {
      writeMask(event.unavailableColumns(), out);
      writeMask(event.missingColumns(), out);
    }
    if (!ownRows) {
      out.writeInt(event.rowSchemaId());
    }
  }

  @Override
  public ChangeEvent deserialize(DataInputView in) throws IOException {
    String table = readTable(in);
    RowDataSerializer rows = tables == null ? rowSerializer : tableRows;
    Operation operation = OPERATIONS[in.readByte()];
    RowKey key = RowKeySerializer.INSTANCE.deserialize(in);
    RowData before = readRow(rows, in);
    RowData after = readRow(rows, in);
    SourceSequence sequence = SourceSequenceCodec.read(in);
    long ts = in.readLong();
    ChangeEvent event = new ChangeEvent(table, operation, key, before, after, sequence, ts);
    int flags = in.readByte();
    if ((flags & HAS_ORIGIN) != 0) {
      event = event.withOrigin(in.readUTF(), in.readLong());
    }
    if ((flags & HAS_UNAVAILABLE_COLUMNS) != 0) {
      ColumnMask unavailable = readMask(in);
      event = event.withUnavailableColumns(unavailable).withFilledColumns(after, readMask(in));
    }
    if ((flags & HAS_ROW_SCHEMA) != 0) {
      event =
          event.inSchema(
              in.readInt(), before, after, event.unavailableColumns(), event.missingColumns());
    }
    return event;
  }

  private static void writeMask(ColumnMask mask, DataOutputView out) throws IOException {
    long[] words = mask.words();
    out.writeShort(words.length);
    for (long word : words) {
      out.writeLong(word);
    }
  }

  private static ColumnMask readMask(DataInputView in) throws IOException {
    long[] words = new long[in.readUnsignedShort()];
    for (int i = 0; i < words.length; i++) {
      words[i] = in.readLong();
    }
    return ColumnMask.ofWords(words);
  }

  @Override
  public ChangeEvent deserialize(ChangeEvent reuse, DataInputView in) throws IOException {
    return deserialize(in);
  }

  @Override
  public void copy(DataInputView in, DataOutputView out) throws IOException {
    serialize(deserialize(in), out);
  }

  /** Reads what {@code writeUTF} wrote, returning the last table's string if the bytes match. */
  private String readTable(DataInputView in) throws IOException {
    int length = in.readUnsignedShort();
    if (nameBuffer == null || nameBuffer.length < length + 2) {
      nameBuffer = new byte[Math.max(64, length + 2)];
    }
    in.readFully(nameBuffer, 2, length);
    if (table != null
        && Arrays.equals(nameBuffer, 2, length + 2, tableBytes, 0, tableBytes.length)) {
      return table;
    }
    nameBuffer[0] = (byte) (length >>> 8);
    nameBuffer[1] = (byte) length;
    table = new DataInputDeserializer(nameBuffer, 0, length + 2).readUTF();
    tableBytes = Arrays.copyOfRange(nameBuffer, 2, length + 2);
    if (tables != null) {
      tableRows = rowsOf(table);
    }
    return table;
  }

  private static void writeRow(
      RowDataSerializer rows, boolean ownRows, RowData row, DataOutputView out) throws IOException {
    if (row == null) {
      out.writeByte(NO_ROW);
    } else if (ownRows) {
      out.writeByte(ROW);
      rows.serialize(row, out);
    } else {
      out.writeByte(SELF_DESCRIBING_ROW);
      SelfDescribingRows.write(row, out);
    }
  }

  private static RowData readRow(RowDataSerializer rows, DataInputView in) throws IOException {
    int marker = in.readByte();
    switch (marker) {
      case NO_ROW:
        return null;
      case ROW:
        if (rows == null) {
          throw new IOException(
              "a row in the job's schema of a table this stream was not built with");
        }
        return rows.deserialize(in);
      case SELF_DESCRIBING_ROW:
        return SelfDescribingRows.read(in);
      default:
        throw new IOException("unknown row marker " + marker);
    }
  }

  @Override
  public boolean equals(Object obj) {
    return obj instanceof ChangeEventSerializer that
        && rowSerializer.equals(that.rowSerializer)
        && Objects.equals(tables, that.tables);
  }

  @Override
  public int hashCode() {
    return rowSerializer.hashCode();
  }

  @Override
  public TypeSerializerSnapshot<ChangeEvent> snapshotConfiguration() {
    return tables == null
        ? new ChangeEventSerializerSnapshot(this)
        : new ChangeEventsOfTablesSnapshot(this);
  }

  /** Snapshot of a {@link ChangeEventSerializer}: the snapshot of its row serializer. */
  public static final class ChangeEventSerializerSnapshot
      extends CompositeTypeSerializerSnapshot<ChangeEvent, ChangeEventSerializer> {

    // Version 2: events carry their Kafka origin. Version 3: a byte of flags after the timestamp
    // (origin, columns the source did not send). Events travel between operators, and are in
    // state only inside the dedup's changes awaiting their rows (its own format, version 1 of
    // which holds these bytes of version 3: a change of them needs a new format there). No data
    // of an earlier version is ever read with this serializer.
    private static final int CURRENT_VERSION = 3;

    public ChangeEventSerializerSnapshot() {}

    ChangeEventSerializerSnapshot(ChangeEventSerializer serializer) {
      super(serializer);
    }

    @Override
    protected int getCurrentOuterSnapshotVersion() {
      return CURRENT_VERSION;
    }

    @Override
    protected TypeSerializer<?>[] getNestedSerializers(ChangeEventSerializer outer) {
      return new TypeSerializer<?>[] {outer.rowSerializer()};
    }

    @Override
    protected ChangeEventSerializer createOuterSerializerWithNestedSerializers(
        TypeSerializer<?>[] nested) {
      return new ChangeEventSerializer((RowDataSerializer) nested[0]);
    }
  }

  /**
   * Snapshot of a {@link ChangeEventSerializer} of several tables: the tables' names, and the
   * snapshots of their row serializers. Such events travel between operators only.
   */
  public static final class ChangeEventsOfTablesSnapshot
      extends CompositeTypeSerializerSnapshot<ChangeEvent, ChangeEventSerializer> {

    private static final int CURRENT_VERSION = 1;

    private List<String> names;

    public ChangeEventsOfTablesSnapshot() {}

    ChangeEventsOfTablesSnapshot(ChangeEventSerializer serializer) {
      super(serializer);
      this.names = new ArrayList<>(serializer.tables().keySet());
    }

    @Override
    protected int getCurrentOuterSnapshotVersion() {
      return CURRENT_VERSION;
    }

    @Override
    protected void writeOuterSnapshot(DataOutputView out) throws IOException {
      out.writeInt(names.size());
      for (String name : names) {
        out.writeUTF(name);
      }
    }

    @Override
    protected void readOuterSnapshot(
        int readOuterSnapshotVersion, DataInputView in, ClassLoader userCodeClassLoader)
        throws IOException {
      int size = in.readInt();
      names = new ArrayList<>(size);
      for (int i = 0; i < size; i++) {
        names.add(in.readUTF());
      }
    }

    @Override
    protected OuterSchemaCompatibility resolveOuterSchemaCompatibility(
        TypeSerializerSnapshot<ChangeEvent> oldSnapshot) {
      return oldSnapshot instanceof ChangeEventsOfTablesSnapshot old && names.equals(old.names)
          ? OuterSchemaCompatibility.COMPATIBLE_AS_IS
          : OuterSchemaCompatibility.INCOMPATIBLE;
    }

    @Override
    protected TypeSerializer<?>[] getNestedSerializers(ChangeEventSerializer outer) {
      return outer.tables().values().toArray(new TypeSerializer<?>[0]);
    }

    @Override
    protected ChangeEventSerializer createOuterSerializerWithNestedSerializers(
        TypeSerializer<?>[] nested) {
      SortedMap<String, RowDataSerializer> tables = new TreeMap<>();
      for (int i = 0; i < nested.length; i++) {
        tables.put(names.get(i), (RowDataSerializer) nested[i]);
      }
      return new ChangeEventSerializer(tables);
    }
  }
}
