package io.icebergcdc.sink.internal;

import io.icebergcdc.cdc.ChangeStats;
import io.icebergcdc.commit.ChangeCommittable;
import io.icebergcdc.commit.ContentFileCodec;
import io.icebergcdc.sink.WriteProperties;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.functions.RuntimeContext;
import org.apache.flink.table.types.logical.RowType;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.flink.sink.RowDataTaskWriterFactory;
import org.apache.iceberg.io.WriteResult;
import org.apache.iceberg.util.PropertyUtil;

/** What the writers built on Iceberg's task writers share: their factory and their output. */
final class TaskWriters {

  private TaskWriters() {}

  /**
   * A factory of Parquet task writers for one subtask, with the table's write properties under the
   * write's own.
   *
   * @param equalityFieldIds the key of equality deletes; empty to write data files only
   */
  static RowDataTaskWriterFactory factory(
      Table table,
      RowType rowType,
      Map<String, String> writeProperties,
      List<Integer> equalityFieldIds,
      boolean upsert,
      RuntimeContext context) {
    Map<String, String> properties =
        WriteProperties.effective(table.name(), table.properties(), writeProperties);
    RowDataTaskWriterFactory factory =
        new RowDataTaskWriterFactory(
            table,
            rowType,
            PropertyUtil.propertyAsLong(
                properties,
                TableProperties.WRITE_TARGET_FILE_SIZE_BYTES,
                TableProperties.WRITE_TARGET_FILE_SIZE_BYTES_DEFAULT),
            FileFormat.PARQUET,
            properties,
            equalityFieldIds,
            upsert);
    factory.initialize(
        context.getTaskInfo().getIndexOfThisSubtask(), context.getTaskInfo().getAttemptNumber());
    return factory;
  }

  /** The files a task writer completed, for the committer; null if it wrote none. */
  static ChangeCommittable committable(WriteResult result, Table table, ChangeStats stats) {
    if (result.dataFiles().length == 0 && result.deleteFiles().length == 0) {
      return null;
    }
    List<String> referenced = new ArrayList<>();
    for (CharSequence path : result.referencedDataFiles()) {
      referenced.add(path.toString());
    }
    return new ChangeCommittable(
        ContentFileCodec.encodeAll(Arrays.asList(result.dataFiles()), table.specs()),
        ContentFileCodec.encodeAll(Arrays.asList(result.deleteFiles()), table.specs()),
        referenced,
        stats);
  }
}
