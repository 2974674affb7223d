package io.icebergcdc.cdc.debezium;

import static org.assertj.core.api.Assertions.assertThat;

import io.icebergcdc.cdc.ColumnMask;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import org.apache.flink.table.data.RowData;
import org.apache.iceberg.Schema;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;

class JsonRowConverterTest {

  private final JsonRowConverter converter =
      new JsonRowConverter(
          new Schema(
              Types.NestedField.required(1, "id", Types.LongType.get()),
              Types.NestedField.optional(2, "photo", Types.BinaryType.get())));

  @Test
  void readsBinaryValuesFromBase64() {
    RowData row = converter.convert(object("AQID"), Map.of(), true);
    assertThat(row.getBinary(1)).containsExactly(1, 2, 3);
  }

  @Test
  void leavesOutAndMarksTheUnavailableValuePlaceholderOfABinaryColumn() {
    String placeholder =
        Base64.getEncoder()
            .encodeToString(DebeziumJsonParser.UNAVAILABLE_VALUE.getBytes(StandardCharsets.UTF_8));
    RowData row = converter.convert(object(placeholder), Map.of(), true);
    assertThat(row.isNullAt(1)).isTrue();
    assertThat(converter.unavailableOfLastRow()).isEqualTo(ColumnMask.EMPTY.with(1));
    converter.convert(object("AQID"), Map.of(), true);
    assertThat(converter.unavailableOfLastRow().isEmpty()).isTrue();
  }

  @Test
  void aNumberBeyondAFloatsRangeIsRefusedRatherThanStoredAsInfinity() {
    JsonRowConverter floats =
        new JsonRowConverter(
            new Schema(
                Types.NestedField.required(1, "id", Types.LongType.get()),
                Types.NestedField.optional(2, "f", Types.FloatType.get())));
    assertThat(
            floats
                .convert(DebeziumJsonParser.readTree("{\"id\":1,\"f\":1.5}", "t"), Map.of(), true)
                .getFloat(1))
        .isEqualTo(1.5f);
    assertThat(
            floats
                .convert(
                    DebeziumJsonParser.readTree("{\"id\":1,\"f\":\"Infinity\"}", "t"),
                    Map.of(),
                    true)
                .getFloat(1))
        .isEqualTo(Float.POSITIVE_INFINITY);
    for (String beyond : List.of("1e39", "-1e39", "1e400")) {
      org.assertj.core.api.Assertions.assertThatThrownBy(
              () ->
                  floats.convert(
                      DebeziumJsonParser.readTree("{\"id\":1,\"f\":" + beyond + "}", "t"),
                      Map.of(),
                      true))
          .as(beyond)
          .hasMessageStartingWith("column 'f' of type float cannot hold ")
          .hasMessageContaining("beyond the range of a float");
    }
  }

  @Test
  void aNumberBeyondADoublesRangeIsRefusedWhereInfinityInTextIsTaken() {
    JsonRowConverter doubles =
        new JsonRowConverter(
            new Schema(
                Types.NestedField.required(1, "id", Types.LongType.get()),
                Types.NestedField.optional(2, "d", Types.DoubleType.get())));
    assertThat(
            doubles
                .convert(
                    DebeziumJsonParser.readTree("{\"id\":1,\"d\":\"-Infinity\"}", "t"),
                    Map.of(),
                    true)
                .getDouble(1))
        .isEqualTo(Double.NEGATIVE_INFINITY);
    org.assertj.core.api.Assertions.assertThatThrownBy(
            () ->
                doubles.convert(
                    DebeziumJsonParser.readTree("{\"id\":1,\"d\":1e400}", "t"), Map.of(), true))
        .hasMessageStartingWith("column 'd' of type double cannot hold ")
        .hasMessageContaining("beyond the range of a double");
  }

  private static com.fasterxml.jackson.databind.JsonNode object(String photo) {
    return DebeziumJsonParser.readTree("{\"id\":1,\"photo\":\"" + photo + "\"}", "test");
  }
}
