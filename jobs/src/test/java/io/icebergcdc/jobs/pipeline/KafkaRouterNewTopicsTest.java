package io.icebergcdc.jobs.pipeline;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.icebergcdc.cdc.BadRecordPolicy;
import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.ChangeSchema;
import io.icebergcdc.cdc.MalformedChangeException;
import io.icebergcdc.cdc.NewSourceTableException;
import io.icebergcdc.cdc.debezium.DebeziumJsonParseFunction;
import io.icebergcdc.jobs.definition.KafkaTopics;
import io.icebergcdc.jobs.demo.ChangelogGenerator;
import io.icebergcdc.jobs.kafka.KafkaRecord;
import io.icebergcdc.jobs.kafka.KafkaRouter;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Pattern;
import org.apache.flink.streaming.util.OneInputStreamOperatorTestHarness;
import org.apache.flink.streaming.util.ProcessFunctionTestHarnesses;
import org.apache.iceberg.Schema;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The router of a pattern job meeting topics that appeared while it runs. */
class KafkaRouterNewTopicsTest {

  private static final String ORDERS = "shop.public.orders";

  /** The generator's events: the first with its Connect schema, the others without. */
  private static final List<String> LINES =
      new ChangelogGenerator(20, 10, 0, 0, 3).generate().lines();

  /** The schema of the generator's table, with an id of its own, as an evolved table's. */
  private static final ChangeSchema SCHEMA = schema();

  private static ChangeSchema schema() {
    Schema read =
        KafkaSourceTranslator.schemaOfRecord(
            ChangelogGenerator.kafkaKeyOf(LINES.get(0)).getBytes(StandardCharsets.UTF_8),
            LINES.get(0).getBytes(StandardCharsets.UTF_8),
            List.of(),
            "test");
    return new ChangeSchema(new Schema(3, read.columns(), read.identifierFieldIds()));
  }

  /** Makes the table of a topic ready as {@code cdc.<last part>}, and counts the calls by topic. */
  static final class Tables implements KafkaRouter.NewTopics {
    private static final long serialVersionUID = 1L;
    static final Map<String, AtomicInteger> CALLS = new ConcurrentHashMap<>();

    /** Whether the writer of the new topics' tables applies truncates (the key-indexed writer). */
    private final boolean appliesTruncates;

    Tables() {
      this(true);
    }

    Tables(boolean appliesTruncates) {
      this.appliesTruncates = appliesTruncates;
    }

    @Override
    public boolean appliesTruncates() {
      return appliesTruncates;
    }

    @Override
    public KafkaRouter.NewTopic tableOf(String topic, KafkaRecord record, String locator) {
      CALLS.computeIfAbsent(topic, t -> new AtomicInteger()).incrementAndGet();
      if (topic.endsWith(".bad") || (topic.endsWith(".late") && CALLS.get(topic).get() == 1)) {
        throw new MalformedChangeException(locator + ": no schema to create the table from");
      }
      String table =
          "cdc."
              + topic
                  .substring(topic.lastIndexOf('.') + 1)
                  .replace("orders2", "orders")
                  .replace("items2", "items");
      return new KafkaRouter.NewTopic(table, SCHEMA, null);
    }
  }

  @BeforeEach
  void resetCalls() {
    Tables.CALLS.clear();
  }

  private static KafkaRouter router(BadRecordPolicy policy) {
    return new KafkaRouter(
        Map.of(ORDERS, SCHEMA),
        Map.of(ORDERS, "cdc.orders"),
        Map.of(ORDERS, "cdc.orders"),
        null,
        KafkaTopics.DEBEZIUM_JSON,
        policy,
        Pattern.compile("shop\\.public\\..*"));
  }

  private static KafkaRecord record(String topic, int line) {
    String text = LINES.get(line);
    return new KafkaRecord(
        topic,
        0,
        line,
        ChangelogGenerator.kafkaKeyOf(text).getBytes(StandardCharsets.UTF_8),
        text.getBytes(StandardCharsets.UTF_8));
  }

  /** A truncate of the topic's table, made of the first event, with a sequence after it. */
  private static KafkaRecord truncate(String topic) throws Exception {
    com.fasterxml.jackson.databind.ObjectMapper mapper =
        new com.fasterxml.jackson.databind.ObjectMapper();
    com.fasterxml.jackson.databind.node.ObjectNode envelope =
        (com.fasterxml.jackson.databind.node.ObjectNode) mapper.readTree(LINES.get(0));
    com.fasterxml.jackson.databind.node.ObjectNode payload =
        envelope.has("payload")
            ? (com.fasterxml.jackson.databind.node.ObjectNode) envelope.get("payload")
            : envelope;
    payload.putNull("before");
    payload.putNull("after");
    payload.put("op", "t");
    return new KafkaRecord(
        topic, 0, 99, null, envelope.toString().getBytes(StandardCharsets.UTF_8));
  }

  /**
   * A truncate is applied (sent on as copies) only for the topics whose writer applies truncates
   * (the key-indexed writer); for another topic (a table with equality deletes) it is a bad record.
   * So for a topic that appeared: as the writer of the new topics' tables does.
   */
  @Test
  void aTruncateIsSentOnOnlyForTheTopicsThatApplyThem() throws Exception {
    try (OneInputStreamOperatorTestHarness<KafkaRecord, ChangeEvent> harness =
        ProcessFunctionTestHarnesses.forProcessFunction(
            router(BadRecordPolicy.FAIL).applyingTruncates(java.util.Set.of(ORDERS)))) {
      harness.processElement(truncate(ORDERS), 0);
      List<ChangeEvent> out = harness.extractOutputValues();
      assertThat(out)
          .isNotEmpty()
          .allSatisfy(
              e -> assertThat(e.operation()).isEqualTo(io.icebergcdc.cdc.Operation.TRUNCATE));
    }
    try (OneInputStreamOperatorTestHarness<KafkaRecord, ChangeEvent> harness =
        ProcessFunctionTestHarnesses.forProcessFunction(
            router(BadRecordPolicy.FAIL).applyingTruncates(java.util.Set.of()))) {
      assertThatThrownBy(() -> harness.processElement(truncate(ORDERS), 0))
          .isInstanceOf(MalformedChangeException.class)
          .hasMessageContaining(io.icebergcdc.cdc.Operation.TRUNCATE_NOT_APPLIED);
      assertThat(harness.extractOutputValues()).isEmpty();
    }
    for (boolean applies : List.of(true, false)) {
      try (OneInputStreamOperatorTestHarness<KafkaRecord, ChangeEvent> harness =
          ProcessFunctionTestHarnesses.forProcessFunction(
              router(BadRecordPolicy.FAIL)
                  .applyingTruncates(java.util.Set.of(ORDERS))
                  .takingNewTopics(new Tables(applies)))) {
        if (applies) {
          harness.processElement(truncate("shop.public.items"), 0);
          assertThat(harness.extractOutputValues())
              .isNotEmpty()
              .allSatisfy(e -> assertThat(e.table()).isEqualTo("cdc.items"));
        } else {
          assertThatThrownBy(() -> harness.processElement(truncate("shop.public.items"), 0))
              .isInstanceOf(MalformedChangeException.class)
              .hasMessageContaining(io.icebergcdc.cdc.Operation.TRUNCATE_NOT_APPLIED);
        }
      }
    }
  }

  @Test
  void aNewTopicIsReadIntoItsTableWithRowsCarryingItsSchemaId() throws Exception {
    try (OneInputStreamOperatorTestHarness<KafkaRecord, ChangeEvent> harness =
        ProcessFunctionTestHarnesses.forProcessFunction(
            router(BadRecordPolicy.FAIL).takingNewTopics(new Tables()))) {
      harness.processElement(record(ORDERS, 0), 0);
      harness.processElement(record("shop.public.items", 0), 0);
      harness.processElement(record("shop.public.items", 1), 0);
      List<ChangeEvent> out = harness.extractOutputValues();
      assertThat(out).hasSize(3);
      assertThat(out.get(0).table()).isEqualTo("cdc.orders");
      assertThat(out.get(0).rowSchemaId()).isEqualTo(ChangeEvent.JOB_SCHEMA);
      for (ChangeEvent event : out.subList(1, 3)) {
        assertThat(event.table()).isEqualTo("cdc.items");
        assertThat(event.rowSchemaId()).isEqualTo(3);
        assertThat(event.originPartition()).isEqualTo("shop.public.items/0");
      }
      assertThat(Tables.CALLS.get("shop.public.items")).hasValue(1);

      // A new topic named into a table another topic writes: refused, naming both.
      assertThatThrownBy(() -> harness.processElement(record("shop.public.orders2", 1), 0))
          .isInstanceOf(io.icebergcdc.cdc.RefusedSourceException.class)
          .hasMessageContaining("shop.public.orders2")
          .hasMessageContaining("cdc.orders")
          .hasMessageContaining("topic " + ORDERS + " writes");
      // And one that appeared before it.
      assertThatThrownBy(() -> harness.processElement(record("shop.public.items2", 1), 0))
          .isInstanceOf(io.icebergcdc.cdc.RefusedSourceException.class)
          .hasMessageContaining("topic shop.public.items writes");
    }
  }

  @Test
  void aNewUpsertTopicIsReadIntoItsTableWithRowsCarryingItsSchemaId() throws Exception {
    KafkaRouter router =
        new KafkaRouter(
                Map.of(ORDERS, SCHEMA),
                Map.of(ORDERS, "cdc.orders"),
                Map.of(ORDERS, "cdc.orders"),
                null,
                KafkaTopics.UPSERT_JSON,
                BadRecordPolicy.FAIL,
                Pattern.compile("shop\\.public\\..*"))
            .takingNewTopics(new Tables());
    long id = 7;
    String key = "{\"id\":" + id + "}";
    StringBuilder value = new StringBuilder("{");
    for (org.apache.iceberg.types.Types.NestedField column : SCHEMA.schema().columns()) {
      if (value.length() > 1) {
        value.append(',');
      }
      value.append('"').append(column.name()).append("\":");
      value.append(column.name().equals("id") ? String.valueOf(id) : "null");
    }
    value.append('}');
    try (OneInputStreamOperatorTestHarness<KafkaRecord, ChangeEvent> harness =
        ProcessFunctionTestHarnesses.forProcessFunction(router)) {
      harness.processElement(
          new KafkaRecord(
              "shop.public.items",
              1,
              4,
              key.getBytes(StandardCharsets.UTF_8),
              value.toString().getBytes(StandardCharsets.UTF_8)),
          0);
      // A null value deletes the key.
      harness.processElement(
          new KafkaRecord("shop.public.items", 1, 5, key.getBytes(StandardCharsets.UTF_8), null),
          0);
      List<ChangeEvent> out = harness.extractOutputValues();
      assertThat(out).hasSize(2);
      for (ChangeEvent event : out) {
        assertThat(event.table()).isEqualTo("cdc.items");
        assertThat(event.rowSchemaId()).isEqualTo(3);
        assertThat(event.originPartition()).isEqualTo("shop.public.items/1");
      }
      assertThat(out.get(0).operation().isUpsert()).isTrue();
      assertThat(
              out.get(0)
                  .after()
                  .getLong(SCHEMA.schema().columns().indexOf(SCHEMA.schema().findField("id"))))
          .isEqualTo(id);
      assertThat(out.get(1).operation().isUpsert()).isFalse();
      assertThat(Tables.CALLS.get("shop.public.items")).hasValue(1);
    }
  }

  @Test
  void aNewTopicWhoseTableCannotBeMadeReadyDeadLettersItsRecordsAskingOnce() throws Exception {
    try (OneInputStreamOperatorTestHarness<KafkaRecord, ChangeEvent> harness =
        ProcessFunctionTestHarnesses.forProcessFunction(
            router(BadRecordPolicy.DEAD_LETTER).takingNewTopics(new Tables()))) {
      harness.processElement(record("shop.public.bad", 1), 0);
      harness.processElement(record("shop.public.bad", 2), 0);
      assertThat(harness.extractOutputValues()).isEmpty();
      var letters = harness.getSideOutput(DebeziumJsonParseFunction.DEAD_LETTERS);
      assertThat(letters).hasSize(2);
      assertThat(letters.peek().getValue().reason()).contains("no schema to create the table from");
      assertThat(Tables.CALLS.get("shop.public.bad")).hasValue(1);
    }
  }

  @Test
  void aNewTopicWhoseTableWasNotReadyIsTriedAgainAfterTenSeconds() throws Exception {
    java.util.concurrent.atomic.AtomicLong nanos = new java.util.concurrent.atomic.AtomicLong();
    try (OneInputStreamOperatorTestHarness<KafkaRecord, ChangeEvent> harness =
        ProcessFunctionTestHarnesses.forProcessFunction(
            router(BadRecordPolicy.DEAD_LETTER)
                .takingNewTopics(new Tables())
                .useClock(nanos::get))) {
      harness.processElement(record("shop.public.late", 1), 0);
      nanos.addAndGet(KafkaRouter.UNREADY_RETRY_NANOS - 1);
      harness.processElement(record("shop.public.late", 2), 0);
      assertThat(Tables.CALLS.get("shop.public.late")).hasValue(1);
      assertThat(harness.extractOutputValues()).isEmpty();

      nanos.addAndGet(1);
      harness.processElement(record("shop.public.late", 3), 0);
      assertThat(Tables.CALLS.get("shop.public.late")).hasValue(2);
      assertThat(harness.extractOutputValues())
          .singleElement()
          .extracting(ChangeEvent::table)
          .isEqualTo("cdc.late");
      assertThat(harness.getSideOutput(DebeziumJsonParseFunction.DEAD_LETTERS)).hasSize(2);
    }
  }

  @Test
  void withoutNewTopicsANewTopicEndsTheJob() throws Exception {
    try (OneInputStreamOperatorTestHarness<KafkaRecord, ChangeEvent> harness =
        ProcessFunctionTestHarnesses.forProcessFunction(router(BadRecordPolicy.FAIL))) {
      assertThatThrownBy(() -> harness.processElement(record("shop.public.items", 0), 0))
          .isInstanceOf(NewSourceTableException.class);
    }
  }
}
