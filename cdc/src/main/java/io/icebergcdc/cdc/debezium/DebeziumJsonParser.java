package io.icebergcdc.cdc.debezium;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeType;
import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.ChangeSchema;
import io.icebergcdc.cdc.ColumnMask;
import io.icebergcdc.cdc.MalformedChangeException;
import io.icebergcdc.cdc.Operation;
import io.icebergcdc.cdc.SourceSchemaChangedException;
import io.icebergcdc.cdc.SourceSequence;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.table.data.RowData;

/**
 * Parses Debezium's JSON change events, with or without their {@code schema} part, into {@link
 * ChangeEvent}s of one table.
 *
 * <p>The sequence of an event is, unless a sequence column is named, its source position: for
 * PostgreSQL {@code source.lsn}, preceded by the last commit LSN of {@code source.sequence} where
 * the event has one (it orders changes by transaction commit, which bare LSNs do not); for MySQL
 * and MariaDB {@code source.file}, {@code source.pos} and {@code source.row}. An update whose key
 * changed becomes a delete of the old key and an insert of the new one, both at the event's
 * sequence. A Debezium tombstone (a JSON {@code null}, which only tells Kafka's log compaction that
 * a delete happened) yields no change.
 *
 * <p>Not thread-safe: each parallel instance of a parsing function keeps its own parser.
 */
public final class DebeziumJsonParser {

  /**
   * What Debezium's PostgreSQL connector writes in place of an unchanged TOASTed value it did not
   * receive (its {@code unavailable.value.placeholder}, by default this text). A value equal to it,
   * as text or as the bytes of a binary column, is not written: its column is one of the change's
   * {@link io.icebergcdc.cdc.ChangeEvent#unavailableColumns()}, which the writer fills from the
   * key's current row.
   */
  public static final String UNAVAILABLE_VALUE = "__debezium_unavailable_value";

  private static final ObjectMapper MAPPER = new ObjectMapper();

  /**
   * Reads one whole event: anything after its value (a second event on the line, as when files are
   * joined without a newline between) makes it not valid JSON, never an event of which the rest is
   * dropped.
   */
  private static final com.fasterxml.jackson.databind.ObjectReader WHOLE =
      MAPPER
          .reader()
          .with(com.fasterxml.jackson.databind.DeserializationFeature.FAIL_ON_TRAILING_TOKENS);

  /**
   * The fields of an event's {@code source} block that its changes are made of: the table's name
   * ({@link #sourceTableOf}), the position ({@link #sequence}) and the time. A payload read as it
   * streams by keeps only these.
   */
  static final java.util.Set<String> SOURCE_FIELDS =
      java.util.Set.of("table", "schema", "db", "lsn", "sequence", "file", "pos", "row", "ts_ms");

  private ChangeSchema changeSchema;
  private final String tableName;
  private final String sequenceColumn;
  private int sequencePosition;
  private JsonRowConverter converter;

  /** What evolves the table when the events' schema changes; null where the change fails. */
  private io.icebergcdc.cdc.SchemaEvolution evolution;

  /** The id the changes' rows carry: the job's schema until the table is evolved. */
  private int rowSchemaId = ChangeEvent.JOB_SCHEMA;

  private final EnvelopeReader envelopes = new EnvelopeReader(MAPPER);
  private boolean detectSchemaChanges;
  private JsonNode lastEnvelopeSchema;
  private Map<String, String> lastUnits = Collections.emptyMap();

  /** How many events were read without a tree of their payload. */
  private long streamedEvents;

  /**
   * @param changeSchema the schema rows are converted to
   * @param tableName the table named in events and messages
   * @param sequenceColumn a column whose value orders changes of a key, or null to use the source
   *     position
   */
  public DebeziumJsonParser(ChangeSchema changeSchema, String tableName, String sequenceColumn) {
    this.changeSchema = changeSchema;
    this.tableName = tableName;
    this.sequenceColumn = sequenceColumn;
    this.converter = new JsonRowConverter(changeSchema.schema());
    this.sequencePosition =
        sequenceColumn == null ? -1 : position(changeSchema, sequenceColumn, tableName);
  }

  /**
   * Makes the parser compare the schema that events carry with the table's: an event whose row has
   * a column the table lacks, a type the table's column can be widened to, or lacks a required
   * column then fails with {@link SourceSchemaChangedException} rather than as a malformed event.
   * Only events with their {@code schema} part are compared.
   */
  public DebeziumJsonParser detectingSchemaChanges() {
    this.detectSchemaChanges = true;
    return this;
  }

  /**
   * Makes the parser follow the schema changes that events with their {@code schema} part show, as
   * {@link #detectingSchemaChanges()} detects them: {@code evolution} evolves the table at the
   * first event of a changed schema, and the changes from then on have the rows of the evolved
   * schema, with its id ({@link ChangeEvent#rowSchemaId()}).
   */
  public DebeziumJsonParser followingSchemaChanges(io.icebergcdc.cdc.SchemaEvolution evolution) {
    this.detectSchemaChanges = true;
    this.evolution = evolution;
    return this;
  }

  /**
   * Makes the changes carry the id of the schema the parser was built with from the first on
   * ({@link ChangeEvent#rowSchemaId()}), for a table that the job was not built with (one that
   * appeared while it runs): their rows then travel with their values' types, and the writer reads
   * them by that schema, which it learns from the table.
   */
  public DebeziumJsonParser carryingSchemaId() {
    this.rowSchemaId = changeSchema.schema().schemaId();
    return this;
  }

  /** How many events {@link #parse(byte[], String)} read without a tree of their payload. */
  long streamedEvents() {
    return streamedEvents;
  }

  /** Reads the JSON text of one event; fails with a message naming {@code locator}. */
  public static JsonNode readTree(String json, String locator) {
    try {
      return WHOLE.readTree(json);
    } catch (JsonProcessingException e) {
      throw notJson(locator, e);
    }
  }

  /**
   * Reads the UTF-8 JSON of one event from its bytes; fails with a message naming {@code locator},
   * also on bytes that are not UTF-8.
   */
  public static JsonNode readTree(byte[] json, String locator) {
    try {
      return WHOLE.readTree(json);
    } catch (JsonProcessingException e) {
      throw notJson(locator, e);
    } catch (java.io.IOException e) {
      throw new MalformedChangeException(locator + ": cannot be read: " + e.getMessage(), e);
    }
  }

  static MalformedChangeException notJson(String locator, JsonProcessingException e) {
    String reason =
        e instanceof com.fasterxml.jackson.databind.exc.MismatchedInputException
                && e.getOriginalMessage() != null
                && e.getOriginalMessage().startsWith("Trailing token")
            ? "more follows its value"
                + (e.getLocation() == null ? "" : " (" + e.getLocation().offsetDescription() + ")")
                + ", such as a second event on the line"
            : e.getOriginalMessage();
    return new MalformedChangeException(locator + ": not valid JSON: " + reason, e);
  }

  /**
   * Parses one event from its UTF-8 bytes; as {@link #parse(String, String)}, but an event with its
   * Connect schema has the schema parsed only when its bytes differ from the previous event's.
   */
  public List<ChangeEvent> parse(byte[] json, String locator) {
    int[] payloadAt = envelopes.knownSchemaPayload(json);
    if (payloadAt != null) {
      List<ChangeEvent> changes = parseStreamed(json, payloadAt[0], payloadAt[1], locator);
      if (changes != null) {
        return changes;
      }
    }
    EnvelopeReader.Envelope envelope = envelopes.read(json, locator);
    return envelope.root() != null
        ? parse(envelope.root(), locator)
        : parse(envelope.payload(), envelope.schema(), locator);
  }

  /**
   * Parses one event.
   *
   * @param json the event's JSON text
   * @param locator where the event came from (a file and line, a topic and offset), for messages
   * @return the changes of the event: none for a tombstone, two for a key change, else one
   * @throws MalformedChangeException if the event cannot be applied to the table
   */
  public List<ChangeEvent> parse(String json, String locator) {
    return parse(readTree(json, locator), locator);
  }

  /** Parses one event already read as JSON; see {@link #parse(String, String)}. */
  public List<ChangeEvent> parse(JsonNode root, String locator) {
    if (root == null || root.isNull() || root.isMissingNode()) {
      return Collections.emptyList();
    }
    try {
      return parseEnvelope(root, locator);
    } catch (RuntimeException e) {
      throw MalformedChangeException.of(e, locator);
    }
  }

  /**
   * Parses one event given as its payload and, apart, the Connect schema that Debezium's JSON
   * converter would have written beside it; see {@link #parse(String, String)}.
   *
   * @param envelopeSchema the event's schema, or null if it has none
   */
  public List<ChangeEvent> parse(JsonNode payload, JsonNode envelopeSchema, String locator) {
    if (payload == null || payload.isNull() || payload.isMissingNode()) {
      return Collections.emptyList();
    }
    try {
      return parsePayload(
          payload,
          envelopeSchema == null ? Collections.emptyMap() : units(envelopeSchema, locator),
          locator);
    } catch (RuntimeException e) {
      throw MalformedChangeException.of(e, locator);
    }
  }

  private List<ChangeEvent> parseEnvelope(JsonNode root, String locator) {
    JsonNode payload = root;
    Map<String, String> units = Collections.emptyMap();
    // An envelope: its schema and payload, or a payload alone (an event has its 'op' at the top).
    if (root.has("payload") && (root.has("schema") || !root.has("op"))) {
      payload = root.get("payload");
      if (payload == null || payload.isNull()) {
        return Collections.emptyList();
      }
      if (root.has("schema")) {
        units = units(root.get("schema"), locator);
      }
    }
    return parsePayload(payload, units, locator);
  }

  /**
   * The changes of an event whose schema is {@link EnvelopeReader#knownSchema()} and whose payload
   * lies in {@code json[from, to)}, read as it streams by, without a tree of it; null where the
   * payload is not an object or is read better as a tree (see {@link StreamedPayload#read}), is not
   * valid JSON or does not convert, or its schema has not been checked and read for its units yet:
   * then the event is read as a tree, which makes the same changes or fails with the same message.
   */
  private List<ChangeEvent> parseStreamed(byte[] json, int from, int to, String locator) {
    if (lastEnvelopeSchema == null || envelopes.knownSchema() != lastEnvelopeSchema) {
      return null; // a schema not yet checked and read for its units: the tree's way does both
    }
    StreamedPayload payload;
    try (JsonParser parser = MAPPER.createParser(json, from, to - from)) {
      if (parser.nextToken() != JsonToken.START_OBJECT) {
        return null;
      }
      payload = StreamedPayload.read(parser, converter, lastUnits);
    } catch (java.io.IOException | RuntimeException e) {
      return null;
    }
    streamedEvents++;
    try {
      return changes(
          operation(payload.op, locator),
          payload.before,
          payload.after,
          payload.unavailable,
          payload.source,
          payload.tsMs,
          locator);
    } catch (RuntimeException e) {
      throw MalformedChangeException.of(e, locator);
    }
  }

  private List<ChangeEvent> parsePayload(
      JsonNode payload, Map<String, String> units, String locator) {
    if (payload.getNodeType() != JsonNodeType.OBJECT) {
      throw new MalformedChangeException(locator + ": an event must be a JSON object");
    }
    Operation op = operation(payload.get("op"), locator);
    RowData before = row(payload.get("before"), units, false);
    RowData after = row(payload.get("after"), units, true);
    ColumnMask unavailable = after == null ? ColumnMask.EMPTY : converter.unavailableOfLastRow();
    return changes(
        op, before, after, unavailable, payload.path("source"), payload.path("ts_ms"), locator);
  }

  private static Operation operation(JsonNode opNode, String locator) {
    if (opNode == null || !opNode.isTextual()) {
      throw new MalformedChangeException(locator + ": the event has no 'op'");
    }
    try {
      return Operation.fromCode(opNode.textValue());
    } catch (IllegalArgumentException e) {
      throw new MalformedChangeException(locator + ": " + e.getMessage(), e);
    }
  }

  /** The changes of a payload's parts, its rows already converted. */
  private List<ChangeEvent> changes(
      Operation op,
      RowData before,
      RowData after,
      ColumnMask unavailable,
      JsonNode source,
      JsonNode payloadTs,
      String locator) {
    DebeziumChanges.checkRows(op, before, after, locator);
    String table = tableName(source);
    SourceSequence sequence = sequence(source, op.isUpsert() ? after : before, locator);
    if (op == Operation.DELETE) {
      sequence = sequence.ofDeletedRow();
    }
    long ts = source.path("ts_ms").asLong(payloadTs.asLong(0L));

    return DebeziumChanges.inSchema(
        DebeziumChanges.of(
            changeSchema, table, op, before, after, unavailable, sequence, ts, locator),
        rowSchemaId);
  }

  private RowData row(JsonNode node, Map<String, String> units, boolean checkRequired) {
    if (node == null || node.isNull()) {
      return null;
    }
    return converter.convert(node, units, checkRequired);
  }

  private String tableName(JsonNode source) {
    String table = sourceTableOf(source);
    return table == null ? tableName : table;
  }

  /**
   * The source table an event's {@code source} block names, {@code schema.table} (PostgreSQL) or
   * {@code db.table} (MySQL), or null if it names none.
   */
  public static String sourceTableOf(JsonNode source) {
    String table = source.path("table").asText(null);
    if (table == null) {
      return null;
    }
    String schema = source.path("schema").asText(null);
    String db = source.path("db").asText(null);
    String prefix = schema != null ? schema : db;
    return prefix == null ? table : prefix + "." + table;
  }

  private SourceSequence sequence(JsonNode source, RowData row, String locator) {
    if (sequenceColumn != null && row == null) {
      throw new MalformedChangeException(
          locator
              + ": a truncate has no sequence column '"
              + sequenceColumn
              + "' to order it against the rows' changes, so the job cannot apply it (ordered by"
              + " the source's positions, without a sequence column, it does)");
    }
    if (sequenceColumn != null) {
      return columnSequence(changeSchema, row, sequenceColumn, sequencePosition, locator);
    }
    JsonNode lsn = source.get("lsn");
    if (lsn != null && !lsn.isNull()) {
      JsonNode seq = source.get("sequence");
      if (seq != null && seq.isTextual()) {
        long[] lsns = PostgresSequences.pair(seq.textValue());
        if (lsns != null) {
          return SourceSequence.postgresLsn(lsns[0], lsns[1]);
        }
        JsonNode pair = readTree(seq.textValue(), locator);
        if (pair.isArray() && pair.size() == 2) {
          return SourceSequence.postgresLsn(lsnValue(pair.get(0)), lsnValue(pair.get(1)));
        }
      }
      return SourceSequence.postgresLsn(lsnValue(lsn));
    }
    JsonNode file = source.get("file");
    JsonNode pos = source.get("pos");
    if (file != null && file.isTextual() && pos != null && pos.canConvertToLong()) {
      return SourceSequence.mysqlBinlog(
          file.textValue(), pos.longValue(), source.path("row").asLong(0L));
    }
    throw new MalformedChangeException(
        locator
            + ": the event has no source position (source.lsn, or source.file and source.pos);"
            + " name a sequence column to order its changes");
  }

  /** The position of the sequence column in the table's rows. */
  static int position(ChangeSchema changeSchema, String sequenceColumn, String tableName) {
    List<org.apache.iceberg.types.Types.NestedField> columns = changeSchema.schema().columns();
    for (int i = 0; i < columns.size(); i++) {
      if (columns.get(i).name().equals(sequenceColumn)) {
        return i;
      }
    }
    throw new IllegalArgumentException(
        "sequence column '" + sequenceColumn + "' is not a column of table " + tableName);
  }

  /** The sequence a row's sequence column gives. */
  static SourceSequence columnSequence(
      ChangeSchema changeSchema,
      RowData row,
      String sequenceColumn,
      int sequencePosition,
      String locator) {
    if (row.isNullAt(sequencePosition)) {
      throw new MalformedChangeException(
          locator + ": sequence column '" + sequenceColumn + "' is null");
    }
    Object value =
        RowData.createFieldGetter(
                changeSchema.rowType().getTypeAt(sequencePosition), sequencePosition)
            .getFieldOrNull(row);
    return SourceSequence.column(SequenceValues.toLong(value, sequenceColumn));
  }

  private static long lsnValue(JsonNode node) {
    if (node == null || node.isNull()) {
      return 0L;
    }
    if (node.isNumber()) {
      return node.longValue();
    }
    String text = node.textValue();
    return text.indexOf('/') >= 0 ? SourceSequence.parseLsn(text) : Long.parseLong(text);
  }

  /**
   * The semantic type of each field of the row struct; and, where schema changes are detected, the
   * check of a schema not seen before against the table's.
   */
  private Map<String, String> units(JsonNode envelopeSchema, String locator) {
    if (envelopeSchema.equals(lastEnvelopeSchema)) {
      return lastUnits;
    }
    if (detectSchemaChanges) {
      try {
        DebeziumSchemas.checkUnchanged(envelopeSchema, changeSchema, tableName, locator);
      } catch (SourceSchemaChangedException e) {
        if (evolution == null || e.sourceSchema() == null) {
          throw e;
        }
        changeSchema = io.icebergcdc.cdc.SchemaEvolution.follow(evolution, tableName, e, locator);
        converter = new JsonRowConverter(changeSchema.schema());
        sequencePosition =
            sequenceColumn == null ? -1 : position(changeSchema, sequenceColumn, tableName);
        rowSchemaId = changeSchema.schema().schemaId();
        DebeziumSchemas.checkUnchanged(envelopeSchema, changeSchema, tableName, locator);
      }
    }
    Map<String, String> units = new HashMap<>();
    for (JsonNode field : DebeziumSchemas.rowStruct(envelopeSchema).path("fields")) {
      if (field.hasNonNull("name")) {
        units.put(field.path("field").asText(), DebeziumSchemas.unitOf(field));
      }
    }
    lastEnvelopeSchema = envelopeSchema;
    lastUnits = units;
    return units;
  }
}
