package io.icebergcdc.capture;

import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.ChangeSchema;
import io.icebergcdc.cdc.ColumnMask;
import io.icebergcdc.cdc.MalformedChangeException;
import io.icebergcdc.cdc.Operation;
import io.icebergcdc.cdc.SchemaEvolution;
import io.icebergcdc.cdc.SourceSchemaChangedException;
import io.icebergcdc.cdc.SourceSequence;
import io.icebergcdc.cdc.debezium.DebeziumChanges;
import io.icebergcdc.cdc.debezium.DebeziumSchemas;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.iceberg.types.Types;
import org.apache.kafka.connect.data.Field;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.json.JsonConverter;
import org.apache.kafka.connect.json.JsonConverterConfig;

/**
 * Turns Debezium's change records of one table into change events straight from their Kafka Connect
 * structs: the events that {@link io.icebergcdc.cdc.debezium.DebeziumJsonParser} gives for the same
 * record written by Kafka Connect's JSON converter with its schema, without writing and reading
 * JSON text in between.
 *
 * <p>The work that depends on a record's schema (checking it against the table's, finding each
 * field's column and conversion) is done once per schema: Debezium keeps one schema object per
 * version of a table, so a record of the version seen last costs an identity comparison.
 *
 * <p>Not thread-safe; one instance per table and reader.
 */
final class StructChangeConverter {

  private final String tableName;
  private final SchemaEvolution evolution;
  private final JsonConverter schemaWriter = new JsonConverter();

  /** The table's schema: the job's, or the one {@link #evolution} evolved the table to. */
  private ChangeSchema changeSchema;

  private final Map<String, Integer> positions = new java.util.HashMap<>();
  private List<Types.NestedField> columns;

  /** The id the changes' rows carry: the job's schema until the table is evolved. */
  private int rowSchemaId = ChangeEvent.JOB_SCHEMA;

  private Schema envelopeSchema;
  private Schema rowSchema;
  private StructFieldConversion[] conversions;

  /** The columns of the row {@link #row} read last whose values Debezium did not have. */
  private ColumnMask lastUnavailable = ColumnMask.EMPTY;

  private SourceFields sourceFields;

  StructChangeConverter(ChangeSchema changeSchema, String tableName) {
    this(changeSchema, tableName, null);
  }

  /**
   * @param evolution what evolves the table when its source's schema changes, so that the job
   *     follows the change; null to end the job with {@link SourceSchemaChangedException} instead
   */
  StructChangeConverter(ChangeSchema changeSchema, String tableName, SchemaEvolution evolution) {
    this.tableName = tableName;
    this.evolution = evolution;
    useTableSchema(changeSchema);
    schemaWriter.configure(Map.of(JsonConverterConfig.SCHEMAS_ENABLE_CONFIG, "true"), false);
  }

  /**
   * This converter with changes whose rows carry the id of the table's schema from the first: for a
   * table that appeared while the job runs, whose schema the job's serializers do not know.
   */
  StructChangeConverter carryingSchemaId() {
    rowSchemaId = changeSchema.schema().schemaId();
    return this;
  }

  private void useTableSchema(ChangeSchema schema) {
    this.changeSchema = schema;
    this.columns = schema.schema().columns();
    positions.clear();
    for (int i = 0; i < columns.size(); i++) {
      positions.put(columns.get(i).name(), i);
    }
  }

  /**
   * The changes of one Debezium envelope.
   *
   * @param envelope the record's value
   * @param schema the record's value schema
   * @param locator where the record came from, for messages
   * @return none for a tombstone, two for a change of key, else one
   * @throws MalformedChangeException if the record cannot be applied to the table
   * @throws SourceSchemaChangedException if its schema shows that the table changed in a way the
   *     table's types cannot carry, and the converter has no evolution or the table cannot follow
   * @throws io.icebergcdc.cdc.SchemaEvolutionException if the evolution of the table failed
   */
  List<ChangeEvent> convert(Struct envelope, Schema schema, String locator) {
    if (envelope == null) {
      return Collections.emptyList();
    }
    try {
      if (schema != envelopeSchema) {
        useSchema(schema, locator);
      }
      return changes(envelope, locator);
    } catch (RuntimeException e) {
      throw MalformedChangeException.of(e, locator);
    }
  }

  private void useSchema(Schema schema, String locator) {
    if (!schema.equals(envelopeSchema)) {
      com.fasterxml.jackson.databind.JsonNode json = schemaWriter.asJsonSchema(schema);
      try {
        DebeziumSchemas.checkUnchanged(json, changeSchema, tableName, locator);
      } catch (SourceSchemaChangedException e) {
        if (evolution == null || e.sourceSchema() == null) {
          throw e;
        }
        // Followed in flight: the table takes the new columns before any row holding them is
        // passed on, and the rows from here on are of its evolved schema.
        useTableSchema(SchemaEvolution.follow(evolution, tableName, e, locator));
        rowSchemaId = changeSchema.schema().schemaId();
        DebeziumSchemas.checkUnchanged(json, changeSchema, tableName, locator);
      }
      Field row = schema.field("after") != null ? schema.field("after") : schema.field("before");
      if (row == null) {
        throw new MalformedChangeException(
            locator + ": the event's schema has neither an 'after' nor a 'before' struct");
      }
      rowSchema = row.schema();
      conversions = new StructFieldConversion[rowSchema.fields().size()];
      for (Field field : rowSchema.fields()) {
        Integer position = positions.get(field.name());
        conversions[field.index()] =
            position == null
                ? StructFieldConversion.unknown(field, changeSchema.schema())
                : StructFieldConversion.of(field, columns.get(position), position);
      }
      Field source = schema.field("source");
      sourceFields = source == null ? SourceFields.NONE : SourceFields.of(source.schema());
    }
    envelopeSchema = schema;
  }

  private List<ChangeEvent> changes(Struct envelope, String locator) {
    Object opValue = envelope.schema().field("op") == null ? null : envelope.get("op");
    if (!(opValue instanceof String code)) {
      throw new MalformedChangeException(locator + ": the event has no 'op'");
    }
    Operation op;
    try {
      op = Operation.fromCode(code);
    } catch (IllegalArgumentException e) {
      throw new MalformedChangeException(locator + ": " + e.getMessage(), e);
    }
    RowData before = row(envelope, "before", false);
    lastUnavailable = ColumnMask.EMPTY;
    RowData after = row(envelope, "after", true);
    ColumnMask unavailable = lastUnavailable;
    DebeziumChanges.checkRows(op, before, after, locator);
    Struct source = envelope.schema().field("source") == null ? null : envelope.getStruct("source");
    String table = sourceFields.tableName(source, tableName);
    SourceSequence sequence = sourceFields.sequence(source, locator);
    long ts = sourceFields.timestampMillis(source, envelope);

    return DebeziumChanges.inSchema(
        DebeziumChanges.of(
            changeSchema, table, op, before, after, unavailable, sequence, ts, locator),
        rowSchemaId);
  }

  private RowData row(Struct envelope, String field, boolean checkRequired) {
    if (envelope.schema().field(field) == null) {
      return null;
    }
    Struct struct = envelope.getStruct(field);
    if (struct == null) {
      return null;
    }
    if (struct.schema() != rowSchema && !struct.schema().equals(rowSchema)) {
      throw new IllegalArgumentException(
          "the '" + field + "' struct does not have the schema of the event's row");
    }
    GenericRowData row = new GenericRowData(columns.size());
    ColumnMask unavailable = ColumnMask.EMPTY;
    for (StructFieldConversion conversion : conversions) {
      try {
        if (conversion.set(struct, row)) {
          unavailable = unavailable.with(conversion.position());
        }
      } catch (RuntimeException e) {
        // A before image is read for its key: where the log sent only the key, Debezium stands in
        // for a NOT NULL column with a value of its own ("" for a uuid), which need not convert.
        int position = conversion.position();
        if (checkRequired
            || position < 0
            || changeSchema
                .schema()
                .identifierFieldIds()
                .contains(columns.get(position).fieldId())) {
          throw e;
        }
      }
    }
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
}
