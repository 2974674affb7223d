package io.icebergcdc.cdc.debezium;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.icebergcdc.cdc.BadRecordPolicy;
import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.ChangeSchema;
import io.icebergcdc.cdc.MalformedChangeException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.apache.flink.api.java.tuple.Tuple3;
import org.apache.flink.streaming.util.OneInputStreamOperatorTestHarness;
import org.apache.flink.streaming.util.ProcessFunctionTestHarnesses;
import org.apache.iceberg.Schema;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;

class DebeziumJsonParseFunctionTest {

  private static final ChangeSchema SCHEMA =
      new ChangeSchema(
          new Schema(
              List.of(
                  Types.NestedField.required(1, "id", Types.LongType.get()),
                  Types.NestedField.optional(2, "name", Types.StringType.get())),
              java.util.Set.of(1)));

  private static Tuple3<Long, Long, byte[]> line(long number, String json) {
    return Tuple3.of(0L, number, json.getBytes(StandardCharsets.UTF_8));
  }

  private static String event(String table, long id, long lsn) {
    return "{\"before\":null,\"after\":{\"id\":"
        + id
        + ",\"name\":\"n\"},\"source\":{\"schema\":\"public\",\"table\":\""
        + table
        + "\",\"lsn\":"
        + lsn
        + "},\"op\":\"c\"}";
  }

  @Test
  void aChangeOfAnotherSourceTableIsRefusedNamingBothTables() throws Exception {
    DebeziumJsonParseFunction parse =
        new DebeziumJsonParseFunction(
            SCHEMA, "db.items", null, "changes.jsonl", BadRecordPolicy.FAIL);
    try (OneInputStreamOperatorTestHarness<Tuple3<Long, Long, byte[]>, ChangeEvent> harness =
        ProcessFunctionTestHarnesses.forProcessFunction(parse)) {
      harness.processElement(line(1L, event("items", 1, 10)), 0);
      harness.processElement(line(2L, event("items", 2, 11)), 0);
      assertThat(harness.extractOutputValues()).hasSize(2);

      assertThatThrownBy(() -> harness.processElement(line(3L, event("orders", 3, 12)), 0))
          .isInstanceOf(MalformedChangeException.class)
          .hasMessageContaining("changes.jsonl:3")
          .hasMessageContaining("public.orders")
          .hasMessageContaining("public.items")
          .hasMessageContaining("db.items");
    }
  }

  @Test
  void aParserThatSeesOnlyAnotherTableRefusesItAgainstTheFilesFirstEvent() throws Exception {
    // Parsers run in parallel: one that is handed none of the first table's lines still refuses.
    DebeziumJsonParseFunction parse =
        new DebeziumJsonParseFunction(
            SCHEMA, "db.items", null, "changes.jsonl", BadRecordPolicy.FAIL, "public.items", null);
    try (OneInputStreamOperatorTestHarness<Tuple3<Long, Long, byte[]>, ChangeEvent> harness =
        ProcessFunctionTestHarnesses.forProcessFunction(parse)) {
      assertThatThrownBy(() -> harness.processElement(line(2L, event("orders", 3, 12)), 0))
          .isInstanceOf(MalformedChangeException.class)
          .hasMessageContaining("changes.jsonl:2, key id=3, record '{")
          .hasMessageContaining("public.orders");
    }
  }

  @Test
  void aLineThatIsNotJsonIsNamedWithItsText() throws Exception {
    DebeziumJsonParseFunction parse =
        new DebeziumJsonParseFunction(
            SCHEMA, "db.items", null, "changes.jsonl", BadRecordPolicy.FAIL);
    try (OneInputStreamOperatorTestHarness<Tuple3<Long, Long, byte[]>, ChangeEvent> harness =
        ProcessFunctionTestHarnesses.forProcessFunction(parse)) {
      harness.processElement(line(1L, "  \r"), 0);
      assertThatThrownBy(() -> harness.processElement(line(2L, "{\"op\": c}"), 0))
          .isInstanceOf(MalformedChangeException.class)
          .hasMessageStartingWith("changes.jsonl:2, record '{\"op\": c}': not valid JSON");
    }
  }

  @Test
  void aBadLineOfALaterSplitIsNamedByItsNumberInTheFile() throws Exception {
    DebeziumJsonParseFunction parse =
        new DebeziumJsonParseFunction(
            SCHEMA,
            "db.items",
            null,
            "changes.jsonl",
            BadRecordPolicy.DEAD_LETTER,
            null,
            (splitStart, number) -> splitStart / 100 + number);
    try (OneInputStreamOperatorTestHarness<Tuple3<Long, Long, byte[]>, ChangeEvent> harness =
        ProcessFunctionTestHarnesses.forProcessFunction(parse)) {
      harness.processElement(
          Tuple3.of(5000L, 7L, "{\"op\": c}".getBytes(StandardCharsets.UTF_8)), 0);
      assertThat(harness.getSideOutput(DebeziumJsonParseFunction.DEAD_LETTERS))
          .singleElement()
          .satisfies(
              letter -> {
                assertThat(letter.getValue().origin()).isEqualTo("changes.jsonl:57");
                assertThat(letter.getValue().reason())
                    .startsWith("changes.jsonl:57, record '{\"op\": c}': not valid JSON")
                    .doesNotContain("from byte");
              });
    }
  }

  @Test
  void aLineWhoseNumberCannotBeCountedIsNamedByItsSplit() throws Exception {
    DebeziumJsonParseFunction parse =
        new DebeziumJsonParseFunction(
            SCHEMA,
            "db.items",
            null,
            "changes.jsonl",
            BadRecordPolicy.FAIL,
            null,
            (splitStart, number) -> {
              throw new java.io.IOException("gone");
            });
    try (OneInputStreamOperatorTestHarness<Tuple3<Long, Long, byte[]>, ChangeEvent> harness =
        ProcessFunctionTestHarnesses.forProcessFunction(parse)) {
      assertThatThrownBy(
              () ->
                  harness.processElement(
                      Tuple3.of(5000L, 7L, "{\"op\": c}".getBytes(StandardCharsets.UTF_8)), 0))
          .isInstanceOf(MalformedChangeException.class)
          .hasMessageStartingWith("changes.jsonl: line 7 from byte 5000, record '{\"op\": c}'");
    }
  }
}
