package io.icebergcdc.cdc.debezium;

import com.fasterxml.jackson.databind.JsonNode;
import io.icebergcdc.cdc.ChangeSchema;
import io.icebergcdc.cdc.SourceSchemaChangedException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.iceberg.Schema;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.TypeUtil;
import org.apache.iceberg.types.Types;

/**
 * Derives an Iceberg schema from the Kafka Connect schema that Debezium's JSON converter writes
 * beside each event ({@code schemas.enable=true}).
 *
 * <p>The mapping, by Connect type and Debezium semantic type name:
 *
 * <ul>
 *   <li>int8, int16, int32 to int; int64 to long; float32 to float; float64 to double; boolean to
 *       boolean; string to string; bytes to binary
 *   <li>{@code io.debezium.time.Date}, {@code org.apache.kafka.connect.data.Date} to date
 *   <li>{@code io.debezium.time.Time}, {@code MicroTime}, {@code NanoTime}, Connect {@code Time} to
 *       time
 *   <li>{@code io.debezium.time.Timestamp}, {@code MicroTimestamp}, {@code NanoTimestamp}, Connect
 *       {@code Timestamp} to timestamp (without zone)
 *   <li>{@code io.debezium.time.ZonedTimestamp} to timestamptz
 *   <li>{@code org.apache.kafka.connect.data.Decimal} to decimal(precision, scale), precision from
 *       {@code connect.decimal.precision} or 38
 *   <li>{@code io.debezium.data.Uuid} to uuid; {@code io.debezium.data.Json}, {@code Xml}, {@code
 *       Enum}, {@code EnumSet} and {@code ZonedTime} to string
 * </ul>
 *
 * Other types (structs, arrays, maps, variable-scale decimals) are rejected with the field's name.
 */
public final class DebeziumSchemas {

  /** Kafka Connect's semantic type of a decimal given as the bytes of its unscaled value. */
  static final String DECIMAL = "org.apache.kafka.connect.data.Decimal";

  private static final String SCALE = ";scale=";

  /**
   * The unit {@link JsonRowConverter} converts a field's values by: its semantic type's name, and
   * for a {@link #DECIMAL} the scale its schema gives, which its bytes are at.
   */
  static String unitOf(JsonNode field) {
    String name = field.get("name").asText();
    JsonNode scale = field.path("parameters").path("scale");
    return DECIMAL.equals(name) && (scale.isTextual() || scale.isIntegralNumber())
        ? name + SCALE + scale.asText()
        : name;
  }

  /** The scale a {@link #unitOf decimal's unit} gives; {@code otherwise} if it gives none. */
  static int decimalScale(String unit, int otherwise) {
    if (unit == null || unit.length() <= DECIMAL.length() + SCALE.length()) {
      return otherwise;
    }
    int first = DECIMAL.length() + SCALE.length();
    boolean negative = unit.charAt(first) == '-';
    int scale = 0;
    for (int i = negative ? first + 1 : first; i < unit.length(); i++) {
      char c = unit.charAt(i);
      if (c < '0' || c > '9' || scale > 1000) {
        throw new IllegalArgumentException("the event's schema gives decimal " + unit);
      }
      scale = scale * 10 + (c - '0');
    }
    return negative ? -scale : scale;
  }

  private DebeziumSchemas() {}

  /**
   * The Iceberg schema of the row struct ({@code after}, else {@code before}) of a Debezium
   * envelope schema, with the given primary key as identifier fields.
   *
   * @param envelopeSchema the {@code schema} part of an event
   * @param primaryKey the key columns; they become required identifier fields
   */
  public static Schema toIcebergSchema(JsonNode envelopeSchema, List<String> primaryKey) {
    JsonNode rowSchema = rowStruct(envelopeSchema);
    List<Types.NestedField> fields = new ArrayList<>();
    Set<Integer> identifierIds = new HashSet<>();
    Set<String> missingKey = new HashSet<>(primaryKey);
    int id = 1;
    for (JsonNode field : rowSchema.path("fields")) {
      String name = field.path("field").asText();
      Type type = icebergType(field, name);
      boolean key = primaryKey.contains(name);
      boolean optional = !key && field.path("optional").asBoolean(true);
      fields.add(
          optional
              ? Types.NestedField.optional(id, name, type)
              : Types.NestedField.required(id, name, type));
      if (key) {
        identifierIds.add(id);
        missingKey.remove(name);
      }
      id++;
    }
    if (!missingKey.isEmpty()) {
      throw new IllegalArgumentException(
          "primary key column(s) " + missingKey + " are not in the event's schema");
    }
    return new Schema(fields, identifierIds);
  }

  /**
   * How a row struct's Connect schema differs from a table's schema in ways that its events cannot
   * be written through without changing the table: a column the table lacks, a column whose type
   * the table's column can be widened to (int to long, float to double, a decimal's precision), a
   * required column of the table that the source no longer has or now lets be null. Other
   * differences of type are left to the conversion of each value. Empty if there are none.
   */
  public static List<String> changes(JsonNode rowStruct, Schema table) {
    List<String> changes = new ArrayList<>();
    Set<String> present = new HashSet<>();
    for (JsonNode field : rowStruct.path("fields")) {
      String name = field.path("field").asText();
      present.add(name);
      Types.NestedField column = table.findField(name);
      if (column == null) {
        String type;
        try {
          type = icebergType(field, name).toString();
        } catch (IllegalArgumentException e) {
          type = field.path("type").asText() + " " + field.path("name").asText("");
        }
        changes.add("column '" + name + "' added, " + type.trim());
        continue;
      }
      if (column.isRequired()
          && field.path("optional").asBoolean(true)
          && !table.identifierFieldIds().contains(column.fieldId())) {
        changes.add("column '" + name + "' allows nulls");
      }
      Type type;
      try {
        type = icebergType(field, name);
      } catch (IllegalArgumentException e) {
        continue; // an existing column: its values are converted by the table's type
      }
      if (!type.equals(column.type())
          && type.isPrimitiveType()
          && column.type().isPrimitiveType()
          && TypeUtil.isPromotionAllowed(column.type(), type.asPrimitiveType())) {
        changes.add("column '" + name + "' widened from " + column.type() + " to " + type);
      }
    }
    for (Types.NestedField column : table.columns()) {
      if (column.isRequired() && !present.contains(column.name())) {
        changes.add("required column '" + column.name() + "' dropped");
      }
    }
    return changes;
  }

  /**
   * Fails with {@link SourceSchemaChangedException} if the row struct of an event's schema differs
   * from the table's schema in a way its events cannot be written through ({@link #changes}); the
   * exception carries the source's schema to evolve the table with, unless a column has a type that
   * has no mapping.
   *
   * @param envelopeSchema the {@code schema} part of an event
   * @param table the table's schema and key
   */
  public static void checkUnchanged(
      JsonNode envelopeSchema, ChangeSchema table, String tableName, String locator) {
    List<String> changes = changes(rowStruct(envelopeSchema), table.schema());
    if (changes.isEmpty()) {
      return;
    }
    Schema sourceSchema;
    try {
      sourceSchema = toIcebergSchema(envelopeSchema, table.keyColumns());
    } catch (IllegalArgumentException e) {
      // A column of a type that has no mapping: the change cannot be followed; the message says
      // why, and no schema is given to evolve the table with.
      sourceSchema = null;
      changes = new ArrayList<>(changes);
      changes.add("it cannot be followed: " + e.getMessage());
    }
    throw new SourceSchemaChangedException(tableName, changes, sourceSchema, locator);
  }

  /** The Connect schema of the {@code after} (or {@code before}) struct of an envelope schema. */
  static JsonNode rowStruct(JsonNode envelopeSchema) {
    JsonNode before = null;
    for (JsonNode field : envelopeSchema.path("fields")) {
      String name = field.path("field").asText();
      if ("after".equals(name)) {
        return field;
      }
      if ("before".equals(name)) {
        before = field;
      }
    }
    if (before == null) {
      throw new IllegalArgumentException(
          "the event's schema has neither an 'after' nor a 'before' struct");
    }
    return before;
  }

  static Type icebergType(JsonNode field, String name) {
    String type = field.path("type").asText();
    String semantic = field.path("name").asText("");
    switch (semantic) {
      case "io.debezium.time.Date":
      case "org.apache.kafka.connect.data.Date":
        return Types.DateType.get();
      case "io.debezium.time.Time":
      case "io.debezium.time.MicroTime":
      case "io.debezium.time.NanoTime":
      case "org.apache.kafka.connect.data.Time":
        return Types.TimeType.get();
      case "io.debezium.time.Timestamp":
      case "io.debezium.time.MicroTimestamp":
      case "io.debezium.time.NanoTimestamp":
      case "org.apache.kafka.connect.data.Timestamp":
        return Types.TimestampType.withoutZone();
      case "io.debezium.time.ZonedTimestamp":
        return Types.TimestampType.withZone();
      case "org.apache.kafka.connect.data.Decimal":
        JsonNode params = field.path("parameters");
        int scale = Integer.parseInt(params.path("scale").asText("0"));
        int precision = Integer.parseInt(params.path("connect.decimal.precision").asText("38"));
        return Types.DecimalType.of(precision, scale);
      case "io.debezium.data.Uuid":
        return Types.UUIDType.get();
      case "io.debezium.data.Json":
      case "io.debezium.data.Xml":
      case "io.debezium.data.Enum":
      case "io.debezium.data.EnumSet":
      case "io.debezium.time.ZonedTime":
        return Types.StringType.get();
      case "io.debezium.data.VariableScaleDecimal":
        throw new IllegalArgumentException(
            "column '"
                + name
                + "' is a decimal without a fixed scale (io.debezium.data.VariableScaleDecimal);"
                + " give it a precision and scale in the source, or set Debezium's"
                + " decimal.handling.mode to string or double");
      default:
        break;
    }
    switch (type) {
      case "int8":
      case "int16":
      case "int32":
        return Types.IntegerType.get();
      case "int64":
        return Types.LongType.get();
      case "float":
      case "float32":
        return Types.FloatType.get();
      case "double":
      case "float64":
        return Types.DoubleType.get();
      case "boolean":
        return Types.BooleanType.get();
      case "string":
        return Types.StringType.get();
      case "bytes":
        return Types.BinaryType.get();
      default:
        throw new IllegalArgumentException(
            "column '"
                + name
                + "' has type '"
                + type
                + (semantic.isEmpty() ? "" : "' (" + semantic + ")")
                + "', which has no Iceberg mapping here");
    }
  }
}
