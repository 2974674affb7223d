package io.icebergcdc.cdc.typeutils;

import java.io.IOException;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;
import org.apache.flink.table.data.DecimalData;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.TimestampData;
import org.apache.flink.types.RowKind;

/**
 * Rows written with each value's type beside it, for the rows of a schema that the serializer was
 * not built with: a table's schema that changed while the job runs ({@link
 * io.icebergcdc.cdc.ChangeEvent#rowSchemaId()}). A {@code RowDataSerializer} needs the row type
 * before it reads a byte; these rows are read without one, into a {@link GenericRowData} whose
 * values have the internal classes of the types the sources produce (boolean, int, long, float,
 * double, string, decimal, timestamp, binary; dates and times as ints).
 *
 * <p>The rows must be {@link GenericRowData}, as the sources and the conversions between schemas
 * make them: its values can be read without their types.
 */
final class SelfDescribingRows {

  private static final byte NULL = 0;
  private static final byte BOOLEAN = 1;
  private static final byte INT = 2;
  private static final byte LONG = 3;
  private static final byte FLOAT = 4;
  private static final byte DOUBLE = 5;
  private static final byte STRING = 6;
  private static final byte DECIMAL = 7;
  private static final byte TIMESTAMP = 8;
  private static final byte BINARY = 9;

  private static final RowKind[] KINDS = RowKind.values();

  private SelfDescribingRows() {}

  static void write(RowData row, DataOutputView out) throws IOException {
    GenericRowData generic = generic(row);
    out.writeByte(row.getRowKind().ordinal());
    int arity = generic.getArity();
    out.writeInt(arity);
    for (int i = 0; i < arity; i++) {
      writeValue(generic.getField(i), i, out);
    }
  }

  static GenericRowData read(DataInputView in) throws IOException {
    RowKind kind = KINDS[in.readByte()];
    int arity = in.readInt();
    GenericRowData row = new GenericRowData(kind, arity);
    for (int i = 0; i < arity; i++) {
      row.setField(i, readValue(in));
    }
    return row;
  }

  /** A copy whose mutable values (byte arrays) are copies too; the others are immutable. */
  static GenericRowData copy(RowData row) {
    GenericRowData generic = generic(row);
    GenericRowData copy = new GenericRowData(generic.getRowKind(), generic.getArity());
    for (int i = 0; i < generic.getArity(); i++) {
      Object value = generic.getField(i);
      copy.setField(i, value instanceof byte[] bytes ? bytes.clone() : value);
    }
    return copy;
  }

  /** {@code row}, whose values can be read without their types. */
  private static GenericRowData generic(RowData row) {
    if (!(row instanceof GenericRowData generic)) {
      throw new IllegalArgumentException(
          "a row of a schema the serializer was not built with must be a GenericRowData, not a "
              + row.getClass().getName());
    }
    return generic;
  }

  private static void writeValue(Object value, int position, DataOutputView out)
      throws IOException {
    if (value == null) {
      out.writeByte(NULL);
    } else if (value instanceof Boolean b) {
      out.writeByte(BOOLEAN);
      out.writeBoolean(b);
    } else if (value instanceof Integer n) {
      out.writeByte(INT);
      out.writeInt(n);
    } else if (value instanceof Long n) {
      out.writeByte(LONG);
      out.writeLong(n);
    } else if (value instanceof Float f) {
      out.writeByte(FLOAT);
      out.writeFloat(f);
    } else if (value instanceof Double d) {
      out.writeByte(DOUBLE);
      out.writeDouble(d);
    } else if (value instanceof StringData s) {
      byte[] utf8 = s.toBytes();
      out.writeByte(STRING);
      out.writeInt(utf8.length);
      out.write(utf8);
    } else if (value instanceof DecimalData d) {
      byte[] unscaled = d.toUnscaledBytes();
      out.writeByte(DECIMAL);
      out.writeByte(d.precision());
      out.writeByte(d.scale());
      out.writeInt(unscaled.length);
      out.write(unscaled);
    } else if (value instanceof TimestampData t) {
      out.writeByte(TIMESTAMP);
      out.writeLong(t.getMillisecond());
      out.writeInt(t.getNanoOfMillisecond());
    } else if (value instanceof byte[] bytes) {
      out.writeByte(BINARY);
      out.writeInt(bytes.length);
      out.write(bytes);
    } else {
      throw new IllegalArgumentException(
          "cannot serialize a value of " + value.getClass().getName() + " at position " + position);
    }
  }

  private static Object readValue(DataInputView in) throws IOException {
    byte type = in.readByte();
    switch (type) {
      case NULL:
        return null;
      case BOOLEAN:
        return in.readBoolean();
      case INT:
        return in.readInt();
      case LONG:
        return in.readLong();
      case FLOAT:
        return in.readFloat();
      case DOUBLE:
        return in.readDouble();
      case STRING:
        return StringData.fromBytes(readBytes(in));
      case DECIMAL:
        int precision = in.readUnsignedByte();
        int scale = in.readUnsignedByte();
        return DecimalData.fromUnscaledBytes(readBytes(in), precision, scale);
      case TIMESTAMP:
        return TimestampData.fromEpochMillis(in.readLong(), in.readInt());
      case BINARY:
        return readBytes(in);
      default:
        throw new IOException("unknown value type " + type + " in a self-describing row");
    }
  }

  private static byte[] readBytes(DataInputView in) throws IOException {
    byte[] bytes = new byte[in.readInt()];
    in.readFully(bytes);
    return bytes;
  }
}
