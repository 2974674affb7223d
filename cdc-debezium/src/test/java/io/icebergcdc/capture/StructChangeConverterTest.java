package io.icebergcdc.capture;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.icebergcdc.cdc.BadRecordPolicy;
import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.ChangeSchema;
import io.icebergcdc.cdc.ColumnMask;
import io.icebergcdc.cdc.MalformedChangeException;
import io.icebergcdc.cdc.Operation;
import io.icebergcdc.cdc.SourceSchemaChangedException;
import io.icebergcdc.cdc.debezium.DebeziumJsonParser;
import io.icebergcdc.cdc.debezium.DebeziumSchemas;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.connect.data.Decimal;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaBuilder;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.data.Timestamp;
import org.apache.kafka.connect.json.JsonConverter;
import org.apache.kafka.connect.json.JsonConverterConfig;
import org.apache.kafka.connect.source.SourceRecord;
import org.junit.jupiter.api.Test;

/**
 * The changes converted from Debezium's structs must be those the JSON path gives for the same
 * records written by Kafka Connect's JSON converter with their schema: every test converts both
 * ways and compares.
 */
class StructChangeConverterTest {

  private static final String TOPIC = "server.public.items";
  private static final String LOCATOR = "db, topic " + TOPIC;

  private static final Schema ROW =
      SchemaBuilder.struct()
          .name("server.public.items.Value")
          .optional()
          .field("id", Schema.INT64_SCHEMA)
          .field("name", Schema.OPTIONAL_STRING_SCHEMA)
          .field("small", Schema.OPTIONAL_INT16_SCHEMA)
          .field("n", Schema.OPTIONAL_INT32_SCHEMA)
          .field("f", Schema.OPTIONAL_FLOAT32_SCHEMA)
          .field("d", Schema.OPTIONAL_FLOAT64_SCHEMA)
          .field("flag", Schema.OPTIONAL_BOOLEAN_SCHEMA)
          .field(
              "price", Decimal.builder(2).parameter("connect.decimal.precision", "10").optional())
          .field("day", named(SchemaBuilder.int32(), "io.debezium.time.Date"))
          .field("t", named(SchemaBuilder.int64(), "io.debezium.time.MicroTime"))
          .field("tms", named(SchemaBuilder.int32(), "io.debezium.time.Time"))
          .field("ts", named(SchemaBuilder.int64(), "io.debezium.time.MicroTimestamp"))
          .field("tsms", named(SchemaBuilder.int64(), "io.debezium.time.Timestamp"))
          .field("tsns", named(SchemaBuilder.int64(), "io.debezium.time.NanoTimestamp"))
          .field("tstz", named(SchemaBuilder.string(), "io.debezium.time.ZonedTimestamp"))
          .field("cts", Timestamp.builder().optional())
          .field("cday", org.apache.kafka.connect.data.Date.builder().optional())
          .field("uid", named(SchemaBuilder.string(), "io.debezium.data.Uuid"))
          .field("doc", named(SchemaBuilder.string(), "io.debezium.data.Json"))
          .field("blob", Schema.OPTIONAL_BYTES_SCHEMA)
          .build();

  private static final Schema PG_SOURCE =
      SchemaBuilder.struct()
          .name("io.debezium.connector.postgresql.Source")
          .field("version", Schema.STRING_SCHEMA)
          .field("ts_ms", Schema.INT64_SCHEMA)
          .field("db", Schema.STRING_SCHEMA)
          .field("sequence", Schema.OPTIONAL_STRING_SCHEMA)
          .field("schema", Schema.STRING_SCHEMA)
          .field("table", Schema.STRING_SCHEMA)
          .field("lsn", Schema.OPTIONAL_INT64_SCHEMA)
          .build();

  private static final Schema MYSQL_SOURCE =
      SchemaBuilder.struct()
          .name("io.debezium.connector.mysql.Source")
          .field("ts_ms", Schema.INT64_SCHEMA)
          .field("db", Schema.STRING_SCHEMA)
          .field("table", Schema.OPTIONAL_STRING_SCHEMA)
          .field("file", Schema.STRING_SCHEMA)
          .field("pos", Schema.INT64_SCHEMA)
          .field("row", Schema.INT32_SCHEMA)
          .build();

  private static final Schema ENVELOPE = envelope(ROW, PG_SOURCE);

  private static final ChangeSchema TABLE =
      new ChangeSchema(DebeziumSchemas.toIcebergSchema(jsonSchema(ENVELOPE), List.of("id")));

  private static SchemaBuilder named(SchemaBuilder builder, String name) {
    return builder.name(name).optional();
  }

  private static Schema envelope(Schema row, Schema source) {
    return SchemaBuilder.struct()
        .name("server.public.items.Envelope")
        .field("before", row)
        .field("after", row)
        .field("source", source)
        .field("op", Schema.STRING_SCHEMA)
        .field("ts_ms", Schema.OPTIONAL_INT64_SCHEMA)
        .build();
  }

  private static com.fasterxml.jackson.databind.JsonNode jsonSchema(Schema schema) {
    JsonConverter converter = new JsonConverter();
    converter.configure(Map.of(JsonConverterConfig.SCHEMAS_ENABLE_CONFIG, "true"), false);
    return converter.asJsonSchema(schema);
  }

  private static Struct fullRow(long id) {
    return new Struct(ROW)
        .put("id", id)
        .put("name", "name " + id)
        .put("small", (short) -3)
        .put("n", 42)
        .put("f", 0.1f)
        .put("d", 2.5e-3)
        .put("flag", true)
        .put("price", new BigDecimal("1234.50"))
        .put("day", 19_700)
        .put("t", 45_296_789_012L)
        .put("tms", 45_296_789)
        .put("ts", 1_700_000_000_123_456L)
        .put("tsms", -1_700_000_000_123L)
        .put("tsns", 1_700_000_000_123_456_789L)
        .put("tstz", "2024-05-06T07:08:09.123456+02:00")
        .put("cts", new java.util.Date(1_700_000_000_123L))
        .put("cday", new java.util.Date(19_700L * 86_400_000L))
        .put("uid", "123e4567-e89b-12d3-a456-426614174000")
        .put("doc", "{\"a\": [1, 2]}")
        .put("blob", new byte[] {0, 1, (byte) 0xff});
  }

  private static Struct pgSource(long lsn, String sequence) {
    return new Struct(PG_SOURCE)
        .put("version", "3.5.0.Final")
        .put("ts_ms", 1_700_000_000_000L + lsn)
        .put("db", "db")
        .put("sequence", sequence)
        .put("schema", "public")
        .put("table", "items")
        .put("lsn", lsn);
  }

  private static Struct change(String op, Struct before, Struct after, Struct source) {
    Struct envelope = new Struct(source.schema() == PG_SOURCE ? ENVELOPE : mysqlEnvelope());
    return envelope
        .put("before", before)
        .put("after", after)
        .put("source", source)
        .put("op", op)
        .put("ts_ms", 99L);
  }

  private static Schema mysqlEnvelope;

  private static synchronized Schema mysqlEnvelope() {
    if (mysqlEnvelope == null) {
      mysqlEnvelope = envelope(ROW, MYSQL_SOURCE);
    }
    return mysqlEnvelope;
  }

  /** The changes of both paths; asserts they are equal and returns them. */
  private static List<ChangeEvent> bothWays(Struct envelope) {
    List<ChangeEvent> direct =
        new StructChangeConverter(TABLE, "public.items")
            .convert(envelope, envelope.schema(), LOCATOR);
    List<ChangeEvent> viaJson = viaJson(envelope);
    assertThat(direct).isEqualTo(viaJson);
    return direct;
  }

  private static List<ChangeEvent> viaJson(Struct envelope) {
    JsonConverter converter = new JsonConverter();
    converter.configure(Map.of(JsonConverterConfig.SCHEMAS_ENABLE_CONFIG, "true"), false);
    byte[] json = converter.fromConnectData(TOPIC, envelope.schema(), envelope);
    return new DebeziumJsonParser(TABLE, "public.items", null)
        .detectingSchemaChanges()
        .parse(json, LOCATOR);
  }

  @Test
  void everyTypeConvertsAsTheJsonPathDoes() {
    List<ChangeEvent> events =
        bothWays(change("c", null, fullRow(7), pgSource(1000, "[\"900\",\"1000\"]")));
    assertThat(events).hasSize(1);
    ChangeEvent event = events.get(0);
    assertThat(event.operation()).isEqualTo(Operation.INSERT);
    assertThat(event.table()).isEqualTo("public.items");
    assertThat(event.sourceTimestampMillis()).isEqualTo(1_700_000_001_000L);
    assertThat(event.after().getString(1).toString()).isEqualTo("name 7");
    // Every column is set: a conversion that drops a value would not be caught by equality alone
    // if both paths dropped it.
    for (int i = 0; i < TABLE.schema().columns().size(); i++) {
      assertThat(event.after().isNullAt(i)).as("column %s", i).isFalse();
    }
  }

  @Test
  void nullsNegativeAndEdgeValuesConvertAsTheJsonPathDoes() {
    Struct sparse = new Struct(ROW).put("id", -1L).put("ts", -1L).put("tsns", -1L);
    bothWays(change("r", null, sparse, pgSource(5, null)));
    Struct sparseBuffer =
        new Struct(ROW).put("id", 2L).put("blob", ByteBuffer.wrap(new byte[] {9}));
    bothWays(change("u", null, sparseBuffer, pgSource(6, "[null,\"6\"]")));
  }

  @Test
  void updatesDeletesAndKeyChangesConvertAsTheJsonPathDoes() {
    assertThat(bothWays(change("u", fullRow(7), fullRow(7), pgSource(10, null))))
        .extracting(ChangeEvent::operation)
        .containsExactly(Operation.UPDATE);
    assertThat(bothWays(change("d", fullRow(7), null, pgSource(11, null))))
        .extracting(ChangeEvent::operation)
        .containsExactly(Operation.DELETE);
    Struct keyOnly = new Struct(ROW).put("id", 8L);
    assertThat(bothWays(change("d", keyOnly, null, pgSource(12, null)))).hasSize(1);
    // The old key only (the default replica identity): Debezium stands in for a NOT NULL uuid
    // with "", which is no uuid; a before image is read for its key.
    Struct standIn = new Struct(ROW).put("id", 8L).put("uid", "");
    List<ChangeEvent> delete = bothWays(change("d", standIn, null, pgSource(14, null)));
    assertThat(delete).extracting(ChangeEvent::operation).containsExactly(Operation.DELETE);
    org.apache.flink.table.data.GenericRowData eight =
        new org.apache.flink.table.data.GenericRowData(TABLE.schema().columns().size());
    eight.setField(0, 8L);
    assertThat(delete.get(0).key()).isEqualTo(TABLE.keyOf(eight));
    assertThat(bothWays(change("u", standIn, fullRow(9), pgSource(15, null))).get(0).key())
        .isEqualTo(TABLE.keyOf(eight));
    // In an after image the same value is refused.
    assertThatThrownBy(
            () ->
                new StructChangeConverter(TABLE, "public.items")
                    .convert(
                        change("c", null, fullRow(9).put("uid", ""), pgSource(16, null)),
                        ENVELOPE,
                        LOCATOR))
        .isInstanceOf(MalformedChangeException.class)
        .hasMessageContaining("uid");
    assertThat(bothWays(change("u", fullRow(7), fullRow(9), pgSource(13, null))))
        .extracting(ChangeEvent::operation)
        .containsExactly(Operation.DELETE, Operation.INSERT);
  }

  /**
   * A time outside a day (MySQL's {@code TIME '838:59:59'}, a negative one, PostgreSQL's {@code
   * '24:00:00'}) is refused naming the column on both paths, as the chunked snapshot refuses it,
   * not wrapped into another time of day.
   */
  @Test
  void aTimeOutsideADayIsRefusedByBothPaths() {
    for (long micros : new long[] {3_020_399_000_000L, -1_000_000L, 86_400_000_000L}) {
      Struct envelope = change("c", null, fullRow(5).put("t", micros), pgSource(30, null));
      assertThatThrownBy(
              () ->
                  new StructChangeConverter(TABLE, "public.items")
                      .convert(envelope, envelope.schema(), LOCATOR))
          .isInstanceOf(MalformedChangeException.class)
          .hasMessageContaining("column 't'")
          .hasMessageContaining("a time of day");
      assertThatThrownBy(() -> viaJson(envelope))
          .isInstanceOf(MalformedChangeException.class)
          .hasMessageContaining("column 't'")
          .hasMessageContaining("a time of day");
    }
    assertThat(
            bothWays(change("c", null, fullRow(5).put("t", 86_399_999_999L), pgSource(31, null))))
        .hasSize(1);
  }

  @Test
  void mysqlPositionsConvertAsTheJsonPathDoes() {
    Struct source =
        new Struct(MYSQL_SOURCE)
            .put("ts_ms", 5L)
            .put("db", "shop")
            .put("table", "items")
            .put("file", "mysql-bin.000003")
            .put("pos", 4711L)
            .put("row", 2);
    ChangeEvent event = bothWays(change("c", null, fullRow(1), source)).get(0);
    assertThat(event.table()).isEqualTo("shop.items");
    assertThat(event.sequence().toString()).contains("mysql-bin.000003");
  }

  @Test
  void anUnchangedToastedValueIsLeftOutAndMarkedByBothPaths() {
    int name = TABLE.schema().columns().indexOf(TABLE.schema().findField("name"));
    int blob = TABLE.schema().columns().indexOf(TABLE.schema().findField("blob"));
    Struct row =
        fullRow(3)
            .put("name", DebeziumJsonParser.UNAVAILABLE_VALUE)
            .put("blob", DebeziumJsonParser.UNAVAILABLE_VALUE.getBytes(StandardCharsets.UTF_8));
    ChangeEvent update = bothWays(change("u", null, row, pgSource(20, null))).get(0);
    assertThat(update.operation()).isEqualTo(Operation.UPDATE);
    assertThat(update.unavailableColumns()).isEqualTo(ColumnMask.EMPTY.with(name).with(blob));
    assertThat(update.missingColumns()).isEqualTo(update.unavailableColumns());
    assertThat(update.after().isNullAt(name)).isTrue();
    assertThat(update.after().isNullAt(blob)).isTrue();
    assertThat(
            update.after().getInt(TABLE.schema().columns().indexOf(TABLE.schema().findField("n"))))
        .isEqualTo(42);

    // A change of key: the old key's delete has every value it needs, the new key's insert lacks
    // the values the source did not send.
    Struct oldKey = new Struct(ROW).put("id", 2L);
    List<ChangeEvent> keyChange = bothWays(change("u", oldKey, row, pgSource(21, null)));
    assertThat(keyChange)
        .extracting(ChangeEvent::operation)
        .containsExactly(Operation.DELETE, Operation.INSERT);
    assertThat(keyChange.get(0).unavailableColumns().isEmpty()).isTrue();
    assertThat(keyChange.get(1).missingColumns()).isEqualTo(update.unavailableColumns());

    ChangeEvent complete = bothWays(change("u", null, fullRow(3), pgSource(22, null))).get(0);
    assertThat(complete.unavailableColumns().isEmpty()).isTrue();
  }

  @Test
  void anAddedColumnIsASchemaChangeAndTheSchemaSeenBeforeStillConverts() {
    SchemaBuilder wider = SchemaBuilder.struct().name("server.public.items.Value").optional();
    for (org.apache.kafka.connect.data.Field field : ROW.fields()) {
      wider.field(field.name(), field.schema());
    }
    Schema widerRow = wider.field("added", Schema.OPTIONAL_INT32_SCHEMA).build();
    Schema widerEnvelope = envelope(widerRow, PG_SOURCE);
    Struct after = new Struct(widerRow).put("id", 1L).put("added", 5);
    Struct envelope =
        new Struct(widerEnvelope)
            .put("after", after)
            .put("source", pgSource(30, null))
            .put("op", "c");
    StructChangeConverter converter = new StructChangeConverter(TABLE, "public.items");
    assertThat(converter.convert(change("c", null, fullRow(1), pgSource(29, null)), ENVELOPE, "x"))
        .hasSize(1);
    assertThatThrownBy(() -> converter.convert(envelope, widerEnvelope, LOCATOR))
        .isInstanceOf(SourceSchemaChangedException.class)
        .hasMessageContaining("column 'added' added");
    assertThat(converter.convert(change("c", null, fullRow(2), pgSource(31, null)), ENVELOPE, "x"))
        .hasSize(1);
  }

  @Test
  void aRecordOfAnotherTopicBecomesADeadLetterWithItsText() {
    CaptureRoutes routes =
        new CaptureRoutes(
            Map.of(TOPIC, TABLE), Map.of(TOPIC, "public.items"), "db", BadRecordPolicy.DEAD_LETTER);
    RecordConversion conversion = new RecordConversion(routes);
    Struct value = change("c", null, fullRow(1), pgSource(40, null));
    List<CapturedChange> out = new ArrayList<>();
    conversion.convert(record(TOPIC, value), out::add);
    conversion.convert(record("server.public.other", value), out::add);
    Struct unknownOperation = change("x", null, fullRow(2), pgSource(41, null));
    conversion.convert(record(TOPIC, unknownOperation), out::add);
    // A truncate, as Debezium sends it: no rows, and no key.
    conversion.convert(record(TOPIC, change("t", null, null, pgSource(42, null))), out::add);

    assertThat(out).hasSize(4);
    assertThat(out.get(0).route()).isZero();
    assertThat(out.get(1).deadLetter().table()).isEqualTo("server.public.other");
    assertThat(out.get(1).deadLetter().reason()).contains("no captured table has this topic");
    assertThat(out.get(1).deadLetter().record()).contains("\"op\":\"c\"");
    assertThat(out.get(2).deadLetter().table()).isEqualTo("public.items");
    assertThat(out.get(2).deadLetter().reason()).contains("unknown operation 'x'");
    assertThat(out.get(3).deadLetter().table()).isEqualTo("public.items");
    assertThat(out.get(3).deadLetter().reason())
        .contains("topic " + TOPIC)
        .contains(
            "the source table was truncated (operation 't'), which the job applies only with the"
                + " key-indexed writer");

    RecordConversion failing =
        new RecordConversion(
            new CaptureRoutes(
                Map.of(TOPIC, TABLE), Map.of(TOPIC, "public.items"), "db", BadRecordPolicy.FAIL));
    assertThatThrownBy(() -> failing.convert(record(TOPIC, unknownOperation), out::add))
        .isInstanceOf(MalformedChangeException.class)
        .hasMessageContaining("db, topic " + TOPIC)
        .hasMessageContaining("(record '{");
  }

  /** Tables that appear while the job runs, each named {@code lake.<table>}; counts its calls. */
  private static final class Appearing implements AppearingTables {
    final List<String> made = new ArrayList<>();
    private final String clashingName;
    private final String refusal;

    /** Whether the writer of the tables applies their truncates (the key-indexed writer). */
    boolean appliesTruncates = true;

    @Override
    public boolean appliesTruncates() {
      return appliesTruncates;
    }

    Appearing(String clashingName) {
      this(clashingName, null);
    }

    /** Tables the job cannot write, each refused with {@code refusal}. */
    Appearing(String clashingName, String refusal) {
      this.clashingName = clashingName;
      this.refusal = refusal;
    }

    @Override
    public boolean matches(String topic) {
      return topic.startsWith("server.public.");
    }

    @Override
    public String topicOf(String namespace, String name) {
      return "server." + namespace + "." + name;
    }

    @Override
    public boolean exists(String topic) {
      return true;
    }

    @Override
    public String nameOf(String topic) {
      return clashingName != null
          ? clashingName
          : "lake." + topic.substring(topic.lastIndexOf('.') + 1);
    }

    @Override
    public Table tableOf(String topic, boolean takenBefore) {
      made.add(topic);
      String name = topic.substring(topic.lastIndexOf('.') + 1);
      return new Table(
          clashingName != null ? clashingName : "lake." + name,
          "public." + name,
          TABLE,
          null,
          new ChunkedSnapshot.Table(
              topic, "public", name, List.of("id"), List.of("id", "name"), true),
          refusal);
    }
  }

  /**
   * A table the job cannot write (a dropped one whose Iceberg table it cannot take in flight) keeps
   * its route, which the job's state names long after its last change, and ends the job at a change
   * of it, as a refusal, not a bad record.
   */
  @Test
  void aTableTheJobCannotWriteIsTakenAndRefusedAtItsFirstChange() {
    String why = "table public.items was dropped and cannot be written";
    CaptureRoutes routes =
        new CaptureRoutes(
                Map.of("server.public.other", TABLE),
                Map.of("server.public.other", "public.other"),
                Map.of("server.public.other", "lake.other"),
                "db",
                BadRecordPolicy.DEAD_LETTER)
            .takingTablesThatAppear(new Appearing(null, why));
    RecordConversion conversion = new RecordConversion(routes);

    assertThat(routes.take(TOPIC)).as("taken, as the state names it").isEqualTo(1);
    List<CapturedChange> out = new ArrayList<>();
    assertThatThrownBy(
            () ->
                conversion.convert(
                    record(TOPIC, change("c", null, fullRow(2), pgSource(41, null))), out::add))
        .isInstanceOf(io.icebergcdc.cdc.RefusedSourceException.class)
        .hasMessage("db, topic " + TOPIC + ": " + why);
    assertThat(out).as("not a dead letter").isEmpty();
  }

  /**
   * A truncate of a table that appeared goes on to the writer where it applies truncates (the
   * key-indexed writer); where it deletes by key ({@code sink.delete-mode = EQUALITY}), it is a bad
   * record, as of the job's own tables.
   */
  @Test
  void aTruncateOfATableThatAppearedGoesOnOnlyWhereItsWriterAppliesIt() {
    for (boolean applies : List.of(true, false)) {
      Appearing appearing = new Appearing(null);
      appearing.appliesTruncates = applies;
      String other = "server.public.other";
      CaptureRoutes routes =
          new CaptureRoutes(
                  Map.of(other, TABLE),
                  Map.of(other, "public.other"),
                  Map.of(other, "lake.other"),
                  "db",
                  BadRecordPolicy.DEAD_LETTER)
              .takingTablesThatAppear(appearing);
      RecordConversion conversion = new RecordConversion(routes);
      assertThat(routes.take(TOPIC)).isEqualTo(1);
      List<CapturedChange> out = new ArrayList<>();
      conversion.convert(record(TOPIC, change("t", null, null, pgSource(42, null))), out::add);
      assertThat(out).as("applied: %s", applies).hasSize(1);
      if (applies) {
        assertThat(out.get(0).route()).isEqualTo(CapturedChange.APPEARED);
        assertThat(out.get(0).event().operation()).isEqualTo(io.icebergcdc.cdc.Operation.TRUNCATE);
      } else {
        assertThat(out.get(0).deadLetter().reason())
            .contains("which the job applies only with the key-indexed writer");
      }
    }
  }

  @Test
  void aRecordOfATableThatAppearedGoesToTheMainOutputInItsOwnSchema() {
    String other = "server.public.other";
    Appearing appearing = new Appearing(null);
    CaptureRoutes routes =
        new CaptureRoutes(
                Map.of(other, TABLE),
                Map.of(other, "public.other"),
                Map.of(other, "lake.other"),
                "db",
                BadRecordPolicy.FAIL)
            .takingTablesThatAppear(appearing);
    RecordConversion conversion = new RecordConversion(routes);
    List<CapturedChange> out = new ArrayList<>();
    conversion.convert(record(other, change("c", null, fullRow(1), pgSource(40, null))), out::add);
    // Before the enumerator took the table, its changes are skipped: its chunks, read once it is
    // taken, hold them.
    conversion.convert(record(TOPIC, change("c", null, fullRow(9), pgSource(41, null))), out::add);
    assertThat(out).hasSize(1);
    assertThat(appearing.made).isEmpty();

    assertThat(routes.take(TOPIC)).isEqualTo(1);
    conversion.convert(record(TOPIC, change("c", null, fullRow(2), pgSource(41, null))), out::add);
    conversion.convert(
        record(TOPIC, change("u", fullRow(2), fullRow(2), pgSource(42, null))), out::add);

    assertThat(appearing.made).as("made ready once").containsExactly(TOPIC);
    assertThat(out).hasSize(3);
    assertThat(out.get(0).route()).isZero();
    assertThat(out.get(0).event().rowSchemaId()).isEqualTo(ChangeEvent.JOB_SCHEMA);
    for (CapturedChange change : out.subList(1, 3)) {
      assertThat(change.route()).isEqualTo(CapturedChange.APPEARED);
      assertThat(change.event().table()).isEqualTo("lake.items");
      // Its rows describe themselves: the job's serializers do not know its schema.
      assertThat(change.event().rowSchemaId()).isEqualTo(TABLE.schema().schemaId());
    }
    assertThat(out.get(1).event().after().getLong(0)).isEqualTo(2L);
    assertThat(out.get(1).event().key()).isEqualTo(bothWays(out1Envelope()).get(0).key());

    // A topic the patterns do not match is refused as before.
    assertThatThrownBy(
            () ->
                conversion.convert(
                    record("server.other.items", change("c", null, fullRow(3), pgSource(43, null))),
                    out::add))
        .isInstanceOf(MalformedChangeException.class)
        .hasMessageContaining("no captured table has this topic");
  }

  @Test
  void aDeadLetterNamesTheIcebergTableItIsCountedInWhereTheTableIsWrittenWithOthers() {
    String other = "server.public.other";
    CaptureRoutes routes =
        new CaptureRoutes(
                Map.of(other, TABLE, "server.public.own", TABLE),
                Map.of(other, "public.other", "server.public.own", "public.own"),
                Map.of(other, "lake.other"),
                "db",
                BadRecordPolicy.DEAD_LETTER)
            .takingTablesThatAppear(new Appearing(null));
    RecordConversion conversion = new RecordConversion(routes);
    routes.take(TOPIC);
    Struct unknownOperation = change("x", null, fullRow(2), pgSource(41, null));
    List<CapturedChange> out = new ArrayList<>();
    conversion.convert(record(TOPIC, unknownOperation), out::add);
    conversion.convert(record(other, unknownOperation), out::add);
    conversion.convert(record("server.public.own", unknownOperation), out::add);
    conversion.convert(record("server.elsewhere.items", unknownOperation), out::add);

    assertThat(out)
        .extracting(change -> change.deadLetter().table())
        .containsExactly("public.items", "public.other", "public.own", "server.elsewhere.items");
    assertThat(out)
        .extracting(change -> change.deadLetter().writtenAs())
        .as("the table that appeared, one of the job's written with others, one written alone")
        .containsExactly("lake.items", "lake.other", null, null);
  }

  private static Struct out1Envelope() {
    return change("c", null, fullRow(2), pgSource(41, null));
  }

  @Test
  void aTableThatAppearedIsRefusedWhenNamedIntoATableOfAnotherSource() {
    String other = "server.public.other";
    Appearing appearing = new Appearing("lake.other");
    CaptureRoutes routes =
        new CaptureRoutes(
                Map.of(other, TABLE),
                Map.of(other, "public.other"),
                Map.of(other, "lake.other"),
                "db",
                BadRecordPolicy.DEAD_LETTER)
            .takingTablesThatAppear(appearing);
    assertThatThrownBy(() -> routes.take(TOPIC))
        .isInstanceOf(io.icebergcdc.cdc.RefusedSourceException.class)
        .hasMessageContaining("topic " + TOPIC + ", of a table that appeared in db")
        .hasMessageContaining("named into table lake.other")
        .hasMessageContaining("topic " + other);
    // Refused before the table was made ready, which would have changed the other's table.
    assertThat(appearing.made).isEmpty();
  }

  @Test
  void aChangeOfATableThatAppearedCrossesTheSerializer() throws Exception {
    ChangeEvent event =
        new StructChangeConverter(TABLE, "public.items")
            .carryingSchemaId()
            .convert(change("c", null, fullRow(2), pgSource(41, null)), ENVELOPE, LOCATOR)
            .get(0)
            .withTable("lake.items");
    CapturedChangeSerializer serializer =
        (CapturedChangeSerializer)
            new CapturedChangeTypeInfo(List.of(TABLE))
                .createSerializer(
                    new org.apache.flink.api.common.serialization.SerializerConfigImpl());
    CapturedChange appeared = CapturedChange.appeared(event);
    org.apache.flink.core.memory.DataOutputSerializer out =
        new org.apache.flink.core.memory.DataOutputSerializer(256);
    serializer.serialize(appeared, out);
    CapturedChange read =
        serializer.deserialize(
            new org.apache.flink.core.memory.DataInputDeserializer(out.getCopyOfBuffer()));
    assertThat(read.route()).isEqualTo(CapturedChange.APPEARED);
    assertThat(read.event().table()).isEqualTo("lake.items");
    assertThat(read.event().rowSchemaId()).isEqualTo(event.rowSchemaId());
    assertThat(read.event().after().getArity()).isEqualTo(event.after().getArity());
    assertThat(serializer.copy(appeared).route()).isEqualTo(CapturedChange.APPEARED);
  }

  private static SourceRecord record(String topic, Struct value) {
    return new SourceRecord(Map.of(), Map.of(), topic, value.schema(), value);
  }
}
