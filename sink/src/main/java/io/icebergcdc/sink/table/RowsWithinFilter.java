package io.icebergcdc.sink.table;

import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.types.logical.RowType;
import org.apache.iceberg.Schema;
import org.apache.iceberg.expressions.Evaluator;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.flink.FlinkSchemaUtil;
import org.apache.iceberg.flink.RowDataWrapper;

/**
 * Passes the rows of an overwrite by filter on, failing the write at the first row the filter does
 * not match: such a row would land outside what the overwrite replaces.
 */
final class RowsWithinFilter implements MapFunction<RowData, RowData> {

  private static final long serialVersionUID = 1L;

  private final Schema schema;
  private final Expression filter;
  private final String filterText;
  private final String tableName;
  private transient Evaluator evaluator;
  private transient RowDataWrapper wrapper;
  private transient RowType rowType;

  RowsWithinFilter(Schema schema, Expression filter, String filterText, String tableName) {
    this.schema = schema;
    this.filter = filter;
    this.filterText = filterText;
    this.tableName = tableName;
  }

  @Override
  public RowData map(RowData row) {
    if (evaluator == null) {
      evaluator = new Evaluator(schema.asStruct(), filter, false);
      rowType = FlinkSchemaUtil.convert(schema);
      wrapper = new RowDataWrapper(rowType, schema.asStruct());
    }
    if (!evaluator.eval(wrapper.wrap(row))) {
      throw new IllegalArgumentException(
          "the overwrite of table "
              + tableName
              + " by option 'overwrite.filter' = '"
              + filterText
              + "' got the row ("
              + describe(row)
              + "), which the filter does not match: an overwrite by filter takes only rows of"
              + " what it replaces; nothing was committed");
    }
    return row;
  }

  private String describe(RowData row) {
    StringBuilder text = new StringBuilder();
    for (int i = 0; i < rowType.getFieldCount(); i++) {
      Object value = RowData.createFieldGetter(rowType.getTypeAt(i), i).getFieldOrNull(row);
      text.append(i == 0 ? "" : ", ").append(rowType.getFieldNames().get(i)).append('=');
      text.append(value);
    }
    return text.toString();
  }
}
