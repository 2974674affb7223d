package io.icebergcdc.capture;

import io.icebergcdc.cdc.debezium.DebeziumJsonParser;
import io.icebergcdc.cdc.debezium.DebeziumTemporal;
import io.icebergcdc.cdc.debezium.UnfitValue;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.LocalDate;
import java.util.Arrays;
import java.util.UUID;
import java.util.function.Function;
import org.apache.flink.table.data.DecimalData;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.TimestampData;
import org.apache.iceberg.Schema;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;
import org.apache.kafka.connect.data.Field;
import org.apache.kafka.connect.data.Struct;

/**
 * How the value of one field of a Debezium row struct becomes the value of its column in a Flink
 * row: chosen once per schema from the column's Iceberg type and the field's Connect type and
 * semantic name (its unit), then applied to each record.
 *
 * <p>The values are those Kafka Connect's JSON converter followed by the JSON parser would give:
 * Debezium's temporal types in their units ({@code io.debezium.time.Date} days, {@code
 * MicroTimestamp} microseconds and so on), Connect's logical types ({@code Date}, {@code Time},
 * {@code Timestamp} as {@link java.util.Date}, {@code Decimal} as {@link BigDecimal}), zoned
 * timestamps as ISO-8601 text. Debezium's placeholder for an unchanged TOASTed value is left null,
 * and {@link #set} says so.
 */
final class StructFieldConversion {

  private static final byte[] UNAVAILABLE_BYTES =
      DebeziumJsonParser.UNAVAILABLE_VALUE.getBytes(StandardCharsets.UTF_8);
  private static final long MILLIS_PER_DAY = 86_400_000L;

  private final Field field;
  private final Types.NestedField column;
  private final int position;
  private final Function<Object, Object> convert;

  private StructFieldConversion(
      Field field, Types.NestedField column, int position, Function<Object, Object> convert) {
    this.field = field;
    this.column = column;
    this.position = position;
    this.convert = convert;
  }

  /** The conversion of a field to its column at {@code position} of the table's rows. */
  static StructFieldConversion of(Field field, Types.NestedField column, int position) {
    String unit = field.schema().name();
    return new StructFieldConversion(
        field, column, position, converter(column.type(), unit == null ? "" : unit));
  }

  /** A field the table has no column for: a record that has it cannot be applied. */
  static StructFieldConversion unknown(Field field, Schema table) {
    return new StructFieldConversion(
        field,
        null,
        -1,
        value -> {
          throw new IllegalArgumentException(
              "column '" + field.name() + "' is not in the table's schema " + table.asStruct());
        });
  }

  /**
   * Sets the field's value of {@code struct} in {@code row}; a null value leaves it null, and so
   * does Debezium's placeholder for a value the source did not send.
   *
   * @return whether the value was that placeholder
   */
  boolean set(Struct struct, GenericRowData row) {
    Object value = struct.get(field);
    if (column == null) {
      convert.apply(value);
      return false;
    }
    if (value == null) {
      return false;
    }
    if (isPlaceholder(value)) {
      return true;
    }
    try {
      row.setField(position, convert.apply(value));
    } catch (RuntimeException e) {
      throw UnfitValue.of(column, shown(value), e);
    }
    return false;
  }

  /** The column's position in the table's rows; -1 for a field the table has no column for. */
  int position() {
    return position;
  }

  /**
   * Whether {@code value} is Debezium's placeholder for an unchanged TOASTed value: its text in a
   * text column, its UTF-8 bytes in a binary one.
   */
  private boolean isPlaceholder(Object value) {
    switch (column.type().typeId()) {
      case STRING:
        return value instanceof String text && text.equals(DebeziumJsonParser.UNAVAILABLE_VALUE);
      case BINARY:
      case FIXED:
        if (value instanceof byte[] bytes) {
          return Arrays.equals(bytes, UNAVAILABLE_BYTES);
        }
        return value instanceof ByteBuffer buffer
            && buffer.remaining() == UNAVAILABLE_BYTES.length
            && buffer.equals(ByteBuffer.wrap(UNAVAILABLE_BYTES));
      default:
        return false;
    }
  }

  private static String shown(Object value) {
    if (value instanceof byte[] bytes) {
      return "binary of " + bytes.length + " bytes";
    }
    if (value instanceof ByteBuffer buffer) {
      return "binary of " + buffer.remaining() + " bytes";
    }
    return value instanceof String ? '"' + (String) value + '"' : String.valueOf(value);
  }

  private static Function<Object, Object> converter(Type type, String unit) {
    switch (type.typeId()) {
      case BOOLEAN:
        return value -> {
          if (!(value instanceof Boolean)) {
            throw new IllegalArgumentException("not a boolean");
          }
          return value;
        };
      case INTEGER:
        return value -> Math.toIntExact(integral(value));
      case LONG:
        return StructFieldConversion::integral;
      case FLOAT:
        return value -> (float) number(value);
      case DOUBLE:
        return StructFieldConversion::number;
      case STRING:
        return value -> {
          if (value instanceof String text) {
            return StringData.fromString(text);
          }
          if (value instanceof Number || value instanceof Boolean) {
            return StringData.fromString(String.valueOf(value));
          }
          throw new IllegalArgumentException("not text");
        };
      case DATE:
        return value -> {
          if (value instanceof java.util.Date date) {
            return Math.toIntExact(Math.floorDiv(date.getTime(), MILLIS_PER_DAY));
          }
          if (value instanceof String text) {
            return (int) LocalDate.parse(text).toEpochDay();
          }
          return Math.toIntExact(integral(value));
        };
      case TIME:
        return value -> timeMillis(value, unit);
      case TIMESTAMP:
        return ((Types.TimestampType) type).shouldAdjustToUTC()
            ? value -> timestampTz(value, unit)
            : value -> timestamp(value, unit);
      case DECIMAL:
        Types.DecimalType decimal = (Types.DecimalType) type;
        return value -> {
          BigDecimal big = decimal(value, decimal.scale());
          DecimalData data = DecimalData.fromBigDecimal(big, decimal.precision(), decimal.scale());
          if (data == null) {
            throw new IllegalArgumentException("does not fit " + decimal);
          }
          return data;
        };
      case UUID:
        return value -> {
          return uuidBytes(UUID.fromString((String) value));
        };
      case BINARY:
      case FIXED:
        return StructFieldConversion::bytes;
      default:
        return value -> {
          throw new IllegalArgumentException("type " + type + " is not supported in change events");
        };
    }
  }

  /** A UUID as a Flink row holds it: its 16 bytes, most significant first. */
  static byte[] uuidBytes(UUID uuid) {
    return ByteBuffer.allocate(16)
        .putLong(uuid.getMostSignificantBits())
        .putLong(uuid.getLeastSignificantBits())
        .array();
  }

  private static long integral(Object value) {
    if (value instanceof Long
        || value instanceof Integer
        || value instanceof Short
        || value instanceof Byte) {
      return ((Number) value).longValue();
    }
    if (value instanceof String text) {
      return Long.parseLong(text);
    }
    throw new IllegalArgumentException("not an integer");
  }

  private static double number(Object value) {
    if (value instanceof Float f) {
      // As its JSON text would be read: 0.1f as 0.1, not as the double nearest to the float.
      return Double.parseDouble(f.toString());
    }
    if (value instanceof Number number) {
      return number.doubleValue();
    }
    if (value instanceof String text) {
      return Double.parseDouble(text);
    }
    throw new IllegalArgumentException("not a number");
  }

  private static BigDecimal decimal(Object value, int scale) {
    if (value instanceof BigDecimal big) {
      return big.setScale(scale);
    }
    if (value instanceof String text) {
      return new BigDecimal(text).setScale(scale);
    }
    if (value instanceof byte[] || value instanceof ByteBuffer) {
      return new BigDecimal(new BigInteger(bytes(value)), scale);
    }
    if (value instanceof Number number) {
      return new BigDecimal(number.toString()).setScale(scale);
    }
    throw new IllegalArgumentException("not a decimal");
  }

  private static byte[] bytes(Object value) {
    if (value instanceof byte[] bytes) {
      return bytes;
    }
    if (value instanceof ByteBuffer buffer) {
      ByteBuffer copy = buffer.duplicate();
      byte[] bytes = new byte[copy.remaining()];
      copy.get(bytes);
      return bytes;
    }
    throw new IllegalArgumentException("not binary");
  }

  private static int timeMillis(Object value, String unit) {
    if (value instanceof java.util.Date date) {
      return (int) Math.floorMod(date.getTime(), MILLIS_PER_DAY);
    }
    return value instanceof String text
        ? DebeziumTemporal.timeMillis(text)
        : DebeziumTemporal.timeMillis(integral(value), unit);
  }

  private static TimestampData timestamp(Object value, String unit) {
    if (value instanceof java.util.Date date) {
      return TimestampData.fromEpochMillis(date.getTime());
    }
    return value instanceof String text
        ? DebeziumTemporal.timestamp(text)
        : DebeziumTemporal.fromEpoch(integral(value), unit);
  }

  private static TimestampData timestampTz(Object value, String unit) {
    if (value instanceof java.util.Date date) {
      return TimestampData.fromEpochMillis(date.getTime());
    }
    return value instanceof String text
        ? DebeziumTemporal.timestampTz(text)
        : DebeziumTemporal.fromEpoch(integral(value), unit);
  }
}
