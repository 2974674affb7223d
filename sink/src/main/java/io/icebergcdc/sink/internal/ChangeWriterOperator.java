package io.icebergcdc.sink.internal;

import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.ChangeSchema;
import io.icebergcdc.cdc.ChangeStats;
import io.icebergcdc.commit.ChangeCommittable;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Map;
import org.apache.flink.metrics.Counter;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.BoundedOneInput;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.table.data.RowData;
import org.apache.flink.types.RowKind;
import org.apache.iceberg.Table;
import org.apache.iceberg.flink.TableLoader;
import org.apache.iceberg.flink.sink.RowDataTaskWriterFactory;
import org.apache.iceberg.io.TaskWriter;
import org.apache.iceberg.io.WriteResult;

/**
 * Writes the net changes of its keys as Parquet data files and equality delete files through
 * Iceberg's writers, and hands the files of each checkpoint to the committer.
 *
 * <p><b>Place in the topology:</b> after the dedup, which it is chained to under {@code
 * PRIMARY_KEY} distribution; before the committer. It receives every change of a key it owns.
 *
 * <p><b>Writing:</b> an upsert deletes the key (an equality delete on the primary key) and writes
 * the new row; a delete deletes the key. The table's properties decide file size, Parquet codec and
 * level, row-group, page and dictionary sizes, and its partition spec splits the files.
 *
 * <p><b>State:</b> none. The open files are completed in {@link #prepareSnapshotPreBarrier}, before
 * the barrier, and sent downstream, so a checkpoint never holds unfinished files; files written
 * after the last completed checkpoint are orphaned by a failure, never committed.
 *
 * <p><b>Threading:</b> Flink's task thread only.
 */
public final class ChangeWriterOperator extends AbstractStreamOperator<ChangeCommittable>
    implements OneInputStreamOperator<ChangeEvent, ChangeCommittable>, BoundedOneInput {

  private static final long serialVersionUID = 1L;

  private final TableLoader tableLoader;
  private final ChangeSchema schema;
  private final java.util.HashMap<String, String> writeProperties;

  private transient Table table;
  private transient RowDataTaskWriterFactory writerFactory;
  private transient TaskWriter<RowData> writer;
  private transient Counter dataFilesWritten;
  private transient Counter deleteFilesWritten;

  /**
   * @param writeProperties this write's own write properties, over the table's
   */
  public ChangeWriterOperator(
      TableLoader tableLoader, ChangeSchema schema, Map<String, String> writeProperties) {
    this.tableLoader = tableLoader;
    this.schema = schema;
    this.writeProperties = new java.util.HashMap<>(writeProperties);
  }

  @Override
  public void open() throws Exception {
    super.open();
    tableLoader.open();
    table = tableLoader.loadTable();
    writerFactory =
        TaskWriters.factory(
            table,
            schema.rowType(),
            writeProperties,
            new ArrayList<>(table.schema().identifierFieldIds()),
            true,
            getRuntimeContext());
    writer = writerFactory.create();
    dataFilesWritten = getMetricGroup().counter("dataFilesWritten");
    deleteFilesWritten = getMetricGroup().counter("deleteFilesWritten");
  }

  @Override
  public void processElement(StreamRecord<ChangeEvent> element) throws Exception {
    ChangeEvent event = element.getValue();
    RowData row;
    if (event.operation().isUpsert()) {
      row = event.after();
      row.setRowKind(RowKind.INSERT);
    } else {
      row = event.before();
      row.setRowKind(RowKind.DELETE);
    }
    writer.write(row);
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
    ChangeCommittable committable = TaskWriters.committable(result, table, ChangeStats.EMPTY);
    if (committable != null) {
      dataFilesWritten.inc(result.dataFiles().length);
      deleteFilesWritten.inc(result.deleteFiles().length);
      output.collect(new StreamRecord<>(committable));
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
