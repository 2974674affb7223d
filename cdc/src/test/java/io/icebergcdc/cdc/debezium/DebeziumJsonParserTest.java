package io.icebergcdc.cdc.debezium;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.ChangeSchema;
import io.icebergcdc.cdc.ColumnMask;
import io.icebergcdc.cdc.MalformedChangeException;
import io.icebergcdc.cdc.Operation;
import io.icebergcdc.cdc.SourceSchemaChangedException;
import io.icebergcdc.cdc.SourceSequence;
import java.math.BigDecimal;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.util.List;
import org.apache.flink.table.data.RowData;
import org.apache.iceberg.Schema;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;

class DebeziumJsonParserTest {

  private static final String SCHEMA =
      "{\"type\":\"struct\",\"fields\":["
          + "{\"type\":\"struct\",\"field\":\"before\",\"optional\":true,\"fields\":[]},"
          + "{\"type\":\"struct\",\"field\":\"after\",\"optional\":true,\"fields\":["
          + "{\"type\":\"int64\",\"optional\":false,\"field\":\"id\"},"
          + "{\"type\":\"string\",\"optional\":true,\"field\":\"name\"},"
          + "{\"type\":\"bytes\",\"optional\":true,\"name\":\"org.apache.kafka.connect.data.Decimal\","
          + "\"parameters\":{\"scale\":\"2\",\"connect.decimal.precision\":\"10\"},\"field\":\"price\"},"
          + "{\"type\":\"int32\",\"optional\":true,\"name\":\"io.debezium.time.Date\",\"field\":\"day\"},"
          + "{\"type\":\"int64\",\"optional\":true,\"name\":\"io.debezium.time.Timestamp\",\"field\":\"ts\"},"
          + "{\"type\":\"string\",\"optional\":true,\"name\":\"io.debezium.time.ZonedTimestamp\",\"field\":\"tstz\"},"
          + "{\"type\":\"string\",\"optional\":true,\"name\":\"io.debezium.data.Uuid\",\"field\":\"uid\"},"
          + "{\"type\":\"boolean\",\"optional\":true,\"field\":\"flag\"}]},"
          + "{\"type\":\"struct\",\"field\":\"source\",\"fields\":[]},"
          + "{\"type\":\"string\",\"field\":\"op\"}]}";

  private static final ChangeSchema CHANGE_SCHEMA =
      new ChangeSchema(
          DebeziumSchemas.toIcebergSchema(
              DebeziumJsonParser.readTree(SCHEMA, "test"), List.of("id")));

  private final DebeziumJsonParser parser = new DebeziumJsonParser(CHANGE_SCHEMA, "db.t", null);

  private static String pg(String op, String before, String after, long lsn) {
    return "{\"before\":"
        + before
        + ",\"after\":"
        + after
        + ",\"source\":{\"connector\":\"postgresql\",\"schema\":\"public\",\"table\":\"t\",\"lsn\":"
        + lsn
        + ",\"ts_ms\":1700000000000},\"op\":\""
        + op
        + "\"}";
  }

  @Test
  void readsAnEnvelopeWithItsSchemaInTheUnitsTheSchemaNames() {
    String after =
        "{\"id\":1,\"name\":\"a\",\"price\":\"MDk=\",\"day\":19000,\"ts\":1700000000123,"
            + "\"tstz\":\"2024-01-02T03:04:05.123456Z\","
            + "\"uid\":\"123e4567-e89b-12d3-a456-426614174000\",\"flag\":true}";
    String json = "{\"schema\":" + SCHEMA + ",\"payload\":" + pg("c", "null", after, 42) + "}";

    List<ChangeEvent> events = parser.parse(json, "line 1");

    assertThat(events).hasSize(1);
    ChangeEvent event = events.get(0);
    assertThat(event.operation()).isEqualTo(Operation.INSERT);
    assertThat(event.table()).isEqualTo("public.t");
    assertThat(event.sequence()).isEqualTo(SourceSequence.postgresLsn(42));
    assertThat(event.sourceTimestampMillis()).isEqualTo(1700000000000L);
    RowData row = event.after();
    assertThat(row.getLong(0)).isEqualTo(1L);
    assertThat(row.getString(1).toString()).isEqualTo("a");
    assertThat(row.getDecimal(2, 10, 2).toBigDecimal()).isEqualTo(new BigDecimal("123.45"));
    assertThat(row.getInt(3)).isEqualTo((int) LocalDate.of(2022, 1, 8).toEpochDay());
    assertThat(row.getTimestamp(4, 6).getMillisecond()).isEqualTo(1700000000123L);
    assertThat(row.getTimestamp(5, 6).toInstant())
        .isEqualTo(Instant.parse("2024-01-02T03:04:05.123456Z"));
    assertThat(row.getBinary(6)).hasSize(16);
    assertThat(row.getBoolean(7)).isTrue();
  }

  @Test
  void readsAPayloadInAnEnvelopeWithoutItsSchemaAsTheBarePayload() {
    String after = "{\"id\":3,\"day\":\"2024-02-29\"}";
    String payload = pg("u", "null", after, 8);
    ChangeEvent bare = parser.parse(payload, "line 3").get(0);
    ChangeEvent enveloped = parser.parse("{\"payload\":" + payload + "}", "line 3").get(0);
    assertThat(enveloped.operation()).isEqualTo(Operation.UPDATE);
    assertThat(enveloped.sequence()).isEqualTo(bare.sequence());
    assertThat(enveloped.after()).isEqualTo(bare.after());
    assertThat(parser.parse("{\"payload\":null}", "line 4")).isEmpty();
    // A bad operation is named as such, not as a missing one.
    assertThatThrownBy(
            () -> parser.parse("{\"payload\":" + pg("x", "null", after, 9) + "}", "line 5"))
        .isInstanceOf(MalformedChangeException.class)
        .hasMessageContaining("'x'");
  }

  @Test
  void readsAPayloadWithoutSchemaInTheTablesTypes() {
    String after =
        "{\"id\":2,\"price\":\"7.5\",\"day\":\"2024-02-29\",\"ts\":\"2024-02-29T10:00:00\"}";
    ChangeEvent event = parser.parse(pg("r", "null", after, 7), "line 2").get(0);
    assertThat(event.operation()).isEqualTo(Operation.SNAPSHOT_READ);
    assertThat(event.after().getDecimal(2, 10, 2).toBigDecimal()).isEqualTo(new BigDecimal("7.50"));
    assertThat(event.after().getInt(3)).isEqualTo((int) LocalDate.of(2024, 2, 29).toEpochDay());
    assertThat(event.after().getTimestamp(4, 6).toLocalDateTime())
        .isEqualTo(LocalDateTime.of(2024, 2, 29, 10, 0));
    assertThat(event.after().isNullAt(1)).isTrue();
  }

  @Test
  void aDeleteNeedsOnlyTheKeyOfItsBeforeImage() {
    ChangeEvent event = parser.parse(pg("d", "{\"id\":3}", "null", 9), "l").get(0);
    assertThat(event.operation()).isEqualTo(Operation.DELETE);
    assertThat(event.key()).isEqualTo(CHANGE_SCHEMA.keyOf(event.before()));
  }

  @Test
  void anEventReadFromItsBytesIsTheEventReadFromItsText() {
    String json = pg("u", "null", "{\"id\":1,\"name\":\"zwölf €\"}", 11);
    assertThat(parser.parse(json.getBytes(java.nio.charset.StandardCharsets.UTF_8), "l"))
        .isEqualTo(parser.parse(json, "l"));
    byte[] notUtf8 = pg("c", "null", "{\"id\":1,\"name\":\"x\"}", 11).getBytes();
    notUtf8[notUtf8.length - 20] = (byte) 0xff;
    assertThatThrownBy(() -> parser.parse(notUtf8, "topic t/0@7"))
        .isInstanceOf(io.icebergcdc.cdc.MalformedChangeException.class)
        .hasMessageStartingWith("topic t/0@7: not valid JSON");
  }

  @Test
  void anUpdateThatChangesTheKeyBecomesADeleteAndAnInsert() {
    List<ChangeEvent> events =
        parser.parse(pg("u", "{\"id\":1,\"name\":\"x\"}", "{\"id\":5,\"name\":\"x\"}", 11), "l");
    assertThat(events)
        .extracting(ChangeEvent::operation)
        .containsExactly(Operation.DELETE, Operation.INSERT);
    assertThat(events.get(0).keyRow().getLong(0)).isEqualTo(1L);
    assertThat(events.get(1).keyRow().getLong(0)).isEqualTo(5L);
    assertThat(events.get(0).sequence()).isEqualTo(events.get(1).sequence());
  }

  @Test
  void postgresSequenceOrdersByLastCommitLsnFirst() {
    String json =
        "{\"after\":{\"id\":1},\"source\":{\"lsn\":50,\"sequence\":\"[\\\"0/64\\\",\\\"50\\\"]\"},"
            + "\"op\":\"u\"}";
    assertThat(parser.parse(json, "l").get(0).sequence())
        .isEqualTo(SourceSequence.postgresLsn(100, 50));
  }

  /**
   * A row of Debezium's own snapshot of PostgreSQL ({@code [null, X]}) is before the log: the first
   * transaction streamed after it carries no last commit either ({@code [null, L]}) and may have
   * changed the key at an LSN below X, and its change must win. A read of an incremental snapshot,
   * which knows the last commit, keeps its position.
   */
  @Test
  void aRowOfDebeziumsPostgresSnapshotIsBeforeTheLog() {
    String read =
        "{\"after\":{\"id\":1},\"source\":{\"lsn\":1000,\"sequence\":\"[null,\\\"1000\\\"]\"},"
            + "\"op\":\"r\"}";
    String firstStreamed =
        "{\"after\":{\"id\":1},\"source\":{\"lsn\":900,\"sequence\":\"[null,\\\"900\\\"]\"},"
            + "\"op\":\"u\"}";
    SourceSequence snapshot = parser.parse(read, "l").get(0).sequence();
    SourceSequence streamed = parser.parse(firstStreamed, "l").get(0).sequence();
    assertThat(snapshot.isBeforeLog()).isTrue();
    assertThat(streamed.compareTo(snapshot)).isPositive();

    String incremental =
        "{\"after\":{\"id\":1},\"source\":{\"lsn\":1000,\"sequence\":\"[\\\"800\\\",\\\"1000\\\"]\"},"
            + "\"op\":\"r\"}";
    assertThat(parser.parse(incremental, "l").get(0).sequence())
        .isEqualTo(SourceSequence.postgresLsn(800, 1000));
  }

  @Test
  void mysqlSequenceIsFilePositionAndRow() {
    String json =
        "{\"after\":{\"id\":1},\"source\":{\"connector\":\"mysql\",\"db\":\"inv\",\"table\":\"t\","
            + "\"file\":\"mysql-bin.000003\",\"pos\":4015,\"row\":2},\"op\":\"c\"}";
    ChangeEvent event = parser.parse(json, "l").get(0);
    assertThat(event.sequence()).isEqualTo(SourceSequence.mysqlBinlog("mysql-bin.000003", 4015, 2));
    assertThat(event.table()).isEqualTo("inv.t");
  }

  @Test
  void aNamedSequenceColumnOrdersInsteadOfTheSourcePosition() {
    DebeziumJsonParser byColumn = new DebeziumJsonParser(CHANGE_SCHEMA, "db.t", "ts");
    ChangeEvent event =
        byColumn
            .parse("{\"after\":{\"id\":1,\"ts\":\"2024-01-01T00:00:01\"},\"op\":\"c\"}", "l")
            .get(0);
    assertThat(event.sequence()).isEqualTo(SourceSequence.column(1704067201000000L));
    // A delete's before-image carries the value of the change that wrote the row: after it.
    ChangeEvent delete =
        byColumn
            .parse("{\"before\":{\"id\":1,\"ts\":\"2024-01-01T00:00:01\"},\"op\":\"d\"}", "l")
            .get(0);
    assertThat(delete.sequence())
        .isEqualTo(SourceSequence.column(1704067201000000L).ofDeletedRow())
        .isGreaterThan(event.sequence())
        .isLessThan(SourceSequence.column(1704067201000001L));
    assertThatThrownBy(() -> new DebeziumJsonParser(CHANGE_SCHEMA, "db.t", "nope"))
        .hasMessageContaining("'nope'");
  }

  @Test
  void aTombstoneYieldsNoChange() {
    assertThat(parser.parse("null", "l")).isEmpty();
    assertThat(parser.parse("{\"schema\":{},\"payload\":null}", "l")).isEmpty();
  }

  /** A truncate is a change of its table at its source position, without rows or key. */
  @Test
  void aTruncateIsAChangeOfItsTableWithoutRows() {
    assertThat(parser.parse(pg("t", "null", "null", 7), "l"))
        .singleElement()
        .satisfies(
            truncate -> {
              assertThat(truncate.operation()).isEqualTo(io.icebergcdc.cdc.Operation.TRUNCATE);
              assertThat(truncate.before()).isNull();
              assertThat(truncate.after()).isNull();
              assertThat(truncate.key()).isEqualTo(io.icebergcdc.cdc.TruncateCopies.NO_KEY);
              assertThat(truncate.sequence())
                  .isEqualTo(parser.parse(pg("c", "null", "{\"id\":1}", 7), "l").get(0).sequence());
            });
    // Ordered by a column of the rows, a truncate has nothing to be ordered by.
    DebeziumJsonParser bySequence = new DebeziumJsonParser(CHANGE_SCHEMA, "db.t", "id");
    assertThatThrownBy(() -> bySequence.parse(pg("t", "null", "null", 7), "l"))
        .isInstanceOf(MalformedChangeException.class)
        .hasMessageContaining("a truncate has no sequence column 'id'");
  }

  @Test
  void badRecordsFailWithAMessageNamingTheRecordAndTheProblem() {
    assertMalformed("{not json", "not valid JSON");
    assertMalformed(pg("x", "null", "{\"id\":1}", 1), "unknown operation 'x'");
    assertMalformed("{\"after\":{\"id\":1},\"source\":{\"lsn\":1}}", "no 'op'");
    assertMalformed(pg("c", "null", "{\"name\":\"no key\"}", 1), "'id'");
    assertMalformed(pg("c", "null", "{\"id\":1,\"colour\":\"red\"}", 1), "'colour'");
    assertMalformed(pg("c", "null", "{\"id\":\"one\"}", 1), "column 'id'");
    assertMalformed(pg("d", "null", "null", 1), "delete has no 'before'");
    assertMalformed(pg("c", "null", "null", 1), "has no 'after'");
    assertMalformed("{\"after\":{\"id\":1},\"source\":{},\"op\":\"c\"}", "no source position");
  }

  /**
   * Values that were read wrong without a word are read exactly or refused: an integer past 64 bits
   * (its low bits were kept), a decimal's bytes at the scale the event's schema gives (they were
   * read at the table's); a decimal whose exponent no column holds is refused at once.
   */
  @Test
  void valuesThatCannotBeReadExactlyAreBadRecords() {
    assertMalformed(pg("c", "null", "{\"id\":18446744073709551617}", 1), "column 'id'");
    // 12.345 at the event's scale 3 (given as text or as a number), which the table's scale 2
    // cannot hold.
    String scale3 = SCHEMA.replace("{\"scale\":\"2\",", "{\"scale\":\"3\",");
    assertThat(scale3).isNotEqualTo(SCHEMA);
    for (String schema : List.of(scale3, scale3.replace("\"scale\":\"3\"", "\"scale\":3"))) {
      assertThatThrownBy(
              () ->
                  parser.parse(
                      "{\"schema\":"
                          + schema
                          + ",\"payload\":"
                          + pg("c", "null", "{\"id\":1,\"price\":\"MDk=\"}", 1)
                          + "}",
                      "changes.jsonl:7"))
          .isInstanceOf(MalformedChangeException.class)
          .hasMessageContaining("column 'price'");
    }
    // 12.340 at scale 3 is 12.34 at the table's.
    RowData row =
        parser
            .parse(
                "{\"schema\":"
                    + scale3
                    + ",\"payload\":"
                    + pg("c", "null", "{\"id\":1,\"price\":\"MDQ=\"}", 1)
                    + "}",
                "changes.jsonl:8")
            .get(0)
            .after();
    assertThat(row.getDecimal(2, 10, 2).toBigDecimal()).isEqualTo(new BigDecimal("12.34"));
    // A decimal given as a JSON number is read as a double; one whose exponent no column holds is
    // refused at once, and 1.5 is 1.50.
    assertMalformed(pg("c", "null", "{\"id\":1,\"price\":\"1e300000000\"}", 1), "column 'price'");
    for (String bytesOrText : List.of("text", "bytes")) {
      RowData number =
          bytesOrText.equals("text")
              ? parser.parse(pg("c", "null", "{\"id\":1,\"price\":1.5}", 1), "l").get(0).after()
              : parser
                  .parse(
                      pg("c", "null", "{\"id\":1,\"price\":1.5}", 1)
                          .getBytes(java.nio.charset.StandardCharsets.UTF_8),
                      "l")
                  .get(0)
                  .after();
      assertThat(number.getDecimal(2, 10, 2).toBigDecimal()).isEqualTo(new BigDecimal("1.50"));
    }
  }

  @Test
  void anUnchangedToastedValueLeavesItsColumnOutOfTheUpdate() {
    ChangeEvent update =
        parser
            .parse(pg("u", "null", "{\"id\":1,\"name\":\"__debezium_unavailable_value\"}", 1), "l")
            .get(0);
    int name = CHANGE_SCHEMA.schema().columns().indexOf(CHANGE_SCHEMA.schema().findField("name"));
    assertThat(update.unavailableColumns()).isEqualTo(ColumnMask.EMPTY.with(name));
    assertThat(update.missingColumns()).isEqualTo(update.unavailableColumns());
    assertThat(update.after().isNullAt(name)).isTrue();
    assertThat(
            parser
                .parse(pg("u", "null", "{\"id\":1,\"name\":\"x\"}", 2), "l")
                .get(0)
                .unavailableColumns()
                .isEmpty())
        .isTrue();
  }

  private void assertMalformed(String json, String expected) {
    assertThatThrownBy(() -> parser.parse(json, "changes.jsonl:7"))
        .isInstanceOf(MalformedChangeException.class)
        .hasMessageStartingWith("changes.jsonl:7")
        .hasMessageContaining(expected);
  }

  /** The test's schema with its after struct's fields changed by {@code edit}. */
  private static String schemaWith(String from, String to) {
    assertThat(SCHEMA).contains(from);
    return SCHEMA.replace(from, to);
  }

  @Test
  void anEventWithTheTablesSchemaIsNotASchemaChange() {
    DebeziumJsonParser detecting =
        new DebeziumJsonParser(CHANGE_SCHEMA, "db.t", null).detectingSchemaChanges();
    String json =
        "{\"schema\":" + SCHEMA + ",\"payload\":" + pg("c", "null", "{\"id\":1}", 42) + "}";

    assertThat(detecting.parse(json, "line 1")).hasSize(1);
  }

  @Test
  void anAddedColumnIsASchemaChangeWithTheEventsSchema() {
    DebeziumJsonParser detecting =
        new DebeziumJsonParser(CHANGE_SCHEMA, "db.t", null).detectingSchemaChanges();
    String schema =
        schemaWith(
            "\"field\":\"flag\"}",
            "\"field\":\"flag\"},{\"type\":\"string\",\"optional\":true,\"field\":\"note\"}");
    String json =
        "{\"schema\":"
            + schema
            + ",\"payload\":"
            + pg("c", "null", "{\"id\":1,\"note\":\"x\"}", 42)
            + "}";

    assertThatThrownBy(() -> detecting.parse(json, "line 7"))
        .isInstanceOfSatisfying(
            SourceSchemaChangedException.class,
            e -> {
              assertThat(e.table()).isEqualTo("db.t");
              assertThat(e.changes()).containsExactly("column 'note' added, string");
              assertThat(e.sourceSchema().findField("note").type())
                  .isEqualTo(Types.StringType.get());
              assertThat(e.sourceSchema().identifierFieldNames()).containsExactly("id");
            })
        .hasMessageContaining("line 7");
    // Without detection the same event does not fit the table: a malformed event.
    assertThatThrownBy(() -> parser.parse(json, "line 7"))
        .isInstanceOf(MalformedChangeException.class)
        .hasMessageContaining("'note' is not in the table's schema");
  }

  @Test
  void aWidenedTypeIsASchemaChangeAndANarrowerOneIsNot() {
    DebeziumJsonParser detecting =
        new DebeziumJsonParser(CHANGE_SCHEMA, "db.t", null).detectingSchemaChanges();
    String widened =
        schemaWith(
            "\"parameters\":{\"scale\":\"2\",\"connect.decimal.precision\":\"10\"}",
            "\"parameters\":{\"scale\":\"2\",\"connect.decimal.precision\":\"20\"}");
    String wideJson =
        "{\"schema\":" + widened + ",\"payload\":" + pg("c", "null", "{\"id\":1}", 42) + "}";
    assertThatThrownBy(() -> detecting.parse(wideJson, "line 1"))
        .isInstanceOfSatisfying(
            SourceSchemaChangedException.class,
            e ->
                assertThat(e.changes())
                    .containsExactly(
                        "column 'price' widened from decimal(10, 2) to decimal(20, 2)"));

    String narrower =
        schemaWith(
            "{\"type\":\"int64\",\"optional\":false,\"field\":\"id\"}",
            "{\"type\":\"int32\",\"optional\":false,\"field\":\"id\"}");
    String narrowJson =
        "{\"schema\":" + narrower + ",\"payload\":" + pg("c", "null", "{\"id\":1}", 42) + "}";
    assertThat(detecting.parse(narrowJson, "line 2")).hasSize(1);
  }

  @Test
  void aDroppedRequiredColumnIsASchemaChange() {
    Schema required =
        new Schema(
            List.of(
                Types.NestedField.required(1, "id", Types.LongType.get()),
                Types.NestedField.required(2, "name", Types.StringType.get())),
            java.util.Set.of(1));
    DebeziumJsonParser detecting =
        new DebeziumJsonParser(new ChangeSchema(required), "db.t", null).detectingSchemaChanges();
    String schema =
        "{\"type\":\"struct\",\"fields\":[{\"type\":\"struct\",\"field\":\"after\",\"fields\":["
            + "{\"type\":\"int64\",\"optional\":false,\"field\":\"id\"}]},"
            + "{\"type\":\"string\",\"field\":\"op\"}]}";
    String json =
        "{\"schema\":" + schema + ",\"payload\":" + pg("c", "null", "{\"id\":1}", 42) + "}";

    assertThatThrownBy(() -> detecting.parse(json, "line 1"))
        .isInstanceOfSatisfying(
            SourceSchemaChangedException.class,
            e -> assertThat(e.changes()).containsExactly("required column 'name' dropped"));
  }

  @Test
  void eventsReadFromBytesEqualThoseReadAsTextWhateverTheirShape() {
    String after =
        "{\"id\":1,\"name\":\"a\",\"price\":\"MDk=\",\"day\":19000,\"ts\":1700000000123,"
            + "\"tstz\":\"2024-01-02T03:04:05.123456Z\",\"flag\":true}";
    String otherSchema =
        SCHEMA.replace("io.debezium.time.Timestamp", "io.debezium.time.MicroTimestamp");
    List<String> events =
        List.of(
            "{\"schema\":" + SCHEMA + ",\"payload\":" + pg("c", "null", after, 1) + "}",
            // The same schema again, then another one (a timestamp read in other units), then the
            // first again: each event must be read with its own schema.
            "{\"schema\":" + SCHEMA + ",\"payload\":" + pg("u", "null", after, 2) + "}",
            "{\"schema\":" + otherSchema + ",\"payload\":" + pg("u", "null", after, 3) + "}",
            "{ \"schema\" : " + SCHEMA + " , \"payload\" : " + pg("u", "null", after, 4) + " }",
            "{\"payload\":" + pg("u", "null", after, 5) + ",\"schema\":" + otherSchema + "}",
            pg("d", after, "null", 6),
            "{\"schema\":" + SCHEMA + ",\"payload\":" + pg("u", "null", after, 7) + "}",
            // Written as the one before, but with a field after the payload.
            "{\"schema\":" + SCHEMA + ",\"payload\":" + pg("u", "null", after, 8) + ",\"x\":1}",
            "{\"schema\":" + SCHEMA + ",\"payload\":null}",
            "null");
    DebeziumJsonParser fromBytes = new DebeziumJsonParser(CHANGE_SCHEMA, "db.t", null);
    DebeziumJsonParser fromText = new DebeziumJsonParser(CHANGE_SCHEMA, "db.t", null);
    List<ChangeEvent> all = new java.util.ArrayList<>();
    for (String event : events) {
      List<ChangeEvent> parsed =
          fromBytes.parse(event.getBytes(java.nio.charset.StandardCharsets.UTF_8), "x");
      assertThat(parsed).isEqualTo(fromText.parse(event, "x"));
      all.addAll(parsed);
    }
    assertThat(all).hasSize(8);
    // The units of the schema each event carries: milliseconds, then microseconds.
    assertThat(all.get(1).after().getTimestamp(4, 6).getMillisecond()).isEqualTo(1700000000123L);
    assertThat(all.get(2).after().getTimestamp(4, 6).getMillisecond()).isEqualTo(1700000000L);
    assertThat(all.get(3).after().getTimestamp(4, 6).getMillisecond()).isEqualTo(1700000000123L);
    assertThat(all.get(4).after().getTimestamp(4, 6).getMillisecond()).isEqualTo(1700000000L);
  }

  @Test
  void bytesThatAreNotJsonAfterAKnownSchemaFailNamingTheirLocator() {
    String after = "{\"id\":1,\"name\":\"a\"}";
    parser.parse(
        ("{\"schema\":" + SCHEMA + ",\"payload\":" + pg("c", "null", after, 1) + "}")
            .getBytes(java.nio.charset.StandardCharsets.UTF_8),
        "file:1");
    assertThatThrownBy(
            () ->
                parser.parse(
                    ("{\"schema\":" + SCHEMA + ",\"payload\":" + pg("c", "null", after, 2) + "x}")
                        .getBytes(java.nio.charset.StandardCharsets.UTF_8),
                    "file:2"))
        .isInstanceOf(MalformedChangeException.class)
        .hasMessageStartingWith("file:2: not valid JSON");
  }

  @Test
  void bytesThatAreNotJsonFailNamingTheirLocator() {
    assertThatThrownBy(
            () ->
                parser.parse(
                    ("{\"schema\":" + SCHEMA + ",\"payload\":{\"op\":}")
                        .getBytes(java.nio.charset.StandardCharsets.UTF_8),
                    "file:7"))
        .isInstanceOf(MalformedChangeException.class)
        .hasMessageStartingWith("file:7: not valid JSON");
  }

  /**
   * Two events on one line (files joined without a newline between them) are not valid JSON, in
   * every shape and on every path: read as bytes, the first with a schema known from the event
   * before or not, and as text. Read as the first event, the second was dropped without a word.
   */
  @Test
  void aSecondEventOnTheLineIsNotValidJson() {
    String first = pg("c", "null", "{\"id\":1,\"name\":\"a\"}", 1);
    String second = pg("c", "null", "{\"id\":2,\"name\":\"b\"}", 2);
    String enveloped = "{\"schema\":" + SCHEMA + ",\"payload\":" + first + "}";
    String envelopedSecond = "{\"schema\":" + SCHEMA + ",\"payload\":" + second + "}";
    for (String line :
        List.of(first + second, first + " " + second, enveloped + envelopedSecond, first + "1")) {
      DebeziumJsonParser fresh = new DebeziumJsonParser(CHANGE_SCHEMA, "db.t", null);
      assertThatThrownBy(() -> fresh.parse(line, "file:3"))
          .as(line)
          .isInstanceOf(MalformedChangeException.class)
          .hasMessageStartingWith("file:3: not valid JSON: more follows its value");
      assertThatThrownBy(
              () -> fresh.parse(line.getBytes(java.nio.charset.StandardCharsets.UTF_8), "file:3"))
          .as(line)
          .isInstanceOf(MalformedChangeException.class)
          .hasMessageStartingWith("file:3: not valid JSON");
    }
    // After an event whose schema the parser now knows byte for byte.
    parser.parse(enveloped.getBytes(java.nio.charset.StandardCharsets.UTF_8), "file:1");
    assertThatThrownBy(
            () ->
                parser.parse(
                    (enveloped + envelopedSecond).getBytes(java.nio.charset.StandardCharsets.UTF_8),
                    "file:2"))
        .isInstanceOf(MalformedChangeException.class)
        .hasMessageStartingWith("file:2: not valid JSON");
  }
}
