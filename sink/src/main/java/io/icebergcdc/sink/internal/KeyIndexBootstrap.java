package io.icebergcdc.sink.internal;

import io.icebergcdc.cdc.ChangeSchema;
import io.icebergcdc.cdc.RowKey;
import java.util.function.UnaryOperator;
import org.apache.flink.api.common.TaskInfo;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.table.data.GenericRowData;
import org.apache.iceberg.MetadataColumns;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.types.TypeUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Loads the key index of a table the writer meets without state: the data file and position of the
 * live row of every key its subtask owns, read from the table with its deletes applied (the key
 * columns and Iceberg's file path and row position only).
 */
final class KeyIndexBootstrap<K> {

  private static final Logger LOG = LoggerFactory.getLogger(KeyIndexBootstrap.class);

  /** Takes the location of a key's live row. */
  interface Loaded<K> {
    void row(K key, String file, long position) throws Exception;
  }

  private final ChangeSchema schema;
  private final ChangeKeySelector<K> keySelector;
  private final TaskInfo task;
  private final java.util.function.Function<Object, Object> stateKey;

  /**
   * @param stateKey the key of the operator's keyed state for a key of this table ({@link
   *     io.icebergcdc.dedup.TableScope#stateKey}), which decides the subtask that owns it
   */
  KeyIndexBootstrap(
      ChangeSchema schema,
      ChangeKeySelector<K> keySelector,
      TaskInfo task,
      java.util.function.Function<Object, Object> stateKey) {
    this.schema = schema;
    this.keySelector = keySelector;
    this.task = task;
    this.stateKey = stateKey;
  }

  /**
   * Hands {@code loaded} every live row of the keys this subtask owns, its file in the form {@code
   * stored} gives it.
   */
  void load(Table table, UnaryOperator<String> stored, Loaded<K> loaded) throws Exception {
    Schema tableSchema = table.schema();
    Schema projection =
        TypeUtil.join(
            TypeUtil.select(tableSchema, tableSchema.identifierFieldIds()),
            new Schema(MetadataColumns.FILE_PATH, MetadataColumns.ROW_POSITION));
    int[] keyPositions = schema.keyPositions();
    long start = System.nanoTime();
    long keys = 0;
    try (CloseableIterable<Record> rows = IcebergGenerics.read(table).project(projection).build()) {
      for (Record row : rows) {
        // The key's positions are the rows' schema's, which may differ from the table's (a column
        // the table dropped that the job's rows still have): its key fields are found by id.
        GenericRowData keyRow = KeyRows.fromRecord(schema.schema(), tableSchema, keyPositions, row);
        RowKey rowKey = schema.keyOf(keyRow);
        K key = keySelector.keyOf(rowKey, keyRow);
        if (!owns(stateKey.apply(key), task)) {
          continue;
        }
        loaded.row(
            key,
            stored.apply(row.getField(MetadataColumns.FILE_PATH.name()).toString()),
            (Long) row.getField(MetadataColumns.ROW_POSITION.name()));
        keys++;
      }
    }
    LOG.info(
        "Loaded the key index of table {} for subtask {}: {} keys in {} ms",
        table.name(),
        task.getIndexOfThisSubtask(),
        keys,
        (System.nanoTime() - start) / 1_000_000L);
  }

  /** Whether {@code key} belongs to the key groups of {@code task}'s subtask. */
  static boolean owns(Object key, TaskInfo task) {
    return KeyGroupRangeAssignment.assignKeyToParallelOperator(
            key, task.getMaxNumberOfParallelSubtasks(), task.getNumberOfParallelSubtasks())
        == task.getIndexOfThisSubtask();
  }
}
