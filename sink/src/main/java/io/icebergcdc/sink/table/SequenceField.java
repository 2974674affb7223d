package io.icebergcdc.sink.table;

import java.util.EnumSet;
import java.util.Optional;
import java.util.Set;
import org.apache.flink.table.catalog.Column;
import org.apache.flink.table.catalog.ResolvedSchema;
import org.apache.flink.table.types.logical.LogicalTypeRoot;

/**
 * The check of option {@code sequence.field} against a table's columns, made where a statement is
 * planned and where the catalog creates or alters a table, so that a column that cannot order
 * changes is named before anything is written or created rather than at the first row.
 */
final class SequenceField {

  /** The types whose values {@link RowDataToChangeEvents} orders: whole numbers and times. */
  private static final Set<LogicalTypeRoot> ORDERING =
      EnumSet.of(
          LogicalTypeRoot.TINYINT,
          LogicalTypeRoot.SMALLINT,
          LogicalTypeRoot.INTEGER,
          LogicalTypeRoot.BIGINT,
          LogicalTypeRoot.DECIMAL,
          LogicalTypeRoot.DATE,
          LogicalTypeRoot.TIMESTAMP_WITHOUT_TIME_ZONE,
          LogicalTypeRoot.TIMESTAMP_WITH_LOCAL_TIME_ZONE);

  private SequenceField() {}

  /**
   * Fails, naming {@code table}, the option and the column, unless {@code field} (where not null)
   * is a column of {@code schema} whose type orders.
   */
  static void check(String table, ResolvedSchema schema, String field) {
    if (field == null) {
      return;
    }
    String names =
        "table "
            + table
            + ": option '"
            + IcebergCdcTableFactory.SEQUENCE_FIELD.key()
            + "' names '"
            + field
            + "', ";
    Optional<Column> column = schema.getColumn(field);
    if (column.isEmpty()) {
      throw new IllegalArgumentException(
          names
              + "which the table does not have (its columns: "
              + String.join(", ", schema.getColumnNames())
              + ")");
    }
    LogicalTypeRoot type = column.get().getDataType().getLogicalType().getTypeRoot();
    if (!ORDERING.contains(type)) {
      throw new IllegalArgumentException(
          names
              + "a column of type "
              + column.get().getDataType()
              + ", which cannot order changes: it must be an integer, decimal, date or timestamp"
              + " column");
    }
  }
}
