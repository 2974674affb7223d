package io.icebergcdc.cdc.debezium;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.icebergcdc.cdc.BadRecordPolicy;
import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.ChangeSchema;
import io.icebergcdc.cdc.MalformedChangeException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.apache.flink.api.java.tuple.Tuple2;
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

  private static Tuple2<Long, byte[]> line(long number, String json) {
    return Tuple2.of(number, json.getBytes(StandardCharsets.UTF_8));
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
    try (OneInputStreamOperatorTestHarness<Tuple2<Long, byte[]>, ChangeEvent> harness =
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
            SCHEMA, "db.items", null, "changes.jsonl", BadRecordPolicy.FAIL, "public.items");
    try (OneInputStreamOperatorTestHarness<Tuple2<Long, byte[]>, ChangeEvent> harness =
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
    try (OneInputStreamOperatorTestHarness<Tuple2<Long, byte[]>, ChangeEvent> harness =
        ProcessFunctionTestHarnesses.forProcessFunction(parse)) {
      harness.processElement(line(1L, "  \r"), 0);
      assertThatThrownBy(() -> harness.processElement(line(2L, "{\"op\": c}"), 0))
          .isInstanceOf(MalformedChangeException.class)
          .hasMessageStartingWith("changes.jsonl:2, record '{\"op\": c}': not valid JSON");
    }
  }
}
