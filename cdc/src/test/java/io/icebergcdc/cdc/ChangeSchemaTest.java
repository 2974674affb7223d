package io.icebergcdc.cdc;

import static org.assertj.core.api.Assertions.assertThat;

import java.math.BigDecimal;
import java.util.List;
import java.util.Set;
import org.apache.flink.table.data.DecimalData;
import org.apache.flink.table.data.GenericRowData;
import org.apache.iceberg.Schema;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;

class ChangeSchemaTest {

  private static ChangeSchema keyedBy(Type keyType) {
    return new ChangeSchema(
        new Schema(
            List.of(
                Types.NestedField.required(1, "id", keyType),
                Types.NestedField.optional(2, "v", Types.StringType.get())),
            Set.of(1)));
  }

  @Test
  void aKeyKeepsItsEncodingWhenItsColumnIsWidened() {
    // A source column widened while a job runs (int to bigint, a decimal's precision) must keep
    // finding its keys in the dedup and key-index state, which hold the encoded keys.
    assertThat(keyedBy(Types.IntegerType.get()).keyOf(GenericRowData.of(42, null)))
        .isEqualTo(keyedBy(Types.LongType.get()).keyOf(GenericRowData.of(42L, null)));
    assertThat(
            keyedBy(Types.DecimalType.of(10, 2))
                .keyOf(GenericRowData.of(DecimalData.fromUnscaledLong(12345, 10, 2), null)))
        .isEqualTo(
            keyedBy(Types.DecimalType.of(30, 2))
                .keyOf(
                    GenericRowData.of(
                        DecimalData.fromBigDecimal(new BigDecimal("123.45"), 30, 2), null)));
    assertThat(keyedBy(Types.IntegerType.get()).keyOf(GenericRowData.of(42, null)))
        .isNotEqualTo(keyedBy(Types.IntegerType.get()).keyOf(GenericRowData.of(43, null)));
  }
}
