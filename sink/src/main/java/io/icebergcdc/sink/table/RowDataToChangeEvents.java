package io.icebergcdc.sink.table;

import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.ChangeSchema;
import io.icebergcdc.cdc.MalformedChangeException;
import io.icebergcdc.cdc.Operation;
import io.icebergcdc.cdc.SourceSequence;
import java.math.BigDecimal;
import org.apache.flink.api.common.functions.FlatMapFunction;
import org.apache.flink.table.data.DecimalData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.TimestampData;
import org.apache.flink.util.Collector;

/**
 * Turns the rows of a Flink SQL changelog into change events: an insert or the row after an update
 * upserts its key, a delete deletes it, and the row before an update is dropped (the row after it
 * replaces it). The sequence is the value of the sequence field, where one is named, or else the
 * order of arrival, which the dedup numbers per key; a bounded input has no order of arrival, so
 * there its changes are unordered.
 */
final class RowDataToChangeEvents implements FlatMapFunction<RowData, ChangeEvent> {

  private static final long serialVersionUID = 1L;

  private final ChangeSchema schema;
  private final String tableName;
  private final int sequencePosition;
  private final String sequenceField;
  private final boolean bounded;
  private final boolean insertsOnly;
  private transient RowData.FieldGetter sequenceGetter;

  /**
   * @param sequencePosition the position of the sequence field in the rows, or -1 for none
   * @param bounded whether the input is bounded (batch execution), where arrival has no order: the
   *     changes of a key without a sequence are then unordered, and two different ones fail
   * @param insertsOnly whether only inserts are allowed (an overwrite)
   */
  RowDataToChangeEvents(
      ChangeSchema schema,
      String tableName,
      String sequenceField,
      int sequencePosition,
      boolean bounded,
      boolean insertsOnly) {
    this.schema = schema;
    this.tableName = tableName;
    this.sequenceField = sequenceField;
    this.sequencePosition = sequencePosition;
    this.bounded = bounded;
    this.insertsOnly = insertsOnly;
  }

  @Override
  public void flatMap(RowData row, Collector<ChangeEvent> out) {
    Operation operation;
    switch (row.getRowKind()) {
      case INSERT:
        operation = Operation.INSERT;
        break;
      case UPDATE_AFTER:
        operation = Operation.UPDATE;
        break;
      case DELETE:
        operation = Operation.DELETE;
        break;
      default:
        return; // UPDATE_BEFORE: the row after the update replaces it
    }
    if (insertsOnly && operation != Operation.INSERT) {
      throw new MalformedChangeException(
          "table "
              + tableName
              + ", key "
              + schema.describeKey(row)
              + ": an overwrite takes rows to insert, not a "
              + row.getRowKind());
    }
    SourceSequence sequence =
        sequencePosition >= 0
            ? sequence(row)
            : bounded ? SourceSequence.unordered() : SourceSequence.arrival();
    if (operation == Operation.DELETE) {
      sequence = sequence.ofDeletedRow();
    }
    out.collect(
        new ChangeEvent(
            tableName,
            operation,
            schema.keyOf(row),
            operation.isUpsert() ? null : row,
            operation.isUpsert() ? row : null,
            sequence,
            0L));
  }

  /** A row whose sequence field cannot order it: "is {@code what}", naming the table and key. */
  private MalformedChangeException badSequence(RowData row, String what) {
    return new MalformedChangeException(
        "table "
            + tableName
            + ", key "
            + schema.describeKey(row)
            + ": sequence field '"
            + sequenceField
            + "' is "
            + what);
  }

  private SourceSequence sequence(RowData row) {
    if (sequenceGetter == null) {
      sequenceGetter =
          RowData.createFieldGetter(schema.rowType().getTypeAt(sequencePosition), sequencePosition);
    }
    Object value = sequenceGetter.getFieldOrNull(row);
    if (value == null) {
      throw badSequence(row, "null");
    }
    if (value instanceof Number number && !(value instanceof Float || value instanceof Double)) {
      return SourceSequence.column(number.longValue());
    }
    if (value instanceof DecimalData decimal) {
      BigDecimal exact = decimal.toBigDecimal();
      try {
        return SourceSequence.column(exact.longValueExact());
      } catch (ArithmeticException notWhole) {
        throw badSequence(
            row, exact.toPlainString() + ", which is no whole number of the range of a bigint");
      }
    }
    if (value instanceof TimestampData timestamp) {
      return SourceSequence.column(
          Math.addExact(
              Math.multiplyExact(timestamp.getMillisecond(), 1000L),
              timestamp.getNanoOfMillisecond() / 1000));
    }
    throw new IllegalArgumentException(
        "sequence field '" + sequenceField + "' must be an integer or a timestamp column");
  }
}
