package io.icebergcdc.sink.table;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigDecimal;
import org.apache.iceberg.Schema;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.expressions.Evaluator;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.util.DateTimeUtil;
import org.junit.jupiter.api.Test;

class SqlFilterTest {

  private static final Schema SCHEMA =
      new Schema(
          Types.NestedField.required(1, "id", Types.LongType.get()),
          Types.NestedField.optional(2, "event_ts", Types.TimestampType.withoutZone()),
          Types.NestedField.optional(3, "day", Types.DateType.get()),
          Types.NestedField.optional(4, "status", Types.StringType.get()),
          Types.NestedField.optional(5, "amount", Types.DecimalType.of(10, 2)),
          Types.NestedField.optional(6, "n", Types.IntegerType.get()),
          Types.NestedField.optional(7, "ok", Types.BooleanType.get()));

  private static Record row(long id, String ts, String day, String status, int n) {
    Record r = GenericRecord.create(SCHEMA);
    r.setField("id", id);
    r.setField("event_ts", ts == null ? null : java.time.LocalDateTime.parse(ts));
    r.setField("day", day == null ? null : java.time.LocalDate.parse(day));
    r.setField("status", status);
    r.setField("amount", new BigDecimal("12.50"));
    r.setField("n", n);
    r.setField("ok", true);
    return r;
  }

  private static boolean matches(String filter, Record row) {
    Expression expression = SqlFilter.parse(filter, SCHEMA);
    return new Evaluator(SCHEMA.asStruct(), expression).eval(new InternalRecord(row));
  }

  @Test
  void theGuidesTimestampFilterComparesWithTheColumnsType() {
    String filter = "event_ts >= TIMESTAMP '2026-01-06 00:00:00'";
    assertThat(matches(filter, row(1, "2026-01-06T00:00:00", null, "a", 1))).isTrue();
    assertThat(matches(filter, row(1, "2026-01-05T23:59:59.999999", null, "a", 1))).isFalse();
  }

  @Test
  void comparisonsCombineWithAndOrNotAndParentheses() {
    Record r = row(7, null, "2026-01-06", "it's", 3);
    assertThat(matches("day = DATE '2026-01-06' AND status = 'it''s'", r)).isTrue();
    assertThat(matches("NOT (id < 5 OR n <> 3)", r)).isTrue();
    assertThat(matches("id IN (1, 7) and `status` IS NOT NULL", r)).isTrue();
    assertThat(matches("n NOT IN (3)", r)).isFalse();
    assertThat(matches("id BETWEEN 5 AND 9 AND amount = 12.5", r)).isTrue();
    assertThat(matches("10 > id AND event_ts IS NULL AND ok = TRUE", r)).isTrue();
    assertThat(matches("n >= -1 AND day < '2026-02-01'", r)).isTrue();
  }

  @Test
  void aComparisonWithANullIsNeitherTrueNorFalseAsInSql() {
    Record r = row(7, null, null, null, 3);
    assertThat(matches("day < DATE '2026-01-05'", r)).isFalse();
    assertThat(matches("NOT (day >= DATE '2026-01-05')", r)).isFalse();
    assertThat(matches("status <> 'x'", r)).isFalse();
    assertThat(matches("status NOT IN ('x', 'y')", r)).isFalse();
    assertThat(matches("NOT (status = 'x' AND id = 7)", r)).isFalse();
    assertThat(matches("day NOT BETWEEN DATE '2026-01-01' AND DATE '2026-01-31'", r)).isFalse();
    // Where the unknown part cannot decide, or a null is asked for, the row matches.
    assertThat(matches("NOT (status = 'x' AND id = 8)", r)).isTrue();
    assertThat(matches("status IS NULL OR status <> 'x'", r)).isTrue();
    assertThat(matches("NOT (status IS NOT NULL)", r)).isTrue();
    assertThat(matches("status <> 'x' OR id = 7", r)).isTrue();
  }

  @Test
  void whatItCannotUseIsNamed() {
    assertThatThrownBy(() -> SqlFilter.parse("colour = 'red'", SCHEMA))
        .hasMessageContaining("option 'overwrite.filter' = 'colour = 'red''")
        .hasMessageContaining("no column 'colour'");
    assertThatThrownBy(() -> SqlFilter.parse("n = 'three'", SCHEMA))
        .hasMessageContaining("cannot be compared with column 'n' (int)");
    assertThatThrownBy(() -> SqlFilter.parse("n = 3000000000", SCHEMA))
        .hasMessageContaining("does not fit column 'n'");
    assertThatThrownBy(() -> SqlFilter.parse("id = 1 AND", SCHEMA))
        .hasMessageContaining("a column is expected at its end");
    assertThatThrownBy(() -> SqlFilter.parse("upper(status) = 'A'", SCHEMA))
        .hasMessageContaining("no column 'upper'");
    assertThatThrownBy(() -> SqlFilter.parse("status = 'open", SCHEMA))
        .hasMessageContaining("not closed");
    assertThatThrownBy(() -> SqlFilter.parse("", SCHEMA)).hasMessageContaining("empty");
    assertThatThrownBy(() -> SqlFilter.parse("id = 1 id", SCHEMA))
        .hasMessageContaining("'id' is not expected there");
  }

  /** A generic record with Iceberg's internal values (micros, days), as the evaluator reads. */
  private record InternalRecord(Record record) implements org.apache.iceberg.StructLike {
    @Override
    public int size() {
      return record.size();
    }

    @Override
    public <T> T get(int pos, Class<T> javaClass) {
      Object value = record.get(pos);
      if (value instanceof java.time.LocalDateTime time) {
        value = DateTimeUtil.microsFromTimestamp(time);
      } else if (value instanceof java.time.LocalDate date) {
        value = DateTimeUtil.daysFromDate(date);
      }
      return javaClass.cast(value);
    }

    @Override
    public <T> void set(int pos, T value) {
      throw new UnsupportedOperationException();
    }
  }
}
