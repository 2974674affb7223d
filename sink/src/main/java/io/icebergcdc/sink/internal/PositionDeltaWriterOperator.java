package io.icebergcdc.sink.internal;

import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.ChangeSchema;
import io.icebergcdc.cdc.TableKey;
import io.icebergcdc.commit.ChangeCommittable;
import io.icebergcdc.commit.JobClassLoaderRelease;
import io.icebergcdc.commit.TableThreads;
import io.icebergcdc.dedup.AmbiguousChangePolicy;
import io.icebergcdc.dedup.TableScope;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.flink.annotation.VisibleForTesting;
import org.apache.flink.api.common.state.OperatorStateStore;
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
 * TableDeltaWriter}'s; a table in equality mode deletes by key instead ({@link
 * TableDeltaWriter#setDeleteMode}).
 *
 * <p><b>Place in the topology:</b> directly after the source (or parser), before the committer. The
 * operator of one table takes a stream keyed by the table's primary key; the operator of several
 * ({@link #ofTables}), a stream of all their changes keyed by {@link TableKey}, (table, primary
 * key), each change going to the writer of the table it names ({@link ChangeEvent#table()}).
 *
 * <p><b>State:</b> each table's writer's. The operator of one table keeps the names of earlier
 * releases, and the dedup's in-memory index in raw keyed state. In the operator of several, the
 * tables share the dedup's keyed state (the keys tell them apart) and name their operator state
 * after the table ({@link TableScope#of}); their in-memory indexes share the raw keyed state
 * ({@link TableIndexes}). A restore drops the state of tables the job no longer writes, with a
 * warning, but for an operator that takes the tables that appear while the job runs ({@link
 * NewTables}), which takes back every table its restored state holds and the catalog still has.
 *
 * <p><b>Checkpoints:</b> each table's net changes of the interval are written, then the table's
 * files completed and handed on; but the tables whose compaction reads them at the checkpoint wait
 * with their files open until a batch of them is read together ({@link #finishReading}). The files
 * are closed (on object storage, uploaded) on other threads: in the operator of several, the files
 * of up to {@link #TABLE_THREADS} tables while the task thread goes on ({@link #finish}); and a
 * table's data files of several partitions several at once, in either operator.
 *
 * <p><b>Threading:</b> Flink's task thread, but for the reads of tables ahead and the closing of
 * files at a checkpoint, on threads of the operator's; the task thread waits for the reads, and for
 * the closing of one table's files, but goes on with other tables while theirs are closed.
 */
public final class PositionDeltaWriterOperator<K> extends AbstractStreamOperator<ChangeCommittable>
    implements OneInputStreamOperator<ChangeEvent, ChangeCommittable>, BoundedOneInput {

  private static final long serialVersionUID = 1L;
  private static final org.slf4j.Logger LOG =
      org.slf4j.LoggerFactory.getLogger(PositionDeltaWriterOperator.class);

  /** The writer of the one table, or null for an operator of several. */
  private final TableDeltaWriter<K> only;

  /** The writers by the table name their changes carry; for an operator of several, else null. */
  private final TreeMap<String, TableDeltaWriter<?>> byTable;

  /**
   * The bytes of recent rows that the writers of an operator of several tables hold together
   * ({@code sink.compaction.cache-size}, the largest of theirs, those of tables taken later too);
   * null for an operator of one.
   */
  private transient RecentRows.Budget recentRowsBudget;

  /**
   * Builds the writer of a table that appears while the job runs, for an operator of several that
   * may take such tables; else null.
   */
  private final NewTables newTables;

  /**
   * The build of this operator ({@link io.icebergcdc.commit.TablesBuiltWith}): the appeared tables
   * of a restored state are taken back only from a state that holds it (Flink's restart of the job
   * as it was built); a job built again drops the state of the tables it does not write, as any job
   * does.
   */
  private final long builtWith;

  /** The checkpoint this operator's state was restored from; null if it started without state. */
  private transient Long restoredCheckpoint;

  /**
   * The source of the changes of each table that appeared while the job runs, as their origin names
   * it before its last {@code /} (a Kafka topic, of {@code topic/partition}): one source per table,
   * as the start requires of the tables it is built with. Learned from each table's first change on
   * this subtask.
   */
  private transient Map<String, String> sourceOfAppeared;

  /** The latest checkpoint whose barrier this operator passed; -1 for none. */
  private transient long preparedCheckpoint;

  /** The latest checkpoint this operator knows complete; -1 for none. */
  private transient long completedCheckpoint;

  /** The threads that read tables ahead ({@link #finishReading}); null until needed. */
  private transient TableThreads tableReads;

  /**
   * The threads that close tables' files at a checkpoint, a table at a time each ({@link #finish});
   * null until needed.
   */
  private transient TableThreads tableClosing;

  /**
   * The threads that close a table's data files of several partitions at a checkpoint, a file at a
   * time each ({@link #fileClosing()}); null until needed.
   */
  private transient TableThreads fileClosing;

  /**
   * How many tables are read ahead, have their files closed, or files of partitions closed, at
   * once.
   */
  static final int TABLE_THREADS = 8;

  /**
   * How many tables whose compaction reads them at a checkpoint are read together, their files open
   * meanwhile (each open data file holds its row group's buffers until it closes): the others are
   * finished as they come, up to {@link #TABLE_THREADS} of them closing their files meanwhile.
   */
  static final int TABLES_READ_AT_ONCE = 2 * TABLE_THREADS;

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
    this.newTables = null;
    this.builtWith = 0;
  }

  private PositionDeltaWriterOperator(
      TreeMap<String, TableDeltaWriter<?>> byTable, NewTables newTables, long builtWith) {
    this.only = null;
    this.byTable = byTable;
    this.newTables = newTables;
    this.builtWith = builtWith;
  }

  private transient org.apache.flink.api.common.state.ListState<Long> builtWithState;

  /**
   * Builds the operator of one table for a table that appears while the job runs, by the name its
   * changes carry, as {@link #ofTables} takes it: keyed by primary key or by partition, tagged for
   * the committer of several tables.
   */
  @FunctionalInterface
  public interface NewTables extends java.io.Serializable {
    /**
     * @param jobSchemaId the id of the table's schema to build the writer with, the one a restored
     *     writer of it was built with; null for the table's current schema
     * @param restored whether the table is taken back from a restored state (else at its first
     *     change): a table that can no longer be written with the others is then refused for good
     */
    PositionDeltaWriterOperator<?> writerOf(String table, Integer jobSchemaId, boolean restored);

    /**
     * How the stream hashes the keys of {@code table} ({@link TableKeySelector.Hashing}): as the
     * writer {@link #writerOf} builds for it now does, by the partitions returned or by primary key
     * if null.
     */
    default PartitionedKeySelector partitionerOf(String table) {
      return writerOf(table, null, false).single().partitioner();
    }
  }

  /**
   * The writer of several tables, on a stream of their changes keyed by {@link TableKey}: each
   * table written as {@code tables} says, by the name its changes carry ({@link
   * ChangeEvent#table()}). Each must be the operator of one table keyed by primary key, tagged for
   * a committer of several tables ({@link #setCommittedAs}).
   */
  public static PositionDeltaWriterOperator<TableKey> ofTables(
      Map<String, PositionDeltaWriterOperator<?>> tables) {
    return ofTables(tables, null);
  }

  /**
   * The writer of several tables, as {@link #ofTables(Map)}, that writes the tables that appear
   * while the job runs too: the first change of a table it does not write, or a restored state that
   * holds one, makes it write that table as {@code newTables} builds its writer, as it would write
   * a table added to the job between runs; null where no table may appear.
   */
  public static PositionDeltaWriterOperator<TableKey> ofTables(
      Map<String, PositionDeltaWriterOperator<?>> tables, NewTables newTables) {
    return ofTables(tables, newTables, io.icebergcdc.commit.TablesBuiltWith.draw());
  }

  /** {@link #ofTables(Map, NewTables)}, as the build {@code builtWith} ({@link #builtWith}). */
  @org.apache.flink.annotation.VisibleForTesting
  static PositionDeltaWriterOperator<TableKey> ofTables(
      Map<String, PositionDeltaWriterOperator<?>> tables, NewTables newTables, long builtWith) {
    if (tables.isEmpty()) {
      throw new IllegalArgumentException("no table to write");
    }
    TreeMap<String, TableDeltaWriter<?>> byTable = new TreeMap<>();
    for (Map.Entry<String, PositionDeltaWriterOperator<?>> table : tables.entrySet()) {
      byTable.put(table.getKey(), writerOfTable(table.getKey(), table.getValue()));
    }
    return new PositionDeltaWriterOperator<>(byTable, newTables, builtWith);
  }

  /** The writer of {@code table} in an operator of several, from its operator of one. */
  private static TableDeltaWriter<?> writerOfTable(
      String table, PositionDeltaWriterOperator<?> operator) {
    TableDeltaWriter<?> writer = operator.only;
    if (writer == null) {
      throw new IllegalArgumentException("table " + table + " has no key-indexed writer");
    }
    if (writer.committedAs() == null) {
      throw new IllegalArgumentException(
          "table " + table + " is not tagged for a committer of several tables");
    }
    // The scope's keys are the stream's: the table's name as its changes carry it, hashed by
    // partition where the table's changes are distributed so (TableKeySelector).
    writer.setScope(
        writer.keyedByPrimaryKey() ? TableScope.of(table) : new PartitionedTableScope(table));
    return writer;
  }

  /**
   * The writer of {@code table}, which appeared while the job runs: keyed as the stream keys the
   * table's changes ({@link #streamKeys}, which looked it up on its own), by primary key or by the
   * same partition spec. (A change that another task keying the stream hashed otherwise, the table
   * changed between their looks, reaches a subtask that does not own its key group, where Flink
   * fails the task as it sets the change's key: {@link #setKeyContextElement1}.)
   *
   * @throws IllegalStateException where they differ: the table's distribution or partition spec
   *     changed between the two looks (after Flink's restart both look again)
   */
  private TableDeltaWriter<?> writerOfAppeared(
      String table, PositionDeltaWriterOperator<?> operator) {
    TableDeltaWriter<?> writer = writerOfTable(table, operator);
    if (getStateKeySelector1() instanceof TableKeySelector keys) {
      Integer streamSpec = specIdOf(keys.partitionerOf(table));
      if (!java.util.Objects.equals(streamSpec, writer.hashedBySpecId())) {
        throw new IllegalStateException(
            "table "
                + table
                + ", which appeared while the job runs, is hashed over the writers "
                + hashing(streamSpec)
                + " by the stream and "
                + hashing(writer.hashedBySpecId())
                + " by its writer: its iceberg-cdc.keys-hashed-by property, or where it has none its"
                + " distribution or partition spec, changed as the job took it");
      }
    }
    return writer;
  }

  private static Integer specIdOf(PartitionedKeySelector partitions) {
    return partitions == null ? null : partitions.specId();
  }

  private static String hashing(Integer specId) {
    return specId == null ? "by primary key" : "by partition spec " + specId;
  }

  /**
   * How the stream of an operator of several tables must be keyed: by (table, primary key), hashed
   * as each table's writer keys its state (by partition for a table distributed so). A table that
   * appears while the job runs is hashed as the writer {@link NewTables} builds for it, looked up
   * at its first change.
   */
  public TableKeySelector streamKeys() {
    if (byTable == null) {
      throw new IllegalStateException("an operator of one table is keyed by its own key selector");
    }
    Map<String, PartitionedKeySelector> byPartition = new TreeMap<>();
    byTable.forEach(
        (table, writer) -> {
          if (writer.partitioner() != null) {
            byPartition.put(table, writer.partitioner());
          }
        });
    return new TableKeySelector(
        byPartition, byTable.keySet(), newTables == null ? null : newTables::partitionerOf);
  }

  private Collection<TableDeltaWriter<?>> writers() {
    return only != null ? List.of(only) : byTable.values();
  }

  /** Bytes of the recent rows its writers hold for compaction and fills, for tests. */
  @org.apache.flink.annotation.VisibleForTesting
  long recentRowsHeld() {
    long bytes = 0;
    for (TableDeltaWriter<?> writer : writers()) {
      bytes += writer.recentRowsHeld();
    }
    return bytes;
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

  /** See {@link TableDeltaWriter#setDeleteMode}. */
  public void setDeleteMode(io.icebergcdc.sink.DeleteMode mode) {
    single().setDeleteMode(mode);
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

  /** See {@link io.icebergcdc.dedup.KeyedDedup#setTableTruncatedAt}. */
  public void setTableTruncatedAt(io.icebergcdc.cdc.SourceSequence position) {
    single().setTableTruncatedAt(position);
  }

  @VisibleForTesting
  long dataFilesCompactedFromMemory() {
    return single().dataFilesCompactedFromMemory();
  }

  @VisibleForTesting
  long tableSurveys() {
    return single().tableSurveys();
  }

  @VisibleForTesting
  long compactionRefreshes() {
    return single().compactionRefreshes();
  }

  /** How many times {@code table}'s compaction was surveyed, refreshed it and used a read ahead. */
  @VisibleForTesting
  long[] surveysRefreshesAndReadsAhead(String table) {
    TableDeltaWriter<?> writer = writerOf(table);
    return new long[] {
      writer.tableSurveys(), writer.compactionRefreshes(), writer.readsAheadUsed()
    };
  }

  /** See {@link io.icebergcdc.dedup.KeyedDedup#indexKeptBytes}; 0 for a table it does not write. */
  @VisibleForTesting
  long indexKeptBytes(String table) {
    TableDeltaWriter<?> writer = writerOf(table);
    return writer == null ? 0 : writer.indexKeptBytes();
  }

  /**
   * See {@link io.icebergcdc.dedup.KeyedDedup#indexKeptWrites}; 0 for a table it does not write.
   */
  @VisibleForTesting
  long indexKeptWrites(String table) {
    TableDeltaWriter<?> writer = writerOf(table);
    return writer == null ? 0 : writer.indexKeptWrites();
  }

  private TableDeltaWriter<?> writerOf(String table) {
    return only != null ? only : byTable == null ? null : byTable.get(table);
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
    restoredCheckpoint =
        context.getRestoredCheckpointId().isPresent()
            ? context.getRestoredCheckpointId().getAsLong()
            : null;
    sourceOfAppeared = new java.util.HashMap<>();
    preparedCheckpoint = restoredCheckpoint == null ? -1 : restoredCheckpoint;
    completedCheckpoint = preparedCheckpoint;
    if (byTable != null) {
      // As large as the largest of its tables' (shareRecentRows), those taken later too.
      recentRowsBudget = new RecentRows.Budget(0);
    }
    if (byTable != null && newTables != null) {
      builtWithState =
          context
              .getOperatorStateStore()
              .getUnionListState(io.icebergcdc.commit.TablesBuiltWith.STATE);
      boolean sameBuild = false;
      for (Long restored : builtWithState.get()) {
        sameBuild |= restored == builtWith;
      }
      if (context.isRestored() && sameBuild) {
        claimRestoredTables(context);
      }
    }
    for (TableDeltaWriter<?> writer : writers()) {
      if (recentRowsBudget != null) {
        writer.shareRecentRows(recentRowsBudget);
      }
      writer.initializeState(context, this, output);
    }
    if (byTable != null && context.isRestored()) {
      java.util.Set<String> gone = forgetTablesNoLongerWritten(context);
      TableIndexes.read(context, byTable);
      if (!gone.isEmpty()) {
        byTable.firstEntry().getValue().forgetKeys(key -> gone.contains(((TableKey) key).table()));
      }
    }
  }

  /**
   * Takes the writers of the restored tables that this operator was not built with, but that
   * appeared while the job ran before (Flink restores a job as it was built): their state, index
   * and keys carry on. Only for a state of the same build ({@link #builtWith}). A table the catalog
   * no longer has, or whose state an earlier run forgot, is left to be forgotten.
   */
  private void claimRestoredTables(StateInitializationContext context) throws Exception {
    OperatorStateStore store = context.getOperatorStateStore();
    for (String table : WriterState.restoredTables(store)) {
      if (!byTable.containsKey(table) && WriterState.holdsState(store, TableScope.of(table))) {
        try {
          // In the schema it was first built with: its fingerprints and kept rows are of it.
          Integer jobSchema =
              WriterState.restoredJobSchema(
                  store,
                  TableScope.of(table),
                  getRuntimeContext().getTaskInfo().getIndexOfThisSubtask(),
                  getRuntimeContext().getTaskInfo().getNumberOfParallelSubtasks());
          byTable.put(table, writerOfAppeared(table, newTables.writerOf(table, jobSchema, true)));
          sourceOfAppeared.put(table, null);
          LOG.info("Writing table {} too, which appeared while the job ran", table);
        } catch (org.apache.iceberg.exceptions.NoSuchTableException e) {
          LOG.warn(
              "Table {}, which appeared while the job ran, is no longer in the catalog", table);
        }
      }
    }
  }

  /**
   * Starts writing {@code table}, which appeared while the job runs, as a table added to the job
   * between runs starts: its state registered now, from the latest completed checkpoint on, its
   * files going with the checkpoint after the latest this operator passed.
   */
  private TableDeltaWriter<?> startWriting(String table) throws Exception {
    TableDeltaWriter<?> writer = writerOfAppeared(table, newTables.writerOf(table, null, false));
    Object key = getCurrentKey();
    // Boxed on both branches: a job that completed no checkpoint, and was not restored, has none.
    Long startCheckpoint =
        completedCheckpoint < 0 ? restoredCheckpoint : Long.valueOf(completedCheckpoint);
    writer.shareRecentRows(recentRowsBudget);
    try {
      writer.initializeState(
          new org.apache.flink.runtime.state.StateInitializationContextImpl(
              startCheckpoint,
              getOperatorStateBackend(),
              getKeyedStateStore(),
              List.of(),
              List.of()),
          this,
          output);
      if (startCheckpoint != null) {
        writer.indexRestored();
      }
      writer.open();
      writer.startsAfter(preparedCheckpoint);
    } catch (Exception | Error e) {
      // Not in byTable, so close() would not close it: its table loader holds the catalog that
      // the operator's tables share.
      try {
        writer.close();
      } catch (Throwable closing) {
        e.addSuppressed(closing);
      }
      throw e;
    }
    byTable.put(table, writer);
    sourceOfAppeared.put(table, null);
    setCurrentKey(key);
    LOG.info("Writing table {} too, which appeared while the job runs", table);
    return writer;
  }

  /**
   * Clears the restored operator state of the tables this job no longer writes (a restore carries
   * unclaimed state into the next snapshots; a table added to the job again must start without
   * state), and returns them, so that their keyed state is cleared too.
   */
  private java.util.Set<String> forgetTablesNoLongerWritten(StateInitializationContext context)
      throws Exception {
    java.util.Set<String> gone = WriterState.restoredTables(context.getOperatorStateStore());
    gone.removeAll(byTable.keySet());
    for (String table : gone) {
      WriterState.forget(context.getOperatorStateStore(), TableScope.of(table));
    }
    if (!gone.isEmpty()) {
      LOG.warn("Dropped the restored state of tables this job no longer writes: {}", gone);
    }
    return gone;
  }

  @Override
  public void open() throws Exception {
    super.open();
    JobClassLoaderRelease.registerFor(getRuntimeContext());
    for (TableDeltaWriter<?> writer : writers()) {
      writer.open();
    }
  }

  /**
   * Sets the key of a change, as Flink does, and names the table where Flink refuses the key as not
   * of this subtask's key groups: a table that appeared while the job runs whose keys a task that
   * keys the stream hashed otherwise (its partition spec or distribution changed between their
   * looks). Flink's restart makes each look again.
   */
  @Override
  @SuppressWarnings("rawtypes")
  public void setKeyContextElement1(StreamRecord record) throws Exception {
    try {
      super.setKeyContextElement1(record);
    } catch (RuntimeException e) {
      // Flink's refusal of a key group outside this subtask's range; not a failure of the key
      // selector's own look at a table (a catalog's), which passes as it is.
      if (org.apache.flink.util.ExceptionUtils.findThrowableWithMessage(e, "KeyGroupRange")
              .isPresent()
          && byTable != null
          && record.getValue() instanceof ChangeEvent change
          && newTables != null
          && (!byTable.containsKey(change.table())
              || sourceOfAppeared.containsKey(change.table()))) {
        throw new IllegalStateException(
            "a change of table "
                + change.table()
                + ", which appeared while the job runs, reached a writer that does not own its key:"
                + " the tasks that key the stream hash the table's keys differently (its "
                + "iceberg-cdc.keys-hashed-by property, or where it has none its distribution or"
                + " partition spec, changed as the job took it)",
            e);
      }
      throw e;
    }
  }

  @Override
  public void processElement(StreamRecord<ChangeEvent> element) throws Exception {
    ChangeEvent change = element.getValue();
    TableDeltaWriter<?> writer = only != null ? only : byTable.get(change.table());
    if (writer == null && newTables != null) {
      writer = startWriting(change.table());
    }
    if (!sourceOfAppeared.isEmpty() && sourceOfAppeared.containsKey(change.table())) {
      checkOneSource(change);
    }
    if (writer == null) {
      throw new IllegalStateException(
          "a change of table " + change.table() + ", which this writer does not write");
    }
    writer.processElement(change);
  }

  /**
   * Refuses a change of a table that appeared while the job runs from another source than the
   * table's earlier changes: two topics named into one table, met by different readers (a reader
   * refuses those it meets itself), whose sequences cannot be compared.
   */
  private void checkOneSource(ChangeEvent change) {
    String origin = change.originPartition();
    if (origin == null) {
      return;
    }
    String source = sourceOfAppeared.get(change.table());
    if (source == null) {
      sourceOfAppeared.put(
          change.table(), origin.substring(0, Math.max(0, origin.lastIndexOf('/'))));
    } else if (!(origin.startsWith(source)
        && origin.length() > source.length()
        && origin.charAt(source.length()) == '/'
        && origin.indexOf('/', source.length() + 1) < 0)) {
      throw new io.icebergcdc.cdc.RefusedSourceException(
          "table "
              + change.table()
              + ", which appeared while the job runs, gets changes of "
              + source
              + " and of "
              + origin.substring(0, Math.max(0, origin.lastIndexOf('/')))
              + ": two sources into one table, whose changes cannot be ordered; give the job a"
              + " table template that tells them apart");
    }
  }

  @Override
  public void prepareSnapshotPreBarrier(long checkpointId) throws Exception {
    super.prepareSnapshotPreBarrier(checkpointId);
    preparedCheckpoint = Math.max(preparedCheckpoint, checkpointId);
    if (only != null) {
      only.prepareSnapshotPreBarrier(checkpointId);
      only.compactAtCheckpoint();
      if (only.hasCheckpointFilesOpen()) {
        // Files of several partitions are closed (on object storage, uploaded) several at once.
        only.closeCheckpointFiles(fileClosing());
      }
      only.finishCheckpoint();
      return;
    }
    if (tableClosing == null) {
      tableClosing =
          TableThreads.of(TABLE_THREADS, "iceberg-cdc-table-closing-" + threadNameSuffix());
    }
    // Made here, on the task thread, for the tables' threads to share.
    TableThreads files = fileClosing();
    TableThreads.InFlight<TableDeltaWriter<?>> closing =
        tableClosing.inFlight(
            writer -> writer.closeCheckpointFiles(files), TableDeltaWriter::finishCheckpoint);
    // Each table's changes are written; a table whose compaction reads it now waits, its files
    // open, until a batch of such tables is read together (finishReading), the others go on.
    try {
      List<TableDeltaWriter<?>> reading = new ArrayList<>();
      for (TableDeltaWriter<?> writer : writers()) {
        writer.prepareSnapshotPreBarrier(checkpointId);
        if (writer.readsTableAtCheckpoint()) {
          reading.add(writer);
          if (reading.size() == TABLES_READ_AT_ONCE) {
            finishReading(reading, checkpointId, closing);
          }
        } else {
          finish(writer, closing);
        }
      }
      finishReading(reading, checkpointId, closing);
      closing.finishAll();
    } catch (Exception e) {
      // Nothing of the tables in flight may run once this fails (Flink then fails the task).
      closing.abandon(e);
      throw e;
    }
  }

  /** The operator and subtask, in the names of the operator's threads. */
  private String threadNameSuffix() {
    return getOperatorID() + "-" + getRuntimeContext().getTaskInfo().getIndexOfThisSubtask();
  }

  /** The threads that close a table's files of several partitions; the task thread's only. */
  private TableThreads fileClosing() {
    if (fileClosing == null) {
      // Their threads start as work comes, up to this many, and end after a minute without any.
      // Waited for at close (as the tables' are), before the writers remove the files they did not
      // hand on.
      fileClosing =
          TableThreads.of(TABLE_THREADS, "iceberg-cdc-file-closing-" + threadNameSuffix());
    }
    return fileClosing;
  }

  /**
   * Reads ahead, several at once, the tables of {@code reading} (a refresh from the catalog and,
   * for a new snapshot, its manifests), whose compaction reads them at this checkpoint, then
   * finishes their checkpoint ({@link #finish}), which uses those reads (a batch of one is read by
   * its compaction itself). Each read mostly waits on the catalog and the file system, and one
   * after the other they held the writers' task threads for most of their busy time on object
   * storage. The task thread waits until all are read.
   */
  private void finishReading(
      List<TableDeltaWriter<?>> reading,
      long checkpointId,
      TableThreads.InFlight<TableDeltaWriter<?>> closing)
      throws Exception {
    if (reading.size() > 1) {
      if (tableReads == null) {
        tableReads =
            TableThreads.forReads(TABLE_THREADS, "iceberg-cdc-table-reads-" + threadNameSuffix());
      }
      tableReads.forEach(reading, writer -> writer.readTableAhead(checkpointId));
    }
    for (TableDeltaWriter<?> writer : reading) {
      finish(writer, closing);
    }
    reading.clear();
  }

  /**
   * Finishes the checkpoint of one table of several, its changes written: compacts it on the task
   * thread, then closes its files (on object storage, uploads them) on the threads of {@code
   * closing} while the task thread goes on with the next tables, and hands them on once closed, on
   * the task thread. One table after the other, the uploads held the writers' task threads for most
   * of their busy time on object storage.
   */
  private static void finish(
      TableDeltaWriter<?> writer, TableThreads.InFlight<TableDeltaWriter<?>> closing)
      throws Exception {
    writer.compactAtCheckpoint();
    if (writer.hasCheckpointFilesOpen()) {
      closing.start(writer);
    } else {
      writer.finishCheckpoint();
    }
  }

  @Override
  public void snapshotState(StateSnapshotContext context) throws Exception {
    super.snapshotState(context);
    for (TableDeltaWriter<?> writer : writers()) {
      writer.snapshotState(context);
    }
    if (byTable != null) {
      TableIndexes.write(context, byTable);
    }
    if (builtWithState != null) {
      builtWithState.update(List.of(builtWith));
    }
  }

  @Override
  public void notifyCheckpointComplete(long checkpointId) throws Exception {
    super.notifyCheckpointComplete(checkpointId);
    completedCheckpoint = Math.max(completedCheckpoint, checkpointId);
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
    // The dedup's in-memory index is written there: by the dedup of the one table, or by this
    // operator for its tables.
    return true;
  }

  @Override
  public void close() throws Exception {
    Exception failure = null;
    if (tableReads != null) {
      tableReads.close();
    }
    if (tableClosing != null) {
      // First: their work waits for the files' threads.
      tableClosing.close();
    }
    if (fileClosing != null) {
      fileClosing.close();
    }
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
