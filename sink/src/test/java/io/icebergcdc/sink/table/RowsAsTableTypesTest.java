package io.icebergcdc.sink.table;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigDecimal;
import java.time.LocalDateTime;
import org.apache.flink.table.data.DecimalData;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.TimestampData;
import org.apache.flink.table.runtime.typeutils.RowDataSerializer;
import org.apache.flink.table.types.logical.ArrayType;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.DecimalType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.TimestampType;
import org.apache.flink.table.types.logical.VarCharType;
import org.junit.jupiter.api.Test;

class RowsAsTableTypesTest {

  private static final RowType TABLE =
      columns(
          new BigIntType(false),
          new DecimalType(12, 4),
          new TimestampType(6),
          VarCharType.STRING_TYPE);

  private static final RowType DECLARED =
      columns(
          new BigIntType(false), new DecimalType(12, 2), new TimestampType(3), new VarCharType(20));

  /** The columns id, amount, at and note, of these types. */
  private static RowType columns(
      LogicalType id, LogicalType amount, LogicalType at, LogicalType note) {
    return RowType.of(
        new LogicalType[] {id, amount, at, note}, new String[] {"id", "amount", "at", "note"});
  }

  /** A row as the planner hands it on: in Flink's binary form of the declared types. */
  private static RowData declared(String amount, LocalDateTime at) {
    GenericRowData row = new GenericRowData(4);
    row.setField(0, 1L);
    row.setField(1, DecimalData.fromBigDecimal(new BigDecimal(amount), 12, 2));
    row.setField(2, TimestampData.fromLocalDateTime(at));
    row.setField(3, org.apache.flink.table.data.StringData.fromString("n"));
    return new RowDataSerializer(DECLARED).toBinaryRow(row).copy();
  }

  @Test
  void valuesOfAnotherPrecisionAreReadAsDeclaredAndGivenAsTheTablesTypes() throws Exception {
    LocalDateTime at = LocalDateTime.parse("2026-12-05T10:15:30.123");
    RowData row = declared("12.34", at);
    RowsAsTableTypes conversion = RowsAsTableTypes.of(DECLARED, TABLE, "db.t").orElseThrow();

    RowData converted = conversion.map(row);
    assertThat(converted.getDecimal(1, 12, 4).toBigDecimal()).isEqualByComparingTo("12.34");
    assertThat(converted.getTimestamp(2, 6).toLocalDateTime()).isEqualTo(at);
    assertThat(converted.getLong(0)).isEqualTo(1L);
    assertThat(converted.getString(3).toString()).isEqualTo("n");
    // Read as the table's types without it, the same row holds other values.
    assertThat(row.getDecimal(1, 12, 4).toBigDecimal()).isEqualByComparingTo("0.1234");
  }

  @Test
  void typesThatDifferInNullabilityOrLengthOnlyNeedNoConversion() {
    RowType nullable =
        columns(
            new BigIntType(true), new DecimalType(12, 4), new TimestampType(6), new VarCharType(9));
    assertThat(RowsAsTableTypes.of(nullable, TABLE, "db.t")).isEmpty();
  }

  @Test
  void aValueTheTablesTypeCannotHoldExactlyFailsNamingItsColumn() throws Exception {
    RowType wide =
        columns(
            new BigIntType(false),
            new DecimalType(20, 6),
            new TimestampType(6),
            VarCharType.STRING_TYPE);
    RowsAsTableTypes conversion = RowsAsTableTypes.of(wide, TABLE, "db.t").orElseThrow();
    GenericRowData row = new GenericRowData(4);
    row.setField(0, 1L);
    row.setField(1, DecimalData.fromBigDecimal(new BigDecimal("0.123456"), 20, 6));
    assertThatThrownBy(() -> conversion.map(row))
        .hasMessageContaining("column 'amount'")
        .hasMessageContaining("0.123456")
        .hasMessageContaining("db.t");
    row.setField(1, DecimalData.fromBigDecimal(new BigDecimal("123456789.12"), 20, 6));
    assertThatThrownBy(() -> conversion.map(row)).hasMessageContaining("123456789.120000");
    row.setField(1, DecimalData.fromBigDecimal(new BigDecimal("12345678.12"), 20, 6));
    assertThat(conversion.map(row).getDecimal(1, 12, 4).toBigDecimal())
        .isEqualByComparingTo("12345678.12");
  }

  @Test
  void nestedTypesThatDifferInNullabilityOnlyAreTaken() {
    // Iceberg's map keys are NOT NULL; a DDL's MAP<STRING, STRING> does not say so.
    RowType table =
        RowType.of(
            new LogicalType[] {
              new BigIntType(false),
              new org.apache.flink.table.types.logical.MapType(
                  new VarCharType(false, VarCharType.MAX_LENGTH), VarCharType.STRING_TYPE),
              new ArrayType(new BigIntType(false))
            },
            new String[] {"id", "attrs", "ids"});
    RowType declared =
        RowType.of(
            new LogicalType[] {
              new BigIntType(false),
              new org.apache.flink.table.types.logical.MapType(
                  VarCharType.STRING_TYPE, VarCharType.STRING_TYPE),
              new ArrayType(new BigIntType(true))
            },
            new String[] {"id", "attrs", "ids"});
    assertThat(RowsAsTableTypes.of(declared, table, "db.t")).isEmpty();
  }

  @Test
  void nanosecondsTheTableCannotHoldFailTheWrite() throws Exception {
    RowType nanos =
        columns(
            new BigIntType(false),
            new DecimalType(12, 4),
            new TimestampType(9),
            VarCharType.STRING_TYPE);
    RowsAsTableTypes conversion = RowsAsTableTypes.of(nanos, TABLE, "db.t").orElseThrow();
    GenericRowData row = new GenericRowData(4);
    row.setField(0, 1L);
    row.setField(
        2, TimestampData.fromLocalDateTime(LocalDateTime.parse("2026-12-05T10:15:30.123456789")));
    assertThatThrownBy(() -> conversion.map(row)).hasMessageContaining("column 'at'");
    // A table that keeps nanoseconds takes them.
    RowType nanosTable =
        columns(
            new BigIntType(false),
            new DecimalType(14, 4),
            new TimestampType(9),
            VarCharType.STRING_TYPE);
    assertThat(
            RowsAsTableTypes.of(nanos, nanosTable, "db.t")
                .orElseThrow()
                .map(row)
                .getTimestamp(2, 9)
                .toLocalDateTime())
        .isEqualTo(LocalDateTime.parse("2026-12-05T10:15:30.123456789"));
    row.setField(
        2, TimestampData.fromLocalDateTime(LocalDateTime.parse("2026-12-05T10:15:30.123456")));
    assertThat(conversion.map(row).getTimestamp(2, 6).toLocalDateTime())
        .isEqualTo(LocalDateTime.parse("2026-12-05T10:15:30.123456"));
  }

  @Test
  void otherDifferencesAreRefusedNamingTheColumn() {
    RowType nested =
        columns(
            new BigIntType(false),
            new DecimalType(12, 4),
            new TimestampType(6),
            new ArrayType(new DecimalType(5, 1)));
    assertThatThrownBy(() -> RowsAsTableTypes.of(nested, TABLE, "db.t"))
        .hasMessageContaining("column 'note'")
        .hasMessageContaining("db.t");
    RowType renamed =
        RowType.of(
            new LogicalType[] {
              new BigIntType(false),
              new DecimalType(12, 4),
              new TimestampType(6),
              VarCharType.STRING_TYPE
            },
            new String[] {"id", "amount", "at", "remark"});
    assertThatThrownBy(() -> RowsAsTableTypes.of(renamed, TABLE, "db.t"))
        .hasMessageContaining("remark");
  }

  /**
   * A DDL's TINYINT, SMALLINT and CHAR become Iceberg's int and string when the table is created
   * from it; its rows are written as those (they were refused, the table left created and empty).
   */
  @Test
  void smallIntegersAndCharsAreWrittenAsTheTablesIntAndString() throws Exception {
    RowType declared =
        RowType.of(
            new LogicalType[] {
              new org.apache.flink.table.types.logical.TinyIntType(),
              new org.apache.flink.table.types.logical.SmallIntType(),
              new org.apache.flink.table.types.logical.CharType(3)
            },
            new String[] {"a", "b", "c"});
    RowType table =
        RowType.of(
            new LogicalType[] {
              new org.apache.flink.table.types.logical.IntType(),
              new org.apache.flink.table.types.logical.IntType(),
              VarCharType.STRING_TYPE
            },
            new String[] {"a", "b", "c"});
    GenericRowData row = new GenericRowData(3);
    row.setField(0, (byte) -7);
    row.setField(1, (short) 30_000);
    row.setField(2, org.apache.flink.table.data.StringData.fromString("abc"));
    RowData binary = new RowDataSerializer(declared).toBinaryRow(row).copy();

    RowData converted = RowsAsTableTypes.of(declared, table, "db.t").orElseThrow().map(binary);
    assertThat(converted.getInt(0)).isEqualTo(-7);
    assertThat(converted.getInt(1)).isEqualTo(30_000);
    assertThat(converted.getString(2).toString()).isEqualTo("abc");
    // Not the other way.
    assertThatThrownBy(() -> RowsAsTableTypes.of(table, declared, "db.t"))
        .hasMessageContaining("column 'a'");
  }
}
