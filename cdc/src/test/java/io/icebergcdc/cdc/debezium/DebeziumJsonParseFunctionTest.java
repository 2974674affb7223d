package io.icebergcdc.cdc.debezium;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.icebergcdc.cdc.BadRecordPolicy;
import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.ChangeSchema;
import io.icebergcdc.cdc.MalformedChangeException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.apache.flink.api.java.tuple.Tuple4;
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

  private static Tuple4<Long, Long, Integer, byte[]> line(long number, String json) {
    byte[] bytes = json.getBytes(StandardCharsets.UTF_8);
    return Tuple4.of(number, 0L, bytes.length, bytes);
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
    try (OneInputStreamOperatorTestHarness<Tuple4<Long, Long, Integer, byte[]>, ChangeEvent>
        harness = ProcessFunctionTestHarnesses.forProcessFunction(parse)) {
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
    try (OneInputStreamOperatorTestHarness<Tuple4<Long, Long, Integer, byte[]>, ChangeEvent>
        harness = ProcessFunctionTestHarnesses.forProcessFunction(parse)) {
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
    try (OneInputStreamOperatorTestHarness<Tuple4<Long, Long, Integer, byte[]>, ChangeEvent>
        harness = ProcessFunctionTestHarnesses.forProcessFunction(parse)) {
      harness.processElement(line(1L, "  \r"), 0);
      assertThatThrownBy(() -> harness.processElement(line(2L, "{\"op\": c}"), 0))
          .isInstanceOf(MalformedChangeException.class)
          .hasMessageStartingWith("changes.jsonl:2, record '{\"op\": c}': not valid JSON");
    }
  }

  @Test
  void aLineWithoutItsBytesIsReadFromItsFileAndNamedByItsNumber() throws Exception {
    String file = "{\"op\": c}\n" + event("items", 1, 10) + "\n";
    byte[] bytes = file.getBytes(StandardCharsets.UTF_8);
    DebeziumJsonParseFunction parse =
        new DebeziumJsonParseFunction(
            SCHEMA,
            "db.items",
            null,
            "changes.jsonl",
            BadRecordPolicy.DEAD_LETTER,
            null,
            new InMemoryLines(bytes));
    try (OneInputStreamOperatorTestHarness<Tuple4<Long, Long, Integer, byte[]>, ChangeEvent>
        harness = ProcessFunctionTestHarnesses.forProcessFunction(parse)) {
      int second = file.indexOf('\n') + 1;
      harness.processElement(
          Tuple4.of(2L, (long) second, file.length() - second - 1, new byte[0]), 0);
      harness.processElement(Tuple4.of(1L, 0L, second - 1, new byte[0]), 0);
      assertThat(harness.extractOutputValues())
          .singleElement()
          .satisfies(change -> assertThat(change.after().getLong(0)).isEqualTo(1L));
      assertThat(harness.getSideOutput(DebeziumJsonParseFunction.DEAD_LETTERS))
          .singleElement()
          .satisfies(
              letter -> {
                assertThat(letter.getValue().origin()).isEqualTo("changes.jsonl:1");
                assertThat(letter.getValue().record()).isEqualTo("{\"op\": c}");
              });
    }
  }

  /** Lines read from bytes in memory, as from their file. */
  private record InMemoryLines(byte[] file) implements DebeziumJsonParseFunction.LineBytes {
    @Override
    public byte[] read(long offset, int length) {
      return java.util.Arrays.copyOfRange(file, (int) offset, (int) offset + length);
    }

    @Override
    public void close() {}
  }
}
