package io.icebergcdc.sink.internal;

import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.ChangeSchema;
import io.icebergcdc.cdc.TableKey;
import io.icebergcdc.commit.ChangeCommittable;
import io.icebergcdc.commit.JobClassLoaderRelease;
import io.icebergcdc.dedup.AmbiguousChangePolicy;
import io.icebergcdc.dedup.TableScope;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.flink.annotation.VisibleForTesting;
import org.apache.flink.runtime.state.StateInitializationContext;
import org.apache.flink.runtime.state.StateSnapshotContext;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.BoundedOneInput;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.util.ExceptionUtils;
import org.apache.iceberg.flink.TableLoader;

/**
 * Orders and deduplicates the changes of each key and writes each checkpoint's net changes as
 * Parquet data files, the updates and deletes of existing rows as positions to delete, which the
 * committer turns into deletion vectors or position delete files: the dedup and the writer in one
 * operator, for one table or for several. What it does for each table is its {@link
 * TableDeltaWriter}'s.
 *
 * <p><b>Place in the topology:</b> directly after the source (or parser), before the committer. The
 * operator of one table takes a stream keyed by the table's primary key; the operator of several
 * ({@link #ofTables}), a stream of all their changes keyed by {@link TableKey}, (table, primary
 * key), each change going to the writer of the table it names ({@link ChangeEvent#table()}).
 *
 * <p><b>State:</b> each table's writer's. The operator of one table keeps the names of earlier
 * releases, and the dedup's in-memory index in raw keyed state. In the operator of several, the
 * tables share the dedup's keyed state (the keys tell them apart), name their operator state after
 * the table ({@link TableScope#of}), and keep no in-memory index.
 *
 * <p><b>Threading:</b> Flink's task thread only.
 */
public final class PositionDeltaWriterOperator<K> extends AbstractStreamOperator<ChangeCommittable>
    implements OneInputStreamOperator<ChangeEvent, ChangeCommittable>, BoundedOneInput {

  private static final long serialVersionUID = 1L;

  /** The writer of the one table, or null for an operator of several. */
  private final TableDeltaWriter<K> only;

  /** The writers by the table name their changes carry; for an operator of several, else null. */
  private final TreeMap<String, TableDeltaWriter<?>> byTable;

  /** The writer of one table. */
  public PositionDeltaWriterOperator(
      TableLoader tableLoader,
      ChangeSchema schema,
      ChangeKeySelector<K> keySelector,
      boolean bootstrap,
      Map<String, String> writeProperties,
      Duration tombstoneTtl,
      AmbiguousChangePolicy ambiguousChangePolicy,
      double compactionRatio) {
    this.only =
        new TableDeltaWriter<>(
            tableLoader,
            schema,
            keySelector,
            bootstrap,
            writeProperties,
            tombstoneTtl,
            ambiguousChangePolicy,
            compactionRatio);
    this.byTable = null;
  }

  private PositionDeltaWriterOperator(TreeMap<String, TableDeltaWriter<?>> byTable) {
    this.only = null;
    this.byTable = byTable;
  }

  /**
   * The writer of several tables, on a stream of their changes keyed by {@link TableKey}: each
   * table written as {@code tables} says, by the name its changes carry ({@link
   * ChangeEvent#table()}). Each must be the operator of one table keyed by primary key, tagged for
   * a committer of several tables ({@link #setCommittedAs}).
   */
  public static PositionDeltaWriterOperator<TableKey> ofTables(
      Map<String, PositionDeltaWriterOperator<?>> tables) {
    if (tables.isEmpty()) {
      throw new IllegalArgumentException("no table to write");
    }
    TreeMap<String, TableDeltaWriter<?>> byTable = new TreeMap<>();
    for (Map.Entry<String, PositionDeltaWriterOperator<?>> table : tables.entrySet()) {
      TableDeltaWriter<?> writer = table.getValue().only;
      if (writer == null || !writer.keyedByPrimaryKey()) {
        throw new IllegalArgumentException(
            "table " + table.getKey() + " is not written by primary key alone");
      }
      if (writer.committedAs() == null) {
        throw new IllegalArgumentException(
            "table " + table.getKey() + " is not tagged for a committer of several tables");
      }
      // The scope's keys are the stream's: the table's name as its changes carry it.
      writer.setScope(TableScope.of(table.getKey()));
      byTable.put(table.getKey(), writer);
    }
    return new PositionDeltaWriterOperator<>(byTable);
  }

  private Collection<TableDeltaWriter<?>> writers() {
    return only != null ? List.of(only) : byTable.values();
  }

  /** See {@link TableDeltaWriter#setCompactionCacheBytes}. */
  public void setCompactionCacheBytes(long bytes) {
    single().setCompactionCacheBytes(bytes);
  }

  /** See {@link TableDeltaWriter#setSmallFileSize}. */
  public void setSmallFileSize(long bytes) {
    single().setSmallFileSize(bytes);
  }

  @VisibleForTesting
  void setSurveyInterval(Duration interval) {
    single().setSurveyInterval(interval);
  }

  @VisibleForTesting
  void setClock(java.util.function.LongSupplier clock) {
    single().setClock(clock);
  }

  /** See {@link TableDeltaWriter#setSinkTag}. */
  public void setSinkTag(String tag) {
    single().setSinkTag(tag);
  }

  /** See {@link TableDeltaWriter#setCommittedAs}. */
  public void setCommittedAs(String table) {
    single().setCommittedAs(table);
  }

  /** See {@link io.icebergcdc.dedup.DedupOptions#INDEX_MAX_KEYS}. */
  public void setIndexMaxKeys(long maxKeys) {
    single().setIndexMaxKeys(maxKeys);
  }

  /** See {@link io.icebergcdc.dedup.KeyedDedup#setTablePosition}. */
  public void setTablePosition(io.icebergcdc.cdc.SourceSequence position) {
    single().setTablePosition(position);
  }

  @VisibleForTesting
  long dataFilesCompactedFromMemory() {
    return single().dataFilesCompactedFromMemory();
  }

  /** The writer of the one table; settings are made on the operators of one table. */
  private TableDeltaWriter<K> single() {
    if (only == null) {
      throw new IllegalStateException(
          "an operator of several tables takes each table's settings from its own operator");
    }
    return only;
  }

  @Override
  public void initializeState(StateInitializationContext context) throws Exception {
    super.initializeState(context);
    for (TableDeltaWriter<?> writer : writers()) {
      writer.initializeState(context, this, output);
    }
  }

  @Override
  public void open() throws Exception {
    super.open();
    JobClassLoaderRelease.registerFor(getRuntimeContext());
    for (TableDeltaWriter<?> writer : writers()) {
      writer.open();
    }
  }

  @Override
  public void processElement(StreamRecord<ChangeEvent> element) throws Exception {
    ChangeEvent change = element.getValue();
    TableDeltaWriter<?> writer = only != null ? only : byTable.get(change.table());
    if (writer == null) {
      throw new IllegalStateException(
          "a change of table " + change.table() + ", which this writer does not write");
    }
    writer.processElement(change);
  }

  @Override
  public void prepareSnapshotPreBarrier(long checkpointId) throws Exception {
    super.prepareSnapshotPreBarrier(checkpointId);
    for (TableDeltaWriter<?> writer : writers()) {
      writer.prepareSnapshotPreBarrier(checkpointId);
    }
  }

  @Override
  public void snapshotState(StateSnapshotContext context) throws Exception {
    super.snapshotState(context);
    for (TableDeltaWriter<?> writer : writers()) {
      writer.snapshotState(context);
    }
  }

  @Override
  public void notifyCheckpointComplete(long checkpointId) throws Exception {
    super.notifyCheckpointComplete(checkpointId);
    for (TableDeltaWriter<?> writer : writers()) {
      writer.notifyCheckpointComplete(checkpointId);
    }
  }

  @Override
  public void endInput() throws Exception {
    for (TableDeltaWriter<?> writer : writers()) {
      writer.endInput();
    }
  }

  @Override
  protected boolean isUsingCustomRawKeyedState() {
    // The in-memory index of the dedup of one table is written there.
    return only != null;
  }

  @Override
  public void close() throws Exception {
    Exception failure = null;
    for (TableDeltaWriter<?> writer : new ArrayList<>(writers())) {
      try {
        writer.close();
      } catch (Exception e) {
        failure = ExceptionUtils.firstOrSuppressed(e, failure);
      }
    }
    try {
      super.close();
    } catch (Exception e) {
      failure = ExceptionUtils.firstOrSuppressed(e, failure);
    }
    if (failure != null) {
      throw failure;
    }
  }
}
