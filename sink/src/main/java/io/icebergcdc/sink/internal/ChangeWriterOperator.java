package io.icebergcdc.sink.internal;

import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.ChangeSchema;
import java.util.Map;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.table.data.RowData;
import org.apache.flink.types.RowKind;
import org.apache.iceberg.flink.TableLoader;

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
 * <p>Files, state and threading: {@link TaskWriterOperator}.
 */
public final class ChangeWriterOperator extends TaskWriterOperator<ChangeEvent> {

  private static final long serialVersionUID = 1L;

  private final ChangeSchema schema;

  /** The schema of the rows written since the last checkpoint ({@link ChangeEvent#rowSchemaId}). */
  private transient int rowSchemaId;

  /**
   * @param schema the schema the job was built with for the table
   * @param writeProperties this write's own write properties, over the table's
   */
  public ChangeWriterOperator(
      TableLoader tableLoader, ChangeSchema schema, Map<String, String> writeProperties) {
    super(tableLoader, schema.rowType(), schema.schema(), writeProperties, true);
    this.schema = schema;
  }

  @Override
  public void open() throws Exception {
    // In the job's schema, which the table may have left since the job was built (its changes
    // then show a later one).
    super.open();
    rowSchemaId = ChangeEvent.JOB_SCHEMA;
  }

  @Override
  public void processElement(StreamRecord<ChangeEvent> element) throws Exception {
    int id = element.getValue().rowSchemaId();
    if (id == schema.schema().schemaId()) {
      // The job's schema by its number: its rows are the job's.
      id = ChangeEvent.JOB_SCHEMA;
    }
    if (id != rowSchemaId) {
      // The table's schema changed while the job runs: the dedup gives the net changes of a
      // checkpoint, all of which come before the writer completes its files, the same schema.
      ChangeSchema rows = id == ChangeEvent.JOB_SCHEMA ? schema : new ChangeSchema(tableSchema(id));
      writeRowsOf(rows.schema(), rows.rowType());
      rowSchemaId = id;
    }
    super.processElement(element);
  }

  @Override
  RowData rowOf(ChangeEvent event) {
    RowData row;
    if (event.operation().isUpsert()) {
      row = event.after();
      row.setRowKind(RowKind.INSERT);
    } else {
      row = event.before();
      row.setRowKind(RowKind.DELETE);
    }
    return row;
  }
}
