package io.icebergcdc.sink.internal;

import io.icebergcdc.cdc.ChangeStats;
import io.icebergcdc.commit.ChangeCommittable;
import io.icebergcdc.commit.ContentFileCodec;
import io.icebergcdc.commit.JobClassLoaderRelease;
import io.icebergcdc.commit.ParquetWriterProperties;
import io.icebergcdc.sink.WriteProperties;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.apache.flink.metrics.Counter;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.BoundedOneInput;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.types.logical.RowType;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.flink.TableLoader;
import org.apache.iceberg.flink.sink.RowDataTaskWriterFactory;
import org.apache.iceberg.io.TaskWriter;
import org.apache.iceberg.io.WriteResult;
import org.apache.iceberg.util.PropertyUtil;

/**
 * A writer on Iceberg's task writers: it writes Parquet files split by the table's partition spec,
 * with the table's write properties under the write's own, and hands the files of each checkpoint
 * to the committer.
 *
 * <p><b>State:</b> none. The open files are completed in {@link #prepareSnapshotPreBarrier}, before
 * the barrier (or at the end of the input), and sent downstream, so a checkpoint never holds
 * unfinished files; files written after the last completed checkpoint are never committed (removed
 * when the writer closes, orphaned when the task crashes).
 *
 * <p><b>Threading:</b> Flink's task thread only.
 *
 * @param <IN> what it receives; {@link #rowOf} makes the row to write of it
 */
abstract class TaskWriterOperator<IN> extends AbstractStreamOperator<ChangeCommittable>
    implements OneInputStreamOperator<IN, ChangeCommittable>, BoundedOneInput {

  private static final long serialVersionUID = 1L;

  private final TableLoader tableLoader;
  private final RowType rowType;

  /** The schema of the rows, one of the table's; null for the table's current schema. */
  private final Schema schema;

  private final java.util.HashMap<String, String> writeProperties;

  private transient Table table;
  private transient RowDataTaskWriterFactory writerFactory;
  private transient TaskWriter<RowData> writer;
  private transient Counter dataFilesWritten;

  /**
   * @param rowType the type of the rows, which are in the order of the table's columns
   * @param schema the schema of the rows, one of the table's; null for the table's current schema
   *     when the writer opens
   * @param writeProperties this write's own write properties, over the table's
   */
  TaskWriterOperator(
      TableLoader tableLoader,
      RowType rowType,
      Schema schema,
      Map<String, String> writeProperties) {
    this.tableLoader = tableLoader;
    this.rowType = rowType;
    this.schema = schema;
    this.writeProperties = new java.util.HashMap<>(writeProperties);
  }

  /** The row to write for a record, an insert. */
  abstract RowData rowOf(IN record);

  /** What the rows written since the last call count in the commit's summary. */
  ChangeStats takeStats() {
    return ChangeStats.EMPTY;
  }

  Table table() {
    return table;
  }

  @Override
  public void open() throws Exception {
    super.open();
    JobClassLoaderRelease.registerFor(getRuntimeContext());
    tableLoader.open();
    table =
        io.icebergcdc.commit.ReplacedTableException.unlessDropped(
            null, () -> WriterTable.load(tableLoader));
    writerFactory = factory(schema == null ? table.schema() : schema, rowType);
    writer = writerFactory.create();
    dataFilesWritten = getMetricGroup().counter("dataFilesWritten");
  }

  /** A factory of writers of {@code schema}'s rows, of type {@code rowType}, in {@link #table}. */
  private RowDataTaskWriterFactory factory(Schema schema, RowType rowType) {
    Map<String, String> properties =
        WriteProperties.effective(table.name(), table.properties(), writeProperties);
    RowDataTaskWriterFactory factory =
        new RowDataTaskWriterFactory(
            this::table,
            rowType,
            PropertyUtil.propertyAsLong(
                properties,
                TableProperties.WRITE_TARGET_FILE_SIZE_BYTES,
                TableProperties.WRITE_TARGET_FILE_SIZE_BYTES_DEFAULT),
            FileFormat.PARQUET,
            ParquetWriterProperties.of(properties),
            List.of(),
            false,
            schema,
            table.spec());
    factory.initialize(
        getRuntimeContext().getTaskInfo().getIndexOfThisSubtask(),
        getRuntimeContext().getTaskInfo().getAttemptNumber());
    return factory;
  }

  @Override
  public void processElement(StreamRecord<IN> element) throws Exception {
    writer.write(rowOf(element.getValue()));
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
    if (result.dataFiles().length == 0 && result.deleteFiles().length == 0) {
      return;
    }
    List<String> referenced = new ArrayList<>();
    for (CharSequence path : result.referencedDataFiles()) {
      referenced.add(path.toString());
    }
    dataFilesWritten.inc(result.dataFiles().length);
    output.collect(
        new StreamRecord<>(
            new ChangeCommittable(
                ContentFileCodec.encodeAll(Arrays.asList(result.dataFiles()), table.specs()),
                ContentFileCodec.encodeAll(Arrays.asList(result.deleteFiles()), table.specs()),
                referenced,
                takeStats())));
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
