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
    assertThat(row(Types.FloatType.get(), "1.5").getFloat(1)).isEqualTo(1.5f);
    assertThat(row(Types.FloatType.get(), "\"Infinity\"").getFloat(1))
        .isEqualTo(Float.POSITIVE_INFINITY);
    for (String beyond : List.of("1e39", "-1e39", "1e400")) {
      org.assertj.core.api.Assertions.assertThatThrownBy(() -> row(Types.FloatType.get(), beyond))
          .as(beyond)
          .hasMessageStartingWith("column 'v' of type float cannot hold ")
          .hasMessageContaining("beyond the range of a float");
    }
  }

  @Test
  void aNumberBeyondADoublesRangeIsRefusedWhereInfinityInTextIsTaken() {
    assertThat(row(Types.DoubleType.get(), "\"-Infinity\"").getDouble(1))
        .isEqualTo(Double.NEGATIVE_INFINITY);
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> row(Types.DoubleType.get(), "1e400"))
        .hasMessageStartingWith("column 'v' of type double cannot hold ")
        .hasMessageContaining("beyond the range of a double");
  }

  /**
   * The row of {@code {"id":1,"v":<value>}} in a table whose column {@code v} is of {@code type}.
   */
  private static RowData row(org.apache.iceberg.types.Type type, String value) {
    JsonRowConverter converter =
        new JsonRowConverter(
            new Schema(
                Types.NestedField.required(1, "id", Types.LongType.get()),
                Types.NestedField.optional(2, "v", type)));
    return converter.convert(
        DebeziumJsonParser.readTree("{\"id\":1,\"v\":" + value + "}", "t"), Map.of(), true);
  }

  private static com.fasterxml.jackson.databind.JsonNode object(String photo) {
    return DebeziumJsonParser.readTree("{\"id\":1,\"photo\":\"" + photo + "\"}", "test");
  }
}
