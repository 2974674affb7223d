package io.icebergcdc.sink.internal;

import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.ChangeSchema;
import io.icebergcdc.cdc.ColumnMask;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.table.data.RowData;
import org.apache.iceberg.Schema;
import org.apache.iceberg.flink.data.FlinkParquetReaders;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.parquet.Parquet;

/**
 * Fills the columns that an update lacks ({@link ChangeEvent#missingColumns()}: values the source
 * did not send, such as PostgreSQL's unchanged TOASTed values) from the key's current row, which
 * the key index locates: from the rows of recent files held in memory at once, otherwise from the
 * data file, read once per checkpoint for all the updates that need a row of it.
 *
 * <p>Not thread-safe: the writer's task thread only.
 */
final class MissingColumnsFill {

  private ChangeSchema schema;
  private RecentRows recentRows;

  /** Updates waiting for a row of a data file, by the file's location. */
  private final Map<String, List<Deferred>> deferred = new LinkedHashMap<>();

  MissingColumnsFill(ChangeSchema schema, RecentRows recentRows) {
    this.schema = schema;
    this.recentRows = recentRows;
  }

  /**
   * Fills the changes of {@code newSchema} from now on, from the rows of {@code rows}; the changes
   * waiting for a file to be read are given its rows by {@code fit}.
   */
  void useSchema(
      ChangeSchema newSchema, RecentRows rows, java.util.function.UnaryOperator<ChangeEvent> fit) {
    this.schema = newSchema;
    this.recentRows = rows;
    for (List<Deferred> waiting : deferred.values()) {
      waiting.replaceAll(d -> new Deferred(d.key(), fit.apply(d.change()), d.position()));
    }
  }

  /**
   * {@code change} with its missing columns taken from the row at {@code position} of the file the
   * index names {@code stored}, if that row is held in memory; otherwise null.
   */
  ChangeEvent fromMemory(ChangeEvent change, String stored, long position) {
    RowData current = recentRows.row(stored, position);
    return current == null ? null : schema.fillMissing(change, current, ColumnMask.EMPTY);
  }

  /** Keeps {@code change} of {@code key} until its row at {@code position} of a file is read. */
  void defer(Object key, ChangeEvent change, String location, long position) {
    deferred
        .computeIfAbsent(location, f -> new ArrayList<>())
        .add(new Deferred(key, change, position));
  }

  boolean isEmpty() {
    return deferred.isEmpty();
  }

  /**
   * Reads each file that deferred updates need a row of, once and up to the last row needed, and
   * hands every deferred update, filled, to {@code filled}; then forgets them.
   */
  void fillDeferred(FileIO io, Schema rowSchema, Filled filled) throws Exception {
    for (Map.Entry<String, List<Deferred>> file : deferred.entrySet()) {
      List<Deferred> waiting = file.getValue();
      waiting.sort(Comparator.comparingLong(Deferred::position));
      int next = 0;
      long position = 0;
      try (CloseableIterable<RowData> rows =
          Parquet.read(io.newInputFile(file.getKey()))
              .project(rowSchema)
              .createReaderFunc(
                  fileSchema -> FlinkParquetReaders.buildReader(rowSchema, fileSchema))
              .build()) {
        for (RowData row : rows) {
          while (next < waiting.size() && waiting.get(next).position == position) {
            Deferred update = waiting.get(next++);
            filled.accept(update.key, schema.fillMissing(update.change, row, ColumnMask.EMPTY));
          }
          if (next == waiting.size()) {
            break;
          }
          position++;
        }
      }
      if (next < waiting.size()) {
        throw new IOException(
            "data file "
                + file.getKey()
                + " has no row at position "
                + waiting.get(next).position
                + ", where the key index has the current row of key "
                + schema.describeKey(waiting.get(next).change.keyRow()));
      }
    }
    deferred.clear();
  }

  /** Forgets the deferred updates, as when the writer closes without a checkpoint. */
  void clear() {
    deferred.clear();
  }

  /** Takes a deferred update once its missing columns are filled. */
  interface Filled {
    void accept(Object key, ChangeEvent change) throws Exception;
  }

  private record Deferred(Object key, ChangeEvent change, long position) {}
}
