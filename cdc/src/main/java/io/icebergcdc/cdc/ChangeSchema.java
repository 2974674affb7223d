package io.icebergcdc.cdc;

import java.io.Serializable;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.table.data.DecimalData;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.TimestampData;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.iceberg.Schema;
import org.apache.iceberg.flink.FlinkSchemaUtil;
import org.apache.iceberg.types.Types;

/**
 * The row schema of one table's changelog and its primary key.
 *
 * <p>Rows of the changelog are Flink {@link RowData} whose fields are the Iceberg schema's columns
 * in order, in Flink's internal representation of the types that Iceberg's Flink module maps them
 * to ({@link FlinkSchemaUtil#convert(Schema)}). The primary key is the schema's identifier fields.
 *
 * <p>This class also defines the two encodings that make rows comparable without keeping them:
 * {@link #keyOf(RowData)}, the canonical bytes of the key columns, and {@link #fingerprint}, a
 * 64-bit hash of a whole change that tells an exact duplicate from a different change.
 */
public final class ChangeSchema implements Serializable {

  private static final long serialVersionUID = 1L;

  /**
   * In a fingerprint of earlier builds, a column the source did not send: neither null (1) nor a
   * value (0).
   */
  private static final int UNAVAILABLE = 2;

  private final Schema schema;
  private final List<String> keyColumns;
  private final int[] keyPositions;
  private transient RowType rowType;
  private transient RowData.FieldGetter[] getters;
  private transient ColumnEncoder[] encoders;
  private transient ColumnEncoder[] fingerprintEncoders;
  private transient DataOutputSerializer buffer;

  /**
   * @param schema the table's schema; its identifier fields are the primary key
   * @throws IllegalArgumentException if the schema has no identifier fields
   */
  public ChangeSchema(Schema schema) {
    this.schema = Objects.requireNonNull(schema, "schema");
    Set<Integer> ids = schema.identifierFieldIds();
    if (ids.isEmpty()) {
      throw new IllegalArgumentException(
          "the table has no primary key (Iceberg identifier fields): " + schema);
    }
    List<Types.NestedField> columns = schema.columns();
    List<String> names = new ArrayList<>();
    List<Integer> positions = new ArrayList<>();
    for (int i = 0; i < columns.size(); i++) {
      if (ids.contains(columns.get(i).fieldId())) {
        names.add(columns.get(i).name());
        positions.add(i);
      }
    }
    if (positions.size() != ids.size()) {
      throw new IllegalArgumentException(
          "primary key columns must be top-level columns of the table: " + schema);
    }
    this.keyColumns = Collections.unmodifiableList(names);
    this.keyPositions = positions.stream().mapToInt(Integer::intValue).toArray();
  }

  public Schema schema() {
    return schema;
  }

  /** The Flink row type of the changelog's rows. */
  public RowType rowType() {
    if (rowType == null) {
      rowType = FlinkSchemaUtil.convert(schema);
    }
    return rowType;
  }

  /** The primary key's column names, in the order of the table's columns. */
  public List<String> keyColumns() {
    return keyColumns;
  }

  /** The positions of the primary key's columns in a row. */
  public int[] keyPositions() {
    return keyPositions.clone();
  }

  /** The canonical key of a row whose key columns are set. */
  public RowKey keyOf(RowData row) {
    DataOutputSerializer out = buffer();
    try {
      for (int pos : keyPositions) {
        if (!encoders()[pos].writeValue(row, out)) {
          throw new IllegalArgumentException(
              "primary key column '" + schema.columns().get(pos).name() + "' is null");
        }
      }
    } catch (java.io.IOException e) {
      throw new IllegalStateException("cannot encode a key in memory", e);
    }
    return new RowKey(out.getCopyOfBuffer());
  }

  /**
   * A row of this schema with the key columns of {@code key} set, the others null: what a delete of
   * the key carries where only its key is known (a truncate deletes every key). The inverse of
   * {@link #keyOf}: an int column whose key was encoded from a value widened past the int range
   * holds it as a long, as a row of the widened schema does.
   */
  public GenericRowData keyRowOf(RowKey key) {
    GenericRowData row = new GenericRowData(schema.columns().size());
    org.apache.flink.core.memory.DataInputDeserializer in =
        new org.apache.flink.core.memory.DataInputDeserializer(key.bytes());
    try {
      for (int pos : keyPositions) {
        row.setField(pos, decode(rowType().getTypeAt(pos), in));
      }
      if (in.available() != 0) {
        throw new IllegalArgumentException(in.available() + " bytes left over");
      }
    } catch (java.io.IOException | RuntimeException e) {
      throw new IllegalArgumentException(
          "key " + key + " is not a key of " + keyColumns + ": " + e.getMessage(), e);
    }
    return row;
  }

  private static Object decode(LogicalType type, DataInputView in) throws java.io.IOException {
    switch (type.getTypeRoot()) {
      case BOOLEAN:
        return in.readBoolean();
      case INTEGER:
        long value = in.readLong();
        return value == (int) value ? (Object) (int) value : (Object) value;
      case DATE:
      case TIME_WITHOUT_TIME_ZONE:
        return in.readInt();
      case BIGINT:
        return in.readLong();
      case FLOAT:
        return Float.intBitsToFloat(in.readInt());
      case DOUBLE:
        return Double.longBitsToDouble(in.readLong());
      case CHAR:
      case VARCHAR:
        return StringData.fromBytes(bytes(in));
      case BINARY:
      case VARBINARY:
        return bytes(in);
      case DECIMAL:
        org.apache.flink.table.types.logical.DecimalType decimal =
            (org.apache.flink.table.types.logical.DecimalType) type;
        return DecimalData.fromUnscaledBytes(bytes(in), decimal.getPrecision(), decimal.getScale());
      case TIMESTAMP_WITHOUT_TIME_ZONE:
      case TIMESTAMP_WITH_LOCAL_TIME_ZONE:
        long millis = in.readLong();
        return TimestampData.fromEpochMillis(millis, in.readInt());
      default:
        throw new IllegalArgumentException("a key column of type " + type + " cannot be read back");
    }
  }

  private static byte[] bytes(DataInputView in) throws java.io.IOException {
    byte[] bytes = new byte[in.readInt()];
    in.readFully(bytes);
    return bytes;
  }

  /** The key columns of a row as {@code name=value} pairs, for messages. */
  public String describeKey(RowData row) {
    StringBuilder sb = new StringBuilder();
    for (int pos : keyPositions) {
      if (sb.length() > 0) {
        sb.append(", ");
      }
      Object value = row == null ? null : getters()[pos].getFieldOrNull(row);
      sb.append(schema.columns().get(pos).name()).append('=').append(show(value));
    }
    return sb.toString();
  }

  /** All columns of a row as {@code name=value} pairs, for messages and dead letters. */
  public String describeRow(RowData row) {
    if (row == null) {
      return "null";
    }
    StringBuilder sb = new StringBuilder("{");
    for (int pos = 0; pos < getters().length; pos++) {
      if (pos > 0) {
        sb.append(", ");
      }
      sb.append(schema.columns().get(pos).name())
          .append('=')
          .append(show(getters()[pos].getFieldOrNull(row)));
    }
    return sb.append('}').toString();
  }

  /** A change as its operation, table, source position and row's values, for dead letters. */
  public String describe(ChangeEvent event) {
    return event.operation()
        + " "
        + event.table()
        + " at "
        + event.sequence()
        + " "
        + describeRow(event.operation().isUpsert() ? event.after() : event.keyRow());
  }

  /**
   * A 64-bit hash of a change's operation kind (upsert or delete) and of the row it leaves: equal
   * for two deliveries of one change, and for two different changes only by a chance of about one
   * in 2<sup>64</sup>. Fingerprints are kept in the dedup's state: the hash ({@link RowKey#hash64})
   * and the encoding it hashes are part of the state format.
   *
   * <p>The same change has the same fingerprint in every schema the table takes while it lives,
   * whichever of them this one is: a job built again after the table took a column or widened one
   * (a restore into a new build) still tells a change delivered again from a different one. So the
   * row's values are hashed by their position with nulls left out (a column added since is null in
   * the rows of changes before it; a column this schema lacks is hashed from the row of a later
   * schema that holds it), ints, dates and times as longs, floats as doubles. A float widened to a
   * double keeps its fingerprint only where the change's value reads the same either way.
   */
  public long fingerprint(ChangeEvent event) {
    DataOutputSerializer out = buffer();
    try {
      // A delete ordered by its deleted row's sequence value is fingerprinted as the write of that
      // row, so that the write, delivered after it, is told from another row at that value.
      boolean ofRow = event.operation().isUpsert() || event.sequence().isOfDeletedRow();
      out.writeBoolean(ofRow);
      RowData row = event.operation().isUpsert() ? event.after() : ofRow ? event.before() : null;
      if (row != null) {
        ColumnMask unavailable = event.unavailableColumns();
        ColumnEncoder[] encoders = fingerprintEncoders();
        for (int pos = 0; pos < row.getArity(); pos++) {
          if (unavailable.contains(pos)) {
            writeColumnTag(pos, true, out);
          } else if (!row.isNullAt(pos)) {
            writeColumnTag(pos, false, out);
            if (pos < encoders.length) {
              encoders[pos].writeValue(row, out);
            } else {
              // A column of a later schema than this one: its row comes as a GenericRowData.
              encodeByClass(((GenericRowData) row).getField(pos), out);
            }
          }
        }
      }
    } catch (java.io.IOException e) {
      throw new IllegalStateException("cannot encode a row in memory", e);
    }
    return RowKey.hash64(out.getSharedBuffer(), out.length());
  }

  /**
   * Writes which column a fingerprint's next value is of, and whether the source did not send it
   * (then no value follows): its position and the flag as a variable-length number, one byte for
   * the first 64 columns.
   */
  private static void writeColumnTag(int pos, boolean notSent, DataOutputSerializer out)
      throws java.io.IOException {
    int tag = pos << 1 | (notSent ? 1 : 0);
    while ((tag & ~0x7F) != 0) {
      out.writeByte((tag & 0x7F) | 0x80);
      tag >>>= 7;
    }
    out.writeByte(tag);
  }

  /**
   * Whether {@code fingerprint}, as the dedup's state holds it for a key's last change, is that of
   * {@code event}: {@link #fingerprint} or, for states written by builds before it, a fingerprint
   * they took ({@link #fingerprintOfEarlierBuilds}). An earlier build hashed the columns of the
   * schema it was built with, which the table's later schemas extend (columns are added at the
   * end), so the fingerprint of any first columns of this schema is taken as that build's: this
   * one's, or an earlier build's that lacked the columns after them.
   */
  public boolean isFingerprintOf(long fingerprint, ChangeEvent event) {
    if (fingerprint(event) == fingerprint) {
      return true;
    }
    DataOutputSerializer out = buffer();
    int[] ends = earlierBuildsBytes(event, out);
    for (int columns = ends.length - 1; columns >= 0; columns--) {
      if (RowKey.hash64(out.getSharedBuffer(), ends[columns]) == fingerprint) {
        return true;
      }
    }
    return false;
  }

  /**
   * The fingerprint of builds before {@link #fingerprint} was stable across schemas: this schema's
   * columns in order, each with a null flag; ints as longs.
   */
  long fingerprintOfEarlierBuilds(ChangeEvent event) {
    DataOutputSerializer out = buffer();
    int[] ends = earlierBuildsBytes(event, out);
    return RowKey.hash64(out.getSharedBuffer(), ends[ends.length - 1]);
  }

  /**
   * Writes what {@link #fingerprintOfEarlierBuilds} hashes into {@code out}; returns where the
   * bytes of the operation and of each number of first columns end (index 0: none of them, for a
   * delete all of them).
   */
  private int[] earlierBuildsBytes(ChangeEvent event, DataOutputSerializer out) {
    ColumnEncoder[] encoders = encoders();
    int[] ends = new int[encoders.length + 1];
    try {
      out.writeBoolean(event.operation().isUpsert());
      RowData row = event.operation().isUpsert() ? event.after() : null;
      ColumnMask unavailable = event.unavailableColumns();
      ends[0] = out.length();
      for (int pos = 0; pos < encoders.length; pos++) {
        if (row != null) {
          if (unavailable.contains(pos)) {
            out.writeByte(UNAVAILABLE);
          } else {
            encoders[pos].writeNullAndValue(row, out);
          }
        }
        ends[pos + 1] = out.length();
      }
    } catch (java.io.IOException e) {
      throw new IllegalStateException("cannot encode a row in memory", e);
    }
    return ends;
  }

  /**
   * The upsert {@code event} with the values of its {@link ChangeEvent#missingColumns()} taken from
   * {@code source}, a row of the same key that the change followed, except where {@code source}
   * lacks them too ({@code sourceMissing}); the event itself if it misses nothing.
   */
  public ChangeEvent fillMissing(ChangeEvent event, RowData source, ColumnMask sourceMissing) {
    ColumnMask missing = event.missingColumns();
    if (missing.isEmpty()) {
      return event;
    }
    // A row of the table's schema before a column was added to it (while the job runs) lacks that
    // column: it stays missing.
    for (int pos = source.getArity(); pos < schema.columns().size(); pos++) {
      if (missing.contains(pos)) {
        sourceMissing = sourceMissing.with(pos);
      }
    }
    ColumnMask taken = missing.minus(sourceMissing);
    RowData after = event.after();
    RowData.FieldGetter[] getters = getters();
    GenericRowData filled = new GenericRowData(after.getRowKind(), getters.length);
    for (int pos = 0; pos < getters.length; pos++) {
      filled.setField(pos, getters[pos].getFieldOrNull(taken.contains(pos) ? source : after));
    }
    return event.withFilledColumns(filled, missing.and(sourceMissing));
  }

  /** The names of {@code columns}, for messages. */
  public String describeColumns(ColumnMask columns) {
    StringBuilder sb = new StringBuilder();
    columns.forEach(
        pos -> {
          if (sb.length() > 0) {
            sb.append(", ");
          }
          sb.append('\'').append(schema.columns().get(pos).name()).append('\'');
        });
    return sb.toString();
  }

  /** A reused buffer: each instance serves one task thread. */
  private DataOutputSerializer buffer() {
    if (buffer == null) {
      buffer = new DataOutputSerializer(256);
    }
    buffer.clear();
    return buffer;
  }

  private RowData.FieldGetter[] getters() {
    if (getters == null) {
      RowType type = rowType();
      RowData.FieldGetter[] result = new RowData.FieldGetter[type.getFieldCount()];
      for (int i = 0; i < result.length; i++) {
        result[i] = RowData.createFieldGetter(type.getTypeAt(i), i);
      }
      getters = result;
    }
    return getters;
  }

  /** The encoders of keys ({@link #keyOf}) and of {@link #fingerprintOfEarlierBuilds}. */
  private ColumnEncoder[] encoders() {
    if (encoders == null) {
      encoders = encoders(false);
    }
    return encoders;
  }

  /** The encoders of {@link #fingerprint}. */
  private ColumnEncoder[] fingerprintEncoders() {
    if (fingerprintEncoders == null) {
      fingerprintEncoders = encoders(true);
    }
    return fingerprintEncoders;
  }

  /**
   * @param stable as {@link #fingerprint} encodes values: ints, dates and times as longs, floats as
   *     doubles; else as keys are encoded
   */
  private ColumnEncoder[] encoders(boolean stable) {
    RowType type = rowType();
    ColumnEncoder[] result = new ColumnEncoder[type.getFieldCount()];
    for (int i = 0; i < result.length; i++) {
      result[i] = encoderOf(type.getTypeAt(i), i, getters()[i], stable);
    }
    return result;
  }

  /**
   * Writes one column's value as {@link #encode} does: numbers read as primitives, without the
   * boxing of a {@link RowData.FieldGetter}, which costs a tenth of a writer's time otherwise.
   */
  private abstract static class ColumnEncoder {

    /** Writes whether the value is null, then the value if not. */
    final void writeNullAndValue(RowData row, DataOutputSerializer out) throws java.io.IOException {
      int mark = out.length();
      out.writeBoolean(false);
      if (!writeValue(row, out)) {
        out.setPosition(mark);
        out.writeBoolean(true);
      }
    }

    /** Writes the value; false, having written nothing, if it is null. */
    abstract boolean writeValue(RowData row, DataOutputSerializer out) throws java.io.IOException;
  }

  private static ColumnEncoder encoderOf(
      LogicalType type, int pos, RowData.FieldGetter getter, boolean stable) {
    switch (type.getTypeRoot()) {
      case BOOLEAN:
        return primitive(pos, (row, out) -> out.writeBoolean(row.getBoolean(pos)));
      case INTEGER:
        return primitive(pos, (row, out) -> out.writeLong(intOrWidened(row, pos)));
      case DATE:
      case TIME_WITHOUT_TIME_ZONE:
        return stable
            ? primitive(pos, (row, out) -> out.writeLong(row.getInt(pos)))
            : primitive(pos, (row, out) -> out.writeInt(row.getInt(pos)));
      case BIGINT:
        return primitive(pos, (row, out) -> out.writeLong(row.getLong(pos)));
      case FLOAT:
        return stable
            ? primitive(
                pos, (row, out) -> out.writeLong(Double.doubleToLongBits(floatAsDouble(row, pos))))
            : primitive(
                pos,
                (row, out) -> out.writeInt(Float.floatToIntBits((float) floatAsDouble(row, pos))));
      case DOUBLE:
        return primitive(
            pos, (row, out) -> out.writeLong(Double.doubleToLongBits(row.getDouble(pos))));
      default:
        return new ColumnEncoder() {
          @Override
          boolean writeValue(RowData row, DataOutputSerializer out) throws java.io.IOException {
            Object value = getter.getFieldOrNull(row);
            if (value == null) {
              return false;
            }
            if (stable) {
              encodeStable(value, type, out);
            } else {
              encode(value, type, out);
            }
            return true;
          }
        };
    }
  }

  /**
   * Writes a value as {@link #fingerprint} encodes it: ints, dates and times as longs, floats as
   * doubles, a nested value by its structure (a row's fields, an array's elements, each with a null
   * flag; a map's entries as the sum of their hashes, in whatever order the map holds them), the
   * others as keys are encoded.
   */
  private static void encodeStable(Object value, LogicalType type, DataOutputSerializer out)
      throws java.io.IOException {
    switch (type.getTypeRoot()) {
      case INTEGER:
      case DATE:
      case TIME_WITHOUT_TIME_ZONE:
        out.writeLong((Integer) value);
        break;
      case FLOAT:
        out.writeLong(Double.doubleToLongBits((Float) value));
        break;
      case ARRAY:
        writeElements(
            (org.apache.flink.table.data.ArrayData) value,
            ((org.apache.flink.table.types.logical.ArrayType) type).getElementType(),
            out);
        break;
      case MAP:
      case MULTISET:
        org.apache.flink.table.data.MapData map = (org.apache.flink.table.data.MapData) value;
        LogicalType keyType =
            type instanceof org.apache.flink.table.types.logical.MapType mapType
                ? mapType.getKeyType()
                : ((org.apache.flink.table.types.logical.MultisetType) type).getElementType();
        LogicalType valueType =
            type instanceof org.apache.flink.table.types.logical.MapType mapType
                ? mapType.getValueType()
                : new org.apache.flink.table.types.logical.IntType(false);
        org.apache.flink.table.data.ArrayData.ElementGetter keys =
            org.apache.flink.table.data.ArrayData.createElementGetter(keyType);
        org.apache.flink.table.data.ArrayData.ElementGetter values =
            org.apache.flink.table.data.ArrayData.createElementGetter(valueType);
        org.apache.flink.table.data.ArrayData keyArray = map.keyArray();
        org.apache.flink.table.data.ArrayData valueArray = map.valueArray();
        DataOutputSerializer entry = new DataOutputSerializer(64);
        long sum = 0;
        for (int i = 0; i < map.size(); i++) {
          entry.clear();
          writeElement(keys.getElementOrNull(keyArray, i), keyType, entry);
          writeElement(values.getElementOrNull(valueArray, i), valueType, entry);
          sum += RowKey.hash64(entry.getSharedBuffer(), entry.length());
        }
        out.writeInt(map.size());
        out.writeLong(sum);
        break;
      case ROW:
        RowData nested = (RowData) value;
        List<LogicalType> fields = type.getChildren();
        out.writeInt(fields.size());
        for (int i = 0; i < fields.size(); i++) {
          writeElement(
              RowData.createFieldGetter(fields.get(i), i).getFieldOrNull(nested),
              fields.get(i),
              out);
        }
        break;
      default:
        encode(value, type, out);
    }
  }

  /** Writes an array's size, then each element with a null flag. */
  private static void writeElements(
      org.apache.flink.table.data.ArrayData array,
      LogicalType elementType,
      DataOutputSerializer out)
      throws java.io.IOException {
    org.apache.flink.table.data.ArrayData.ElementGetter getter =
        org.apache.flink.table.data.ArrayData.createElementGetter(elementType);
    out.writeInt(array.size());
    for (int i = 0; i < array.size(); i++) {
      writeElement(getter.getElementOrNull(array, i), elementType, out);
    }
  }

  /** Writes a null flag, then the value if not null. */
  private static void writeElement(Object value, LogicalType type, DataOutputSerializer out)
      throws java.io.IOException {
    out.writeBoolean(value == null);
    if (value != null) {
      encodeStable(value, type, out);
    }
  }

  /**
   * An int column's value, also in the row of a later schema of the table that widened the column
   * to long (a change of a schema followed while the job runs): encoded as a long either way, the
   * same change has the same fingerprint in both.
   */
  private static long intOrWidened(RowData row, int pos) {
    return row instanceof GenericRowData generic && generic.getField(pos) instanceof Long widened
        ? widened
        : row.getInt(pos);
  }

  /** A float column's value as a double, also in the row of a later schema that widened it. */
  private static double floatAsDouble(RowData row, int pos) {
    return row instanceof GenericRowData generic && generic.getField(pos) instanceof Double widened
        ? widened
        : row.getFloat(pos);
  }

  /**
   * Writes a value of a column of a later schema than this one, from its class, as {@link
   * #fingerprint} encodes the values of this schema's columns of its type.
   */
  private static void encodeByClass(Object value, DataOutputSerializer out)
      throws java.io.IOException {
    if (value instanceof Boolean b) {
      out.writeBoolean(b);
    } else if (value instanceof Integer i) {
      out.writeLong(i);
    } else if (value instanceof Long l) {
      out.writeLong(l);
    } else if (value instanceof Float f) {
      out.writeLong(Double.doubleToLongBits(f));
    } else if (value instanceof Double d) {
      out.writeLong(Double.doubleToLongBits(d));
    } else if (value instanceof StringData string) {
      writeBytes(string.toBytes(), out);
    } else if (value instanceof byte[] bytes) {
      writeBytes(bytes, out);
    } else if (value instanceof DecimalData decimal) {
      writeBytes(decimal.toUnscaledBytes(), out);
    } else if (value instanceof TimestampData ts) {
      out.writeLong(ts.getMillisecond());
      out.writeInt(ts.getNanoOfMillisecond());
    } else {
      writeBytes(String.valueOf(value).getBytes(StandardCharsets.UTF_8), out);
    }
  }

  private static void writeBytes(byte[] bytes, DataOutputSerializer out)
      throws java.io.IOException {
    out.writeInt(bytes.length);
    out.write(bytes);
  }

  /** Writes a primitive column's value. */
  private interface PrimitiveWriter {
    void write(RowData row, DataOutputSerializer out) throws java.io.IOException;
  }

  private static ColumnEncoder primitive(int pos, PrimitiveWriter writer) {
    return new ColumnEncoder() {
      @Override
      boolean writeValue(RowData row, DataOutputSerializer out) throws java.io.IOException {
        if (row.isNullAt(pos)) {
          return false;
        }
        writer.write(row, out);
        return true;
      }
    };
  }

  private static void encode(Object value, LogicalType type, DataOutputSerializer out)
      throws java.io.IOException {
    switch (type.getTypeRoot()) {
      case BOOLEAN:
        out.writeBoolean((Boolean) value);
        break;
      case INTEGER:
        // As a long: a key column widened from int to bigint keeps its keys, and so its state.
        out.writeLong((Integer) value);
        break;
      case DATE:
      case TIME_WITHOUT_TIME_ZONE:
        out.writeInt((Integer) value);
        break;
      case BIGINT:
        out.writeLong((Long) value);
        break;
      case FLOAT:
        out.writeInt(Float.floatToIntBits((Float) value));
        break;
      case DOUBLE:
        out.writeLong(Double.doubleToLongBits((Double) value));
        break;
      case CHAR:
      case VARCHAR:
        byte[] utf8 = ((StringData) value).toBytes();
        out.writeInt(utf8.length);
        out.write(utf8);
        break;
      case BINARY:
      case VARBINARY:
        byte[] bytes = (byte[]) value;
        out.writeInt(bytes.length);
        out.write(bytes);
        break;
      case DECIMAL:
        byte[] unscaled = ((DecimalData) value).toUnscaledBytes();
        out.writeInt(unscaled.length);
        out.write(unscaled);
        break;
      case TIMESTAMP_WITHOUT_TIME_ZONE:
      case TIMESTAMP_WITH_LOCAL_TIME_ZONE:
        TimestampData ts = (TimestampData) value;
        out.writeLong(ts.getMillisecond());
        out.writeInt(ts.getNanoOfMillisecond());
        break;
      default:
        // Nested values only occur outside the key; their text form is canonical enough for a
        // fingerprint.
        byte[] text = String.valueOf(value).getBytes(StandardCharsets.UTF_8);
        out.writeInt(text.length);
        out.write(text);
    }
  }

  private static String show(Object value) {
    if (value instanceof byte[]) {
      StringBuilder sb = new StringBuilder("0x");
      for (byte b : (byte[]) value) {
        sb.append(Character.forDigit((b >> 4) & 0xF, 16)).append(Character.forDigit(b & 0xF, 16));
      }
      return sb.toString();
    }
    return String.valueOf(value);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof ChangeSchema && schema.sameSchema(((ChangeSchema) o).schema);
  }

  @Override
  public int hashCode() {
    return schema.asStruct().hashCode();
  }

  @Override
  public String toString() {
    return schema.asStruct() + " key " + keyColumns;
  }
}
