package io.icebergcdc.sink.table;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.ChangeSchema;
import io.icebergcdc.cdc.MalformedChangeException;
import io.icebergcdc.cdc.Operation;
import io.icebergcdc.cdc.SourceSequence;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.apache.flink.api.common.functions.util.ListCollector;
import org.apache.flink.table.data.DecimalData;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.types.RowKind;
import org.apache.iceberg.Schema;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;

class RowDataToChangeEventsTest {

  private static final ChangeSchema SCHEMA =
      new ChangeSchema(
          new Schema(
              List.of(
                  Types.NestedField.required(1, "id", Types.LongType.get()),
                  Types.NestedField.optional(2, "name", Types.StringType.get()),
                  Types.NestedField.optional(3, "seq", Types.LongType.get())),
              Set.of(1)));

  private static List<ChangeEvent> convert(RowDataToChangeEvents function, GenericRowData... rows) {
    List<ChangeEvent> out = new ArrayList<>();
    for (GenericRowData row : rows) {
      function.flatMap(row, new ListCollector<>(out));
    }
    return out;
  }

  private static GenericRowData row(RowKind kind, long id, String name, long seq) {
    return GenericRowData.ofKind(kind, id, StringData.fromString(name), seq);
  }

  @Test
  void ordersBySequenceFieldElseByArrivalAndUnboundedOnly() {
    List<ChangeEvent> bySequence =
        convert(
            new RowDataToChangeEvents(SCHEMA, "db.t", "seq", 2, true, false),
            row(RowKind.INSERT, 1, "a", 7));
    assertThat(bySequence.get(0).sequence()).isEqualTo(SourceSequence.column(7));
    // A DELETE carries the deleted row's value: it follows the change that wrote that row.
    assertThat(
            convert(
                    new RowDataToChangeEvents(SCHEMA, "db.t", "seq", 2, false, false),
                    row(RowKind.DELETE, 1, "a", 7))
                .get(0)
                .sequence())
        .isEqualTo(SourceSequence.column(7).ofDeletedRow());

    List<ChangeEvent> streaming =
        convert(
            new RowDataToChangeEvents(SCHEMA, "db.t", null, -1, false, false),
            row(RowKind.INSERT, 1, "a", 7),
            row(RowKind.UPDATE_BEFORE, 1, "a", 7),
            row(RowKind.UPDATE_AFTER, 1, "b", 8),
            row(RowKind.DELETE, 1, "b", 8));
    assertThat(streaming)
        .extracting(ChangeEvent::operation)
        .containsExactly(Operation.INSERT, Operation.UPDATE, Operation.DELETE);
    assertThat(streaming).allMatch(e -> e.sequence().isUnnumberedArrival());

    List<ChangeEvent> bounded =
        convert(
            new RowDataToChangeEvents(SCHEMA, "db.t", null, -1, true, false),
            row(RowKind.INSERT, 1, "a", 7));
    assertThat(bounded.get(0).sequence()).isEqualTo(SourceSequence.unordered());
  }

  @Test
  void aDecimalSequenceValueThatIsNoWholeNumberIsABadRecordNamingTheKey() {
    ChangeSchema decimal =
        new ChangeSchema(
            new Schema(
                List.of(
                    Types.NestedField.required(1, "id", Types.LongType.get()),
                    Types.NestedField.optional(2, "seq", Types.DecimalType.of(10, 2))),
                Set.of(1)));
    RowDataToChangeEvents function =
        new RowDataToChangeEvents(decimal, "db.t", "seq", 1, true, false);
    assertThat(
            convert(
                    function,
                    GenericRowData.ofKind(
                        RowKind.INSERT,
                        1L,
                        DecimalData.fromBigDecimal(new BigDecimal("12.00"), 10, 2)))
                .get(0)
                .sequence())
        .isEqualTo(SourceSequence.column(12));
    assertThatThrownBy(
            () ->
                convert(
                    function,
                    GenericRowData.ofKind(
                        RowKind.INSERT,
                        2L,
                        DecimalData.fromBigDecimal(new BigDecimal("12.50"), 10, 2))))
        .isInstanceOf(MalformedChangeException.class)
        .hasMessage(
            "table db.t, key id=2: sequence field 'seq' is 12.50, which is no whole number of the"
                + " range of a bigint");
  }

  @Test
  void anOverwriteRefusesAnythingButInsertsNamingTheKey() {
    RowDataToChangeEvents overwrite =
        new RowDataToChangeEvents(SCHEMA, "db.t", null, -1, true, true);
    assertThat(convert(overwrite, row(RowKind.INSERT, 1, "a", 7))).hasSize(1);
    assertThatThrownBy(() -> convert(overwrite, row(RowKind.DELETE, 2, "a", 7)))
        .hasMessageContaining("table db.t, key id=2: an overwrite takes rows to insert");
  }
}
