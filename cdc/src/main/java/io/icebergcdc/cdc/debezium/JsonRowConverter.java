package io.icebergcdc.cdc.debezium;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import io.icebergcdc.cdc.ColumnMask;
import java.io.IOException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.LocalDate;
import java.util.Base64;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.flink.table.data.DecimalData;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.TimestampData;
import org.apache.iceberg.Schema;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/**
 * Converts the JSON of a Debezium row struct into a Flink row of a table's schema.
 *
 * <p>Where the event carries its Connect schema, each field's semantic type fixes the unit of its
 * value (milliseconds for {@code io.debezium.time.Timestamp}, microseconds for {@code
 * MicroTimestamp}, and so on). Without a schema the table's type decides, and numbers are read in
 * Debezium's default units for PostgreSQL: dates as days, times and timestamps as microseconds.
 * Strings in ISO-8601 form are accepted for every temporal type either way.
 *
 * <p>Not thread-safe; one instance per parser.
 */
final class JsonRowConverter {

  private static final String UNAVAILABLE_BASE64 =
      Base64.getEncoder()
          .encodeToString(DebeziumJsonParser.UNAVAILABLE_VALUE.getBytes(StandardCharsets.UTF_8));

  private final Schema schema;
  private final Map<String, Integer> positions = new HashMap<>();
  private final List<Types.NestedField> columns;
  private final boolean[] key;
  private ColumnMask lastUnavailable = ColumnMask.EMPTY;

  JsonRowConverter(Schema schema) {
    this.schema = schema;
    this.columns = schema.columns();
    this.key = new boolean[columns.size()];
    for (int i = 0; i < columns.size(); i++) {
      positions.put(columns.get(i).name(), i);
      key[i] = schema.identifierFieldIds().contains(columns.get(i).fieldId());
    }
  }

  /**
   * The row for a JSON object.
   *
   * @param units the Debezium semantic type of each field, by name; empty without a schema
   * @param checkRequired whether a required column may be absent (it may in a before image, where
   *     sources often give the key only); without, a value of a column outside the key that does
   *     not convert is left out: a before image is read for its key, and where the log sent only
   *     the key Debezium stands in for a NOT NULL column with a value of its own ("" for a uuid)
   */
  RowData convert(JsonNode object, Map<String, String> units, boolean checkRequired) {
    if (!object.isObject()) {
      throw new IllegalArgumentException(
          "a row must be a JSON object, not " + object.getNodeType());
    }
    GenericRowData row = new GenericRowData(columns.size());
    ColumnMask unavailable = ColumnMask.EMPTY;
    Iterator<Map.Entry<String, JsonNode>> fields = object.fields();
    while (fields.hasNext()) {
      Map.Entry<String, JsonNode> field = fields.next();
      unavailable =
          put(row, unavailable, position(field.getKey()), field.getValue(), units, checkRequired);
    }
    return finish(row, unavailable, checkRequired);
  }

  /**
   * The row for the JSON object that starts at the parser's current token, read as it streams by,
   * without a tree: each value is read as {@link #convert(JsonNode, Map, boolean)} would read it in
   * the object's tree. Leaves the parser at the object's end.
   *
   * @throws NotStreamed where the object has a column twice (its tree keeps only the last value)
   */
  RowData convert(JsonParser parser, Map<String, String> units, boolean checkRequired)
      throws IOException {
    GenericRowData row = new GenericRowData(columns.size());
    ColumnMask unavailable = ColumnMask.EMPTY;
    boolean[] seen = new boolean[columns.size()];
    String name;
    while ((name = parser.nextFieldName()) != null) {
      JsonToken token = parser.nextToken();
      int pos = position(name);
      if (seen[pos]) {
        throw NotStreamed.INSTANCE;
      }
      seen[pos] = true;
      unavailable =
          put(row, unavailable, pos, StreamedValues.node(parser, token), units, checkRequired);
    }
    if (!parser.hasToken(JsonToken.END_OBJECT)) {
      throw NotStreamed.INSTANCE;
    }
    return finish(row, unavailable, checkRequired);
  }

  private int position(String name) {
    Integer pos = positions.get(name);
    if (pos == null) {
      throw new IllegalArgumentException(
          "column '" + name + "' is not in the table's schema " + schema.asStruct());
    }
    return pos;
  }

  /** Sets the column at {@code pos} from {@code value}; the unavailable columns, with it if so. */
  private ColumnMask put(
      GenericRowData row,
      ColumnMask unavailable,
      int pos,
      JsonNode value,
      Map<String, String> units,
      boolean wholeRow) {
    if (value.isNull()) {
      return unavailable;
    }
    Types.NestedField column = columns.get(pos);
    if (isPlaceholder(value, column.type())) {
      return unavailable.with(pos);
    }
    try {
      row.setField(pos, convert(value, column.type(), units.get(column.name())));
    } catch (RuntimeException e) {
      if (wholeRow || key[pos]) {
        throw UnfitValue.of(column, value.toString(), e);
      }
    }
    return unavailable;
  }

  private RowData finish(GenericRowData row, ColumnMask unavailable, boolean checkRequired) {
    lastUnavailable = unavailable;
    if (checkRequired) {
      for (int i = 0; i < columns.size(); i++) {
        if (columns.get(i).isRequired() && row.isNullAt(i) && !unavailable.contains(i)) {
          throw new IllegalArgumentException(
              "required column '" + columns.get(i).name() + "' is null or missing");
        }
      }
    }
    return row;
  }

  private static Object convert(JsonNode value, Type type, String unit) {
    switch (type.typeId()) {
      case BOOLEAN:
        if (!value.isBoolean()) {
          throw new IllegalArgumentException("not a boolean");
        }
        return value.booleanValue();
      case INTEGER:
        return Math.toIntExact(integral(value));
      case LONG:
        return integral(value);
      case FLOAT:
        double number = number(value);
        float narrowed = (float) number;
        // "Infinity" in text is one; a number written out is not, however large.
        if (Float.isInfinite(narrowed) && (value.isNumber() || !Double.isInfinite(number))) {
          // As an int column refuses a long: the value is not the float's to hold.
          throw new IllegalArgumentException(number + " is beyond the range of a float");
        }
        return narrowed;
      case DOUBLE:
        double exact = number(value);
        if (value.isNumber() && Double.isInfinite(exact)) {
          throw new IllegalArgumentException("the number is beyond the range of a double");
        }
        return exact;
      case STRING:
        return StringData.fromString(value.isTextual() ? value.textValue() : value.toString());
      case DATE:
        return value.isTextual()
            ? (int) LocalDate.parse(value.textValue()).toEpochDay()
            : Math.toIntExact(integral(value));
      case TIME:
        return timeMillis(value, unit);
      case TIMESTAMP:
        return ((Types.TimestampType) type).shouldAdjustToUTC()
            ? timestampTz(value, unit)
            : timestamp(value, unit);
      case DECIMAL:
        Types.DecimalType decimal = (Types.DecimalType) type;
        BigDecimal big = decimal(value, decimal.scale(), unit);
        DecimalData data = DecimalData.fromBigDecimal(big, decimal.precision(), decimal.scale());
        if (data == null) {
          throw new IllegalArgumentException("does not fit " + decimal);
        }
        return data;
      case UUID:
        return uuidBytes(value);
      case BINARY:
      case FIXED:
        if (!value.isTextual()) {
          throw new IllegalArgumentException("not base64 text");
        }
        return Base64.getDecoder().decode(value.textValue());
      default:
        throw new IllegalArgumentException("type " + type + " is not supported in change events");
    }
  }

  /**
   * Whether {@code value} is Debezium's placeholder for a value the source did not send: where
   * PostgreSQL leaves out an unchanged TOASTed value (a large text, JSON or binary value of a table
   * whose replica identity is not {@code FULL}), its text, or in a binary column its bytes.
   */
  private static boolean isPlaceholder(JsonNode value, Type type) {
    if (!value.isTextual()) {
      return false;
    }
    switch (type.typeId()) {
      case STRING:
        return value.textValue().equals(DebeziumJsonParser.UNAVAILABLE_VALUE);
      case BINARY:
      case FIXED:
        return value.textValue().equals(UNAVAILABLE_BASE64);
      default:
        return false;
    }
  }

  /** The columns of the row {@link #convert} read last whose values the source did not send. */
  ColumnMask unavailableOfLastRow() {
    return lastUnavailable;
  }

  private static long integral(JsonNode value) {
    if (value.isIntegralNumber()) {
      if (!value.canConvertToLong()) {
        // Jackson's longValue() of a bigger number keeps its low 64 bits.
        throw new IllegalArgumentException("out of the range of a 64-bit integer");
      }
      return value.longValue();
    }
    if (value.isTextual()) {
      return Long.parseLong(value.textValue());
    }
    throw new IllegalArgumentException("not an integer");
  }

  private static double number(JsonNode value) {
    if (value.isNumber()) {
      return value.doubleValue();
    }
    if (value.isTextual()) {
      return Double.parseDouble(value.textValue());
    }
    throw new IllegalArgumentException("not a number");
  }

  private static byte[] uuidBytes(JsonNode value) {
    if (!value.isTextual()) {
      // Named here: a null's message depends on whether the JIT has compiled the call.
      throw new IllegalArgumentException("not a UUID in text");
    }
    UUID uuid = UUID.fromString(value.textValue());
    ByteBuffer buffer = ByteBuffer.allocate(16);
    buffer.putLong(uuid.getMostSignificantBits()).putLong(uuid.getLeastSignificantBits());
    return buffer.array();
  }

  private static BigDecimal decimal(JsonNode value, int scale, String unit) {
    if (value.isNumber()) {
      // A fraction is read as a double (15 to 17 digits), as Jackson reads JSON numbers: decimals
      // that need more are sent as text or bytes. A value the scale cannot hold is refused.
      return scaled(value.decimalValue(), scale);
    }
    String text = value.textValue();
    if (text == null) {
      throw new IllegalArgumentException("not a decimal");
    }
    if ((unit != null && unit.startsWith(DebeziumSchemas.DECIMAL)) || !looksNumeric(text)) {
      return decimalOfBytes(text, unit, scale);
    }
    return scaled(new BigDecimal(text), scale);
  }

  /**
   * {@code value} at {@code scale}, refused where that would round it, and where its exponent is
   * beyond any column's (a few bytes such as {@code 1e300000000} would otherwise take minutes of
   * work to scale).
   */
  private static BigDecimal scaled(BigDecimal value, int scale) {
    if (Math.abs((long) value.scale()) > 1_000) {
      throw new IllegalArgumentException("out of the range of a decimal");
    }
    return value.setScale(scale);
  }

  /**
   * A decimal's unscaled bytes in base64, at the scale its event's schema gives (else the table's);
   * a value that the table's {@code scale} cannot hold without rounding is refused.
   */
  private static BigDecimal decimalOfBytes(String text, String unit, int scale) {
    BigDecimal value =
        new BigDecimal(
            new BigInteger(Base64.getDecoder().decode(text)),
            DebeziumSchemas.decimalScale(unit, scale));
    return value.scale() == scale ? value : scaled(value, scale);
  }

  private static boolean looksNumeric(String text) {
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (!(Character.isDigit(c) || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E')) {
        return false;
      }
    }
    return !text.isEmpty();
  }

  private static int timeMillis(JsonNode value, String unit) {
    return value.isTextual()
        ? DebeziumTemporal.timeMillis(value.textValue())
        : DebeziumTemporal.timeMillis(integral(value), unit);
  }

  private static TimestampData timestamp(JsonNode value, String unit) {
    return value.isTextual()
        ? DebeziumTemporal.timestamp(value.textValue())
        : DebeziumTemporal.fromEpoch(integral(value), unit);
  }

  /** A timestamp with time zone: epoch units or ISO-8601 text ({@link DebeziumTemporal}). */
  private static TimestampData timestampTz(JsonNode value, String unit) {
    return value.isTextual()
        ? DebeziumTemporal.timestampTz(value.textValue())
        : DebeziumTemporal.fromEpoch(integral(value), unit);
  }
}
