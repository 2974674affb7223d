package io.icebergcdc.sink.internal;

import io.icebergcdc.cdc.ChangeStats;
import java.util.Map;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.types.RowKind;
import org.apache.iceberg.flink.TableLoader;

/**
 * Writes rows to insert as Parquet data files, split by the table's partition spec, and hands the
 * files of each checkpoint (or of the whole input, without checkpoints) to the committer: the
 * writer of tables without a primary key and of overwrites.
 *
 * <p>A row that is not an insert fails the job, naming the table: this writer has no key to apply
 * an update or delete by. Files, state and threading: {@link TaskWriterOperator}.
 */
public final class AppendWriterOperator extends TaskWriterOperator<RowData> {

  private static final long serialVersionUID = 1L;

  private final boolean countsRows;
  private transient long rows;

  /**
   * @param rowType the type of the rows, which are in the order of the table's columns
   * @param writeProperties this write's own write properties, over the table's
   * @param countsRows whether the rows it writes are counted as inserted in the commit's summary;
   *     not after the dedup, which counts them itself
   */
  public AppendWriterOperator(
      TableLoader tableLoader,
      RowType rowType,
      Map<String, String> writeProperties,
      boolean countsRows) {
    super(tableLoader, rowType, null, writeProperties);
    this.countsRows = countsRows;
  }

  @Override
  RowData rowOf(RowData row) {
    if (row.getRowKind() != RowKind.INSERT) {
      throw new IllegalArgumentException(
          "table "
              + table().name()
              + " is written without a primary key, so it takes inserts only, not a "
              + row.getRowKind()
              + " row");
    }
    rows++;
    return row;
  }

  @Override
  ChangeStats takeStats() {
    ChangeStats stats = countsRows ? new ChangeStats(rows, 0, 0, 0, 0, 0, null) : ChangeStats.EMPTY;
    rows = 0;
    return stats;
  }
}
