package io.icebergcdc.sink.internal;

import io.icebergcdc.cdc.ChangeStats;
import io.icebergcdc.commit.ChangeCommittable;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.BoundedOneInput;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.types.RowKind;
import org.apache.iceberg.Table;
import org.apache.iceberg.flink.TableLoader;
import org.apache.iceberg.flink.sink.RowDataTaskWriterFactory;
import org.apache.iceberg.io.TaskWriter;
import org.apache.iceberg.io.WriteResult;

/**
 * Writes rows to insert as Parquet data files, split by the table's partition spec, and hands the
 * files of each checkpoint (or of the whole input, without checkpoints) to the committer: the
 * writer of tables without a primary key and of overwrites.
 *
 * <p><b>State:</b> none; open files are completed before each checkpoint barrier, as in {@link
 * ChangeWriterOperator}. A row that is not an insert fails the job, naming the table: this writer
 * has no key to apply an update or delete by.
 *
 * <p><b>Threading:</b> Flink's task thread only.
 */
public final class AppendWriterOperator extends AbstractStreamOperator<ChangeCommittable>
    implements OneInputStreamOperator<RowData, ChangeCommittable>, BoundedOneInput {

  private static final long serialVersionUID = 1L;

  private final TableLoader tableLoader;
  private final RowType rowType;
  private final java.util.HashMap<String, String> writeProperties;
  private final boolean countsRows;

  private transient Table table;
  private transient RowDataTaskWriterFactory writerFactory;
  private transient TaskWriter<RowData> writer;
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
    this.tableLoader = tableLoader;
    this.rowType = rowType;
    this.writeProperties = new java.util.HashMap<>(writeProperties);
    this.countsRows = countsRows;
  }

  @Override
  public void open() throws Exception {
    super.open();
    tableLoader.open();
    table = tableLoader.loadTable();
    writerFactory =
        TaskWriters.factory(table, rowType, writeProperties, List.of(), false, getRuntimeContext());
    writer = writerFactory.create();
  }

  @Override
  public void processElement(StreamRecord<RowData> element) throws Exception {
    RowData row = element.getValue();
    if (row.getRowKind() != RowKind.INSERT) {
      throw new IllegalArgumentException(
          "table "
              + table.name()
              + " is written without a primary key, so it takes inserts only, not a "
              + row.getRowKind()
              + " row");
    }
    writer.write(row);
    rows++;
  }

  @Override
  public void prepareSnapshotPreBarrier(long checkpointId) throws Exception {
    super.prepareSnapshotPreBarrier(checkpointId);
    flush();
  }

  @Override
  public void endInput() throws Exception {
    flush();
  }

  private void flush() throws IOException {
    WriteResult result = writer.complete();
    writer = writerFactory.create();
    ChangeCommittable committable =
        TaskWriters.committable(
            result,
            table,
            countsRows ? new ChangeStats(rows, 0, 0, 0, 0, 0, null) : ChangeStats.EMPTY);
    if (committable != null) {
      output.collect(new StreamRecord<>(committable));
      rows = 0;
    }
  }

  @Override
  public void close() throws Exception {
    try {
      if (writer != null) {
        // Files not yet handed to the committer belong to no checkpoint: remove them.
        writer.abort();
        writer = null;
      }
    } finally {
      tableLoader.close();
      super.close();
    }
  }
}
