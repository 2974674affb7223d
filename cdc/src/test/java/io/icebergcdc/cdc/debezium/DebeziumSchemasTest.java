package io.icebergcdc.cdc.debezium;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.apache.iceberg.Schema;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;

class DebeziumSchemasTest {

  private static Schema convert(String fields, List<String> key) {
    String envelope =
        "{\"type\":\"struct\",\"fields\":[{\"type\":\"struct\",\"field\":\"after\",\"fields\":["
            + fields
            + "]}]}";
    return DebeziumSchemas.toIcebergSchema(DebeziumJsonParser.readTree(envelope, "t"), key);
  }

  @Test
  void mapsConnectAndDebeziumTypes() {
    Schema schema =
        convert(
            "{\"type\":\"int32\",\"optional\":true,\"field\":\"k\"},"
                + "{\"type\":\"int16\",\"field\":\"s\"},"
                + "{\"type\":\"int64\",\"name\":\"io.debezium.time.MicroTimestamp\",\"field\":\"ts\"},"
                + "{\"type\":\"int64\",\"name\":\"io.debezium.time.MicroTime\",\"field\":\"t\"},"
                + "{\"type\":\"string\",\"name\":\"io.debezium.time.ZonedTimestamp\",\"field\":\"z\"},"
                + "{\"type\":\"bytes\",\"name\":\"org.apache.kafka.connect.data.Decimal\","
                + "\"parameters\":{\"scale\":\"3\"},\"field\":\"d\"},"
                + "{\"type\":\"string\",\"name\":\"io.debezium.data.Json\",\"field\":\"j\"},"
                + "{\"type\":\"float64\",\"field\":\"f\"},{\"type\":\"bytes\",\"field\":\"b\"}",
            List.of("k"));

    assertThat(schema.identifierFieldNames()).containsExactly("k");
    assertThat(schema.findField("k").isRequired()).isTrue();
    assertThat(schema.findType("s")).isEqualTo(Types.IntegerType.get());
    assertThat(schema.findType("ts")).isEqualTo(Types.TimestampType.withoutZone());
    assertThat(schema.findType("t")).isEqualTo(Types.TimeType.get());
    assertThat(schema.findType("z")).isEqualTo(Types.TimestampType.withZone());
    assertThat(schema.findType("d")).isEqualTo(Types.DecimalType.of(38, 3));
    assertThat(schema.findType("j")).isEqualTo(Types.StringType.get());
    assertThat(schema.findType("f")).isEqualTo(Types.DoubleType.get());
    assertThat(schema.findType("b")).isEqualTo(Types.BinaryType.get());
  }

  /**
   * A required column the source now lets be null (NOT NULL dropped) is a change to follow, not a
   * null refused at the first row that holds one; a key column stays required.
   */
  @Test
  void aRequiredColumnTheSourceLetsBeNullIsAChange() {
    Schema table =
        new Schema(
            List.of(
                Types.NestedField.required(1, "k", Types.IntegerType.get()),
                Types.NestedField.required(2, "c", Types.StringType.get()),
                Types.NestedField.required(3, "d", Types.StringType.get())),
            java.util.Set.of(1));
    String row =
        "{\"type\":\"struct\",\"fields\":[{\"type\":\"int32\",\"optional\":true,\"field\":\"k\"},"
            + "{\"type\":\"string\",\"optional\":true,\"field\":\"c\"},"
            + "{\"type\":\"string\",\"optional\":false,\"field\":\"d\"}]}";
    assertThat(DebeziumSchemas.changes(DebeziumJsonParser.readTree(row, "t"), table))
        .containsExactly("column 'c' allows nulls");
  }

  @Test
  void rejectsWhatHasNoMappingNamingTheColumn() {
    assertThatThrownBy(
            () ->
                convert(
                    "{\"type\":\"int32\",\"field\":\"k\"},{\"type\":\"struct\","
                        + "\"name\":\"io.debezium.data.VariableScaleDecimal\",\"field\":\"v\"}",
                    List.of("k")))
        .hasMessageContaining("'v'")
        .hasMessageContaining("decimal.handling.mode");
    assertThatThrownBy(() -> convert("{\"type\":\"array\",\"field\":\"tags\"}", List.of("tags")))
        .hasMessageContaining("'tags'");
    assertThatThrownBy(() -> convert("{\"type\":\"int32\",\"field\":\"k\"}", List.of("id")))
        .hasMessageContaining("[id]");
  }
}
