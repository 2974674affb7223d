package io.icebergcdc.sink.table;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.apache.flink.table.api.DataTypes;
import org.apache.flink.table.catalog.Column;
import org.apache.flink.table.catalog.ResolvedSchema;
import org.junit.jupiter.api.Test;

/** Option {@code sequence.field} checked against the table's columns before anything runs. */
class SequenceFieldTest {

  private static final ResolvedSchema SCHEMA =
      ResolvedSchema.of(
          Column.physical("id", DataTypes.BIGINT().notNull()),
          Column.physical("version", DataTypes.INT()),
          Column.physical("amount", DataTypes.DECIMAL(20, 0)),
          Column.physical("day", DataTypes.DATE()),
          Column.physical("updated_at", DataTypes.TIMESTAMP(6)),
          Column.physical("changed_at", DataTypes.TIMESTAMP_LTZ(3)),
          Column.physical("label", DataTypes.STRING()),
          Column.physical("score", DataTypes.DOUBLE()),
          Column.physical("flag", DataTypes.BOOLEAN()));

  @Test
  void integerDecimalDateAndTimestampColumnsOrder() {
    for (String field :
        new String[] {"id", "version", "amount", "day", "updated_at", "changed_at"}) {
      assertThatCode(() -> SequenceField.check("db.t", SCHEMA, field))
          .as(field)
          .doesNotThrowAnyException();
    }
    assertThatCode(() -> SequenceField.check("db.t", SCHEMA, null)).doesNotThrowAnyException();
  }

  @Test
  void aColumnThatCannotOrderIsRefusedNamingItsType() {
    assertThatThrownBy(() -> SequenceField.check("db.t", SCHEMA, "label"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "table db.t: option 'sequence.field' names 'label', a column of type STRING, which"
                + " cannot order changes: it must be an integer, decimal, date or timestamp column");
    assertThatThrownBy(() -> SequenceField.check("db.t", SCHEMA, "score"))
        .hasMessageContaining("'score', a column of type DOUBLE");
    assertThatThrownBy(() -> SequenceField.check("db.t", SCHEMA, "flag"))
        .hasMessageContaining("'flag', a column of type BOOLEAN");
  }

  @Test
  void aColumnTheTableLacksIsRefusedNamingTheColumnsItHas() {
    assertThatThrownBy(() -> SequenceField.check("db.t", SCHEMA, "versoin"))
        .hasMessageStartingWith(
            "table db.t: option 'sequence.field' names 'versoin', which the table does not have"
                + " (its columns: id, version, amount");
  }
}
