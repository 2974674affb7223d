package io.icebergcdc.sink.internal;

import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.ChangeSchema;
import io.icebergcdc.cdc.ChangeStats;
import io.icebergcdc.cdc.RowKey;
import io.icebergcdc.commit.ChangeCommittable;
import io.icebergcdc.commit.ContentFileCodec;
import io.icebergcdc.commit.LiveFiles;
import io.icebergcdc.commit.OwnedFileNames;
import io.icebergcdc.commit.SnapshotSummaryKeys;
import io.icebergcdc.commit.TableThreads;
import io.icebergcdc.dedup.AmbiguousChangePolicy;
import io.icebergcdc.dedup.AppliedChange;
import io.icebergcdc.dedup.Dedup;
import io.icebergcdc.dedup.KeyedDedup;
import io.icebergcdc.dedup.NetChanges;
import io.icebergcdc.dedup.TableScope;
import io.icebergcdc.sink.DeleteMode;
import io.icebergcdc.sink.SinkOptions;
import java.io.IOException;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.annotation.VisibleForTesting;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.runtime.state.StateInitializationContext;
import org.apache.flink.runtime.state.StateSnapshotContext;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.Output;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.table.data.RowData;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Table;
import org.apache.iceberg.flink.TableLoader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One table's part of a {@link PositionDeltaWriterOperator}: orders and deduplicates the changes of
 * each key ({@link KeyedDedup}) and writes each checkpoint's net changes as Parquet data files, the
 * updates and deletes of existing rows as positions to delete, which the committer turns into
 * deletion vectors or position delete files. The dedup and the writer are one, so that one keyed
 * state entry per key holds both what the dedup needs (sequence, fingerprint, tombstone) and the
 * key index (the data file and position of the key's live row). The operator calls each method from
 * its own of the same name, and at a checkpoint {@link #finishCheckpoint} after {@link
 * #prepareSnapshotPreBarrier} (with {@link #readTableAhead}, {@link #compactAtCheckpoint} and
 * {@link #closeCheckpointFiles} between, where it closes files on other threads); the keys it sets
 * are the primary keys as its {@link TableScope} maps them.
 *
 * <p><b>State:</b> the keyed state of the dedup ({@link KeyedDedup}), whose live entries carry the
 * row's location. And operator state ({@link WriterState}), among it whether the index is complete:
 * true when the job first started on an empty table or loaded the index from the table (bootstrap);
 * then a key without an entry has no row, and its insert needs no delete at all.
 *
 * <p><b>Writing:</b> an upsert of a key with a known row deletes that row by position and writes
 * the new one, whose position goes into the key's entry; a delete deletes by position. Where the
 * position is not known (the index is not complete and the key has no entry, or the entry was
 * written without a location by a job in equality mode), the row may exist: it is deleted by an
 * equality delete on the key, counted as a fallback. The files themselves are {@link DeltaFiles}'.
 * They are completed in {@link #finishCheckpoint}, before the checkpoint's barrier, so the index in
 * a checkpoint only points into files handed to the committer for that checkpoint or earlier.
 *
 * <p><b>By key</b> ({@link #setDeleteMode}, {@link DeleteMode#EQUALITY}): the writer of a table in
 * equality mode keeps no row's location. Its entries hold what the dedup needs, every update or
 * delete of a key that may have a row deletes it by an equality delete on the key (not counted as a
 * fallback), but for a row written for a checkpoint not yet known complete, which it deletes by
 * position ({@link #unconfirmedRows}); the index is never loaded from the table and nothing is
 * compacted: compaction finds rows through their entries' locations, so it would take every row of
 * such a file for one updated since. This is the writer of Iceberg's own upsert, with the dedup's
 * order and net changes, and no delete for a key new to a table the writer started empty.
 *
 * <p><b>Compaction</b> ({@link WriterCompaction}): at a checkpoint, before its files are completed,
 * the writer moves the live rows out of files with many deleted rows, of small files and of files
 * it shares with other subtasks ({@link CompactionPlan}) into the checkpoint's new files, moving
 * their keys' entries with them; the old rows are deleted by position, and an own file, all of
 * whose keys are this subtask's, is handed to the committer to remove. The positions of the moved
 * rows also go apart, so that the committer can delete the copies of rows another writer deleted
 * meanwhile. At the end of its input a writer hands over what it holds, compacted as at a
 * checkpoint, ahead of its end-of-data signal, so that the committer's last commit holds it; after
 * that it compacts nothing: the job ends with the first checkpoint that completes then, and a later
 * one, taken meanwhile, is never committed, so copies compacted into it would be left as orphans.
 *
 * <p><b>Threading:</b> Flink's task thread, but for {@link #readTableAhead}, on another thread
 * while the task thread waits for it (it refreshes {@link #table}), and {@link
 * #closeCheckpointFiles}, on another thread while the task thread touches nothing of this table but
 * its recent rows (which another table's writing may forget; the closing does not touch them), or
 * on the task thread, spreading the data files' closing over other threads.
 */
final class TableDeltaWriter<K> implements NetChanges, java.io.Serializable {

  private static final long serialVersionUID = 1L;
  private static final Logger LOG = LoggerFactory.getLogger(TableDeltaWriter.class);

  /** How often a writer looks through the table for small and shared files to compact. */
  static final Duration SURVEY_INTERVAL = Duration.ofMinutes(1);

  private final TableLoader tableLoader;
  private final ChangeKeySelector<K> keySelector;
  private final boolean bootstrap;
  private final java.util.HashMap<String, String> writeProperties;
  private final double compactionRatio;
  private long smallFileSize = SinkOptions.COMPACTION_SMALL_FILE_SIZE.defaultValue().getBytes();
  private Duration surveyInterval = SURVEY_INTERVAL;
  private transient java.util.function.LongSupplier clock;
  private long compactionCacheBytes = SinkOptions.COMPACTION_CACHE_SIZE.defaultValue().getBytes();

  /**
   * The rows held for compaction and fills, of the current schema; null before {@link
   * #initializeState}.
   */
  private transient RecentRows recentRows;

  /**
   * The bytes they may take: the operator's, shared with its other tables ({@link
   * #shareRecentRows}), or the writer's own.
   */
  private transient RecentRows.Budget recentRowsBudget;

  private String sinkTag;

  /** The table the contributions are tagged with, for a committer of several tables; or null. */
  private String committedAs;

  /** The part of the operator's keys, state and metrics that is this table's. */
  private TableScope scope = TableScope.WHOLE;

  /** The operator that hosts this writer: its runtime context, key context and metrics. */
  private transient AbstractStreamOperator<ChangeCommittable> host;

  private transient Output<StreamRecord<ChangeCommittable>> output;
  private transient MetricGroup metrics;

  private transient Table table;

  /** The writer's operator state. */
  private transient WriterState state;

  private transient boolean indexComplete;

  /**
   * Whether the table had no rows when the job's first writer of it started ({@link WriterState}).
   */
  private transient boolean startedEmpty;

  /** Whether the index is to be loaded from the table in {@link #open}. */
  private transient boolean bootstrapDue;

  private transient FileDictionary dictionary;

  /**
   * The latest checkpoint before which this job was rescaled in place (restored at another
   * parallelism under the same job id): the files it named up to that checkpoint are shared.
   */
  private transient long sharedUpTo;

  /** The compaction of this subtask's files and of those it shares. */
  private transient WriterCompaction compaction;

  /** The filling of the values that updates lack from their keys' current rows. */
  private transient MissingColumnsFill fill;

  private transient long checkpointId;
  private transient boolean inputEnded;

  /**
   * Whether the writer handed over its files since the input ended (at the end of the input
   * itself): the last files the job commits for sure.
   */
  private transient boolean checkpointedAfterEnd;

  /**
   * The statistics of the net changes the dedup flushed for the checkpoint being prepared (empty
   * where there were none), until {@link #finishCheckpoint} hands them on with its files; null
   * outside of a checkpoint's preparation.
   */
  private transient ChangeStats flushed;

  /** Whether {@link #compactAtCheckpoint} ran for the checkpoint being prepared. */
  private transient boolean compactedAtCheckpoint;

  private transient long lastCompletedCheckpoint;
  private transient long rowsWritten;

  /**
   * Without checkpoints (a bounded job), the bootstrapped index until each key is first changed;
   * null otherwise.
   */
  private transient Map<K, AppliedChange> loadedWithoutState;

  /** The files written since the last checkpoint. */
  private transient DeltaFiles files;

  /** The first checkpoint that can hand on the files written now ({@link OwnedFileNames}). */
  private transient long fileEpoch;

  private final ChangeSchema schema;

  /** The schemas of the changes' rows, and the one written now. */
  private transient RowSchemas rowSchemas;

  /** Orders each key's changes and hands this writer their net changes once per checkpoint. */
  private final KeyedDedup dedup;

  /** Whether rows are deleted by key, without locations ({@link DeleteMode#EQUALITY}). */
  private boolean deletesByKey;

  /**
   * By key: where the rows written for checkpoints not yet known complete are, by key, with the
   * checkpoint each went with. A change of such a key deletes its row by position instead: should
   * that checkpoint be aborted after the writer handed its files on, the committer commits them in
   * one snapshot with the next checkpoint's, and Iceberg applies an equality delete only to older
   * snapshots' rows. One entry a key, however many checkpoints fail meanwhile.
   */
  private transient Map<RowKey, UnconfirmedRow> unconfirmedRows;

  /** A row written for {@code checkpoint}, at {@code location}. */
  private record UnconfirmedRow(long checkpoint, Location location) {}

  TableDeltaWriter(
      TableLoader tableLoader,
      ChangeSchema schema,
      ChangeKeySelector<K> keySelector,
      boolean bootstrap,
      Map<String, String> writeProperties,
      Duration tombstoneTtl,
      AmbiguousChangePolicy ambiguousChangePolicy,
      double compactionRatio) {
    this.schema = schema;
    this.dedup = Dedup.keyed(schema, tombstoneTtl, ambiguousChangePolicy);
    this.compactionRatio = compactionRatio;
    this.tableLoader = tableLoader;
    this.keySelector = keySelector;
    this.bootstrap = bootstrap;
    this.writeProperties = new java.util.HashMap<>(writeProperties);
  }

  /**
   * How updates and deletes find the rows they replace: by the location each key's entry keeps
   * (position deletes), or by key ({@link DeleteMode#EQUALITY}: equality deletes, no locations, no
   * bootstrap of the index and no compaction).
   */
  void setDeleteMode(DeleteMode mode) {
    this.deletesByKey = mode == DeleteMode.EQUALITY;
  }

  /**
   * Bytes of the rows of its most recent data files a writer keeps in memory, so that compacting
   * them needs no read of the files; 0 keeps none. A writer of several tables keeps the largest of
   * its tables' for all of them together ({@link #shareRecentRows}).
   */
  void setCompactionCacheBytes(long bytes) {
    this.compactionCacheBytes = SinkOptions.checkCompactionCacheBytes(bytes);
  }

  /** Data files below this size are merged with others of similar size; 0 merges none. */
  void setSmallFileSize(long bytes) {
    this.smallFileSize = SinkOptions.checkSmallFileSize(bytes);
  }

  /** How often the table is looked through for small and shared files to compact. */
  @VisibleForTesting
  void setSurveyInterval(Duration interval) {
    this.surveyInterval = interval;
  }

  /** The clock of the surveys, in nanoseconds. */
  @VisibleForTesting
  void setClock(java.util.function.LongSupplier clock) {
    this.clock = clock;
  }

  /**
   * Names the files written with the tag of the committer's sink ({@link OwnedFileNames}), so that
   * the committer can tell the orphans among them; unset, Iceberg's random names.
   */
  void setSinkTag(String tag) {
    this.sinkTag = tag;
  }

  /**
   * Tags the contributions with {@code table}, for a committer that commits several tables ({@link
   * ChangeCommittable#forTable}); unset, they are untagged, for the committer of this table alone.
   */
  void setCommittedAs(String table) {
    this.committedAs = table;
  }

  private void emit(ChangeCommittable committable) {
    output.collect(new StreamRecord<>(committable.forTable(committedAs)));
  }

  /** How many data files compaction copied from the rows held in memory. */
  @VisibleForTesting
  long dataFilesCompactedFromMemory() {
    return compaction.dataFilesCompactedFromMemory();
  }

  /** See {@link WriterCompaction#tableSurveys}. */
  long tableSurveys() {
    return compaction.tableSurveys();
  }

  /** See {@link WriterCompaction#readsAheadUsed}. */
  long readsAheadUsed() {
    return compaction.readsAheadUsed();
  }

  /** See {@link WriterCompaction#refreshes}. */
  long compactionRefreshes() {
    return compaction.refreshes();
  }

  /**
   * The part of the operator's keys, state and metrics that is this table's, in an operator of
   * several tables; before the state is initialized.
   */
  void setScope(TableScope scope) {
    this.scope = scope;
    dedup.setScope(scope);
  }

  String committedAs() {
    return committedAs;
  }

  /** Whether the table's changes are keyed by primary key (not by partition). */
  boolean keyedByPrimaryKey() {
    return keySelector instanceof RowKeySelector;
  }

  /** How the table's changes are hashed by partition; null where they are by primary key. */
  PartitionedKeySelector partitioner() {
    return keySelector instanceof PartitionedKeySelector partitioned ? partitioned : null;
  }

  /** The id of the partition spec the keys are hashed by; null where by primary key. */
  Integer hashedBySpecId() {
    return partitioner() == null ? null : partitioner().specId();
  }

  void initializeState(
      StateInitializationContext context,
      AbstractStreamOperator<ChangeCommittable> host,
      Output<StreamRecord<ChangeCommittable>> output)
      throws Exception {
    this.host = host;
    this.output = output;
    this.metrics = scope.metrics(host.getMetricGroup());
    int subtask = host.getRuntimeContext().getTaskInfo().getIndexOfThisSubtask();
    int parallelism = host.getRuntimeContext().getTaskInfo().getNumberOfParallelSubtasks();
    state = WriterState.register(context.getOperatorStateStore(), scope, subtask, parallelism);
    boolean restored = context.isRestored() && state.restored();
    if (context.isRestored() && !restored) {
      dedup.setStartsWithoutState();
    }
    dedup.initializeState(context, host, output, this);
    tableLoader.open();
    table =
        io.icebergcdc.commit.ReplacedTableException.unlessDropped(
            null, () -> WriterTable.load(tableLoader));
    if (restored) {
      state.checkKeysHashedAsRestored(table.name(), hashedBySpecId());
    }
    if (clock == null) {
      clock = System::nanoTime;
    }
    rowSchemas =
        new RowSchemas(
            schema,
            () -> {
              table = WriterTable.refresh(table, tableLoader);
              return table;
            });
    rowSchemas.startAt(table);
    ChangeSchema current = rowSchemas.current();
    if (current != schema) {
      dedup.useSchema(current, rowSchemas::fit);
    }
    RecentRows recentRows = newRecentRows(current);
    fill = new MissingColumnsFill(current, recentRows);
    compaction =
        new WriterCompaction(
            new CompactionAccess(),
            current.schema(),
            recentRows,
            // By key nothing is compacted: the entries know no rows to move.
            deletesByKey ? 1 : compactionRatio,
            deletesByKey ? 0 : smallFileSize,
            surveyInterval,
            parallelism,
            metrics,
            clock);
    fileEpoch = context.getRestoredCheckpointId().orElse(-1L) + 1;
    dictionary =
        new FileDictionary(
            context.isRestored() ? state.restoredDictionary() : List.of(), parallelism, subtask);
    WriterStart start =
        WriterStart.of(
            context.isRestored(),
            context.getRestoredCheckpointId(),
            state,
            table.currentSnapshot() == null,
            bootstrap && !deletesByKey,
            subtask,
            parallelism);
    if (!deletesByKey) {
      // A writer by key forgets the files a restored position writer would compact: its updates
      // since may have left their keys' entries without locations.
      start.ownFiles().forEach(file -> compaction.restored(file, start.lastCompletedCheckpoint()));
    }
    if (restored) {
      forgetFilesNoLongerInTheTable(start.lastCompletedCheckpoint());
      compaction.surveyOnceAfterStart();
    } else if (table.currentSnapshot() == null) {
      compaction.startsOnAnEmptyTable(table, start.lastCompletedCheckpoint());
    }
    indexComplete = start.indexComplete();
    startedEmpty = start.startedEmpty();
    bootstrapDue = start.bootstrapDue();
    sharedUpTo = start.sharedUpTo();
    lastCompletedCheckpoint = start.lastCompletedCheckpoint();
    unconfirmedRows = new HashMap<>();
  }

  /** See {@link KeyedDedup#forgetKeys}. */
  void forgetKeys(java.util.function.Predicate<Object> stateKeys) throws Exception {
    dedup.forgetKeys(stateKeys);
  }

  /**
   * Drops the dictionary's entries of files that are neither in the table nor this subtask's own
   * (whose commit may be pending): keys still pointing into them are deleted by key when they
   * change. This bounds the dictionary after bootstraps and rescalings. The read is compaction's
   * first, {@code completedCheckpoint} the latest checkpoint known complete.
   */
  private void forgetFilesNoLongerInTheTable(long completedCheckpoint) throws IOException {
    if (dictionary.size() == 0) {
      return;
    }
    LiveFiles live = compaction.read(table, completedCheckpoint);
    int dropped =
        dictionary.retain(location -> live.dataFile(location) != null, compaction.ownFileNames());
    if (dropped > 0) {
      LOG.info(
          "Dropped {} data files that left table {} from the key index's dictionary",
          dropped,
          table.name());
    }
  }

  /** Loads the location of every live row of the keys this subtask owns. */
  private void bootstrapIndex() throws Exception {
    new KeyIndexBootstrap<>(
            rowSchemas.current(),
            keySelector,
            host.getRuntimeContext().getTaskInfo(),
            scope::stateKey)
        .load(
            table,
            this::stored,
            (key, file, position) -> {
              if (loadedWithoutState != null) {
                loadedWithoutState.put(key, AppliedChange.loaded(file, position));
              } else {
                host.setCurrentKey(scope.stateKey(key));
                dedup.loaded(file, position);
              }
            });
  }

  /** Whether {@code key} belongs to this subtask's key groups. */
  private boolean owns(K key) {
    return KeyIndexBootstrap.owns(scope.stateKey(key), host.getRuntimeContext().getTaskInfo());
  }

  @Override
  public AppliedChange unknownKey(Object key) {
    return loadedWithoutState == null ? null : loadedWithoutState.remove(key);
  }

  @Override
  public boolean unknownKeysHaveNoRow() {
    return indexComplete;
  }

  @Override
  public RowKey rowKeyOf(Object key) {
    return key instanceof PartitionedKey partitioned ? partitioned.key() : (RowKey) key;
  }

  void open() throws Exception {
    dedup.open();
    if (bootstrapDue) {
      bootstrapDue = false;
      if (!host.getRuntimeContext().isCheckpointingEnabled()) {
        // No checkpoint will hold the index, and batch execution keeps keyed state only for the
        // key at hand: the loaded index is kept aside and read per key instead.
        loadedWithoutState = new HashMap<>();
      }
      bootstrapIndex();
      compaction.surveyOnceAfterStart();
    }
    files =
        new DeltaFiles(
            () -> table,
            rowSchemas.current(),
            io.icebergcdc.sink.WriteProperties.effective(
                table.name(), table.properties(), writeProperties),
            host.getRuntimeContext().getTaskInfo(),
            host.getRuntimeContext().getJobInfo().getJobId().toString(),
            sinkTag,
            // By key no entry keeps a location: the dictionary would only grow.
            deletesByKey ? location -> location : this::stored,
            new FilesListener(),
            metrics);
    files.setEpoch(fileEpoch);
    if (deletesByKey) {
      files.checkDeletesReachEveryRow();
    }
  }

  void snapshotState(StateSnapshotContext context) throws Exception {
    dedup.snapshotState(context);
    state.snapshot(
        indexComplete,
        startedEmpty,
        sharedUpTo,
        compaction.state(),
        dictionary.entriesToSnapshot(),
        schema.schema().schemaId(),
        hashedBySpecId());
  }

  /**
   * Writes the net changes of the checkpoint interval, for checkpoint {@code checkpointId}; {@link
   * #finishCheckpoint} then completes the checkpoint's files.
   */
  void prepareSnapshotPreBarrier(long checkpointId) throws Exception {
    this.checkpointId = checkpointId;
    compactedAtCheckpoint = false;
    writeCurrentSchema();
    // The files written now go with this checkpoint; what follows its barrier with a later one.
    setFileEpoch(checkpointId);
    dedup.prepareSnapshotPreBarrier(checkpointId);
  }

  /**
   * Whether the compaction of the checkpoint being prepared, its net changes written ({@link
   * #prepareSnapshotPreBarrier}), will read the table: the operator then has it read ahead ({@link
   * #readTableAhead}) with its other tables' before it finishes the checkpoint.
   */
  boolean readsTableAtCheckpoint() {
    return flushed != null && compacts() && compaction.readsTableNow(lastCompletedCheckpoint);
  }

  /** Whether this writer compacts at the checkpoint it prepares. */
  private boolean compacts() {
    // A bounded job without checkpoints keeps no index to move.
    return host.getRuntimeContext().isCheckpointingEnabled() && !checkpointedAfterEnd;
  }

  /** See {@link WriterCompaction#readAhead}: for the checkpoint {@code checkpointId} prepares. */
  void readTableAhead(long checkpointId) {
    compaction.readAhead(checkpointId, lastCompletedCheckpoint);
  }

  /**
   * For a writer that starts while the job runs (a table that appeared meanwhile): the files it
   * writes from now on go with the checkpoint after {@code checkpointId}, the latest whose barrier
   * the operator has passed.
   */
  void startsAfter(long checkpointId) {
    setFileEpoch(Math.max(fileEpoch, checkpointId + 1));
  }

  private void setFileEpoch(long epoch) {
    fileEpoch = epoch;
    if (files != null) {
      files.setEpoch(epoch);
    }
  }

  void endInput() throws Exception {
    this.checkpointId = SnapshotSummaryKeys.END_OF_INPUT_CHECKPOINT_ID;
    inputEnded = true;
    writeCurrentSchema();
    dedup.endInput();
    handOnFlushed();
  }

  void notifyCheckpointComplete(long checkpointId) {
    lastCompletedCheckpoint = Math.max(lastCompletedCheckpoint, checkpointId);
    compaction.checkpointComplete(checkpointId);
    // Their files are in the committer's checkpoints: committed, each in a snapshot of its own.
    if (!unconfirmedRows.isEmpty()) {
      unconfirmedRows.values().removeIf(row -> row.checkpoint() <= checkpointId);
    }
  }

  /** See {@link KeyedDedup#writeIndex}. */
  void writeIndex(
      int first,
      int count,
      KeyedDedup.KeyGroupStart start,
      org.apache.flink.core.memory.DataOutputView out)
      throws Exception {
    dedup.writeIndex(first, count, start, out);
  }

  /** See {@link KeyedDedup#indexSize}. */
  long indexSize() {
    return dedup.indexSize();
  }

  /** See {@link KeyedDedup#indexKeptBytes}. */
  long indexKeptBytes() {
    return dedup.indexKeptBytes();
  }

  /** See {@link KeyedDedup#indexKeptWrites}. */
  long indexKeptWrites() {
    return dedup.indexKeptWrites();
  }

  /** See {@link KeyedDedup#readIndex}. */
  void readIndex(int keyGroup, org.apache.flink.core.memory.DataInputView in) throws Exception {
    dedup.readIndex(keyGroup, in);
  }

  /** See {@link KeyedDedup#indexRestored}. */
  void indexRestored() throws Exception {
    dedup.indexRestored();
  }

  /** Takes a change of the key in context, one of this table's. */
  void processElement(ChangeEvent change) throws Exception {
    if (change.operation() == io.icebergcdc.cdc.Operation.TRUNCATE) {
      // One of the copies of a truncate, one for each key group: keyed by no key of the table.
      dedup.truncate(change);
      return;
    }
    ChangeSchema before = rowSchemas.current();
    ChangeEvent fitted = rowSchemas.fit(change);
    if (rowSchemas.current() != before) {
      tookNewSchema();
    }
    dedup.processElement(fitted);
  }

  /** The changes showed a newer schema of the table, now {@link RowSchemas#current()}. */
  private void tookNewSchema() {
    dedup.useSchema(rowSchemas.current(), rowSchemas::fit);
  }

  /**
   * Writes the rows of the newest schema the changes have shown, before the dedup hands on the net
   * changes of a checkpoint (all of which {@link #apply} gives that schema): the data files open
   * are completed, and the rows held for compaction and fills, of the schema before, dropped.
   */
  private void writeCurrentSchema() throws java.io.IOException {
    ChangeSchema current = rowSchemas.current();
    if (files == null || files.schema() == current) {
      return;
    }
    files.useSchema(table, current);
    if (deletesByKey) {
      files.checkDeletesReachEveryRow();
    }
    RecentRows recentRows = newRecentRows(current);
    fill.useSchema(current, recentRows, rowSchemas::fit);
    compaction.useSchema(current.schema(), recentRows);
  }

  /**
   * Holds the rows of {@code current} written from now on, within the writer's budget, in place of
   * those it held (of the schema before), which it forgets.
   */
  private RecentRows newRecentRows(ChangeSchema current) {
    if (recentRows != null) {
      recentRows.forgetAll();
    }
    if (recentRowsBudget == null) {
      recentRowsBudget = new RecentRows.Budget(recentRowsBytes());
    }
    recentRows = new RecentRows(current.rowType(), recentRowsBudget);
    return recentRows;
  }

  /**
   * Holds its recent rows within {@code budget}, which the other tables of its operator share (the
   * files held first, of whichever table, forgotten first), if it holds any, growing the budget to
   * its own size if that is larger: before {@link #initializeState}.
   */
  void shareRecentRows(RecentRows.Budget budget) {
    if (recentRowsBytes() > 0) {
      budget.atLeast(recentRowsBytes());
      recentRowsBudget = budget;
    }
  }

  /** Bytes of the recent rows it holds, for tests. */
  long recentRowsHeld() {
    return recentRows == null ? 0 : recentRows.bytes();
  }

  /** Bytes of recent rows kept for compaction and fills: none where nothing is compacted. */
  private long recentRowsBytes() {
    return !deletesByKey && compactionRatio < 1 ? compactionCacheBytes : 0;
  }

  /** See {@link io.icebergcdc.dedup.DedupOptions#INDEX_MAX_KEYS}. */
  void setIndexMaxKeys(long maxKeys) {
    dedup.setIndexMaxKeys(maxKeys);
  }

  /** See {@link KeyedDedup#setTablePosition}. */
  void setTablePosition(io.icebergcdc.cdc.SourceSequence position) {
    dedup.setTablePosition(position);
  }

  /** See {@link KeyedDedup#setTableTruncatedAt}. */
  void setTableTruncatedAt(io.icebergcdc.cdc.SourceSequence position) {
    dedup.setTableTruncatedAt(position);
  }

  @Override
  public Location apply(ChangeEvent net, AppliedChange prior) throws IOException {
    // A change kept since before the schema changed has that schema's rows; one kept in state
    // (awaiting its row) may show a newer schema than any change since the writer started.
    ChangeSchema before = rowSchemas.current();
    net = rowSchemas.fit(net);
    if (rowSchemas.current() != before) {
      tookNewSchema();
      writeCurrentSchema();
    }
    if (deletesByKey) {
      return applyByKey(net, prior);
    }
    String location = prior == null || prior.file() == null ? null : absolute(prior.file());
    if (!net.missingColumns().isEmpty() && location == null) {
      throw dedup.unfillable(net, "the key index does not know where the key's row is");
    }
    // Before the file stops being tracked as own, as a file that left the table does.
    ChangeEvent filled =
        net.missingColumns().isEmpty() ? net : fill.fromMemory(net, prior.file(), prior.position());
    if (location != null
        && compaction.leftTheTable(prior.file(), location, lastCompletedCheckpoint)) {
      // Another writer replaced the file: the row's copy is elsewhere, and the file may be gone by
      // the commit, which could then not read the key back from it.
      files.deleteByKey(net.keyRow());
    } else if (location != null) {
      files.deletePosition(location, prior.position());
      compaction.deleted(prior.file(), prior.position());
    } else if (prior == null ? !indexComplete : !prior.deleted()) {
      files.deleteByKey(net.keyRow());
    }
    if (!net.missingColumns().isEmpty()) {
      if (filled == null) {
        // Written once the file is read, before the checkpoint's files are completed.
        fill.defer(keySelector.keyOf(net.key(), net.after()), net, location, prior.position());
        return null;
      }
      net = filled;
    }
    return net.operation().isUpsert() ? files.write(net.after()) : null;
  }

  /**
   * Applies a net change by key ({@link DeleteMode#EQUALITY}): an equality delete on the key where
   * it may have a row, then the new row; no location is kept.
   */
  private Location applyByKey(ChangeEvent net, AppliedChange prior) throws IOException {
    if (!net.missingColumns().isEmpty()) {
      throw dedup.unfillable(
          net,
          "the table is written with equality deletes (sink.delete-mode = EQUALITY), which keep no"
              + " key's row to take them from");
    }
    UnconfirmedRow unconfirmed = unconfirmedRows.remove(net.key());
    if (unconfirmed != null) {
      files.deletePosition(unconfirmed.location().file(), unconfirmed.location().position());
    } else if (prior == null ? !indexComplete : !prior.deleted()) {
      files.deleteKey(net.keyRow());
    }
    if (net.operation().isUpsert()) {
      Location written = files.write(net.after());
      if (host.getRuntimeContext().isCheckpointingEnabled()) {
        // Without checkpoints (batch execution) everything is one commit at the end.
        unconfirmedRows.put(net.key(), new UnconfirmedRow(fileEpoch, written));
      }
    }
    return null;
  }

  /**
   * Writes the updates that waited for their keys' current rows to be read from data files, and
   * points their keys' entries at the rows written.
   */
  private void writeDeferredUpdates() throws Exception {
    fill.fillDeferred(
        table.io(),
        files.schema().schema(),
        (key, change) -> {
          Location written = files.write(change.after());
          @SuppressWarnings("unchecked")
          K owned = (K) key;
          host.setCurrentKey(scope.stateKey(owned));
          AppliedChange entry = dedup.liveEntry();
          if (entry != null) {
            // Without checkpoints (batch execution) no entry is kept for keys but the current one.
            dedup.moved(entry, written.file(), written.position());
          }
        });
  }

  /** What the writer learns of its files: for its compaction, and its count of rows written. */
  private final class FilesListener implements DeltaFiles.Listener {

    @Override
    public void written(String stored, long position, RowData row) {
      if (!deletesByKey) {
        compaction.written(stored, position, row);
      }
      rowsWritten++;
    }

    @Override
    public void completed(String stored, long rows) throws IOException {
      if (deletesByKey) {
        return;
      }
      compaction.completed(
          new OwnDataFile(
              stored,
              rows,
              0,
              checkpointId,
              host.getRuntimeContext().getTaskInfo().getIndexOfThisSubtask(),
              host.getRuntimeContext().getTaskInfo().getNumberOfParallelSubtasks()));
    }
  }

  /**
   * Whether the data file at {@code location} is one that another writer subtask of this job wrote
   * for this sink at the current parallelism: that subtask compacts it.
   */
  private boolean writtenByAnotherSubtask(String location) {
    if (sinkTag == null) {
      return false;
    }
    OwnedFileNames.Owner owner = OwnedFileNames.ownerOf(location);
    return owner != null
        && owner.sink().equals(sinkTag)
        && owner.jobId().equals(host.getRuntimeContext().getJobInfo().getJobId().toString())
        && owner.checkpointId() > sharedUpTo;
  }

  /**
   * The net changes of the checkpoint are written: the rest ({@link #finishCheckpoint}, or {@link
   * #handOnFlushed} at the input's end) follows when the operator calls for it: at once, or where
   * compaction reads the table at this checkpoint once a batch of such tables was read ahead, and
   * in the operator of several in steps, its files closed on another thread.
   */
  @Override
  public void checkpointed(ChangeStats stats) throws Exception {
    if (!fill.isEmpty()) {
      // Before compaction, which may move the rows out of the files read here.
      writeDeferredUpdates();
    }
    flushed = stats;
  }

  /**
   * Finishes the checkpoint being prepared after its net changes were written ({@link
   * #prepareSnapshotPreBarrier}): compacts, completes the checkpoint's files and hands them on,
   * with the statistics of the net changes. The files written from now on go with the next
   * checkpoint.
   */
  void finishCheckpoint() throws Exception {
    handOnFlushed();
    setFileEpoch(checkpointId + 1);
  }

  /**
   * The first step of {@link #finishCheckpoint}, where the operator takes its steps one by one for
   * several tables: compacts, at most once a checkpoint, which writes into the open files.
   */
  void compactAtCheckpoint() throws Exception {
    if (flushed != null && !compactedAtCheckpoint) {
      compactedAtCheckpoint = true;
      if (compacts()) {
        compaction.compact(checkpointId, lastCompletedCheckpoint, rowsWritten);
      }
    }
  }

  /**
   * Whether the checkpoint being finished has data or equality delete files open to complete, after
   * {@link #compactAtCheckpoint}: the operator may close them on another thread ({@link
   * #closeCheckpointFiles}).
   */
  boolean hasCheckpointFilesOpen() {
    return flushed != null && files.hasOpenFiles();
  }

  /**
   * Closes the checkpoint's open data and equality delete files (on object storage, uploads them),
   * the data files on {@code threads}, after {@link #compactAtCheckpoint} and before {@link
   * #finishCheckpoint}, which then records them: on any one thread, while the task thread touches
   * nothing of this table.
   */
  void closeCheckpointFiles(TableThreads threads) throws Exception {
    try {
      files.closeOpenFiles(threads);
    } catch (InterruptedException e) {
      throw e;
    } catch (Exception e) {
      throw new IOException(
          "cannot close the files of table "
              + table.name()
              + " for checkpoint "
              + checkpointId
              + ": "
              + e.getMessage(),
          e);
    }
  }

  /**
   * See {@link #finishCheckpoint}: all but the next checkpoint's epoch (at the input's end too).
   */
  private void handOnFlushed() throws Exception {
    compactAtCheckpoint();
    ChangeStats stats = flushed;
    flushed = null;
    compactedAtCheckpoint = false;
    if (stats == null) {
      return;
    }
    checkpointedAfterEnd = inputEnded;
    DeltaFiles.Taken taken = files.take();
    rowsWritten = 0;
    if (taken.isEmpty() && !compaction.compactedAny()) {
      if (!stats.isEmpty()) {
        emit(ChangeCommittable.ofStats(stats));
      }
      return;
    }
    Map<Integer, PartitionSpec> specs = table.specs();
    emit(
        new ChangeCommittable(
            ContentFileCodec.encodeAll(taken.dataFiles(), specs),
            ContentFileCodec.encodeAll(taken.deletes(), specs),
            List.of(),
            stats,
            Positions.of(taken.positionDeletes()),
            taken.fallbacks(),
            compaction.takeCompacted(),
            compaction.takeMovedRows()));
  }

  void close() throws Exception {
    try {
      if (recentRows != null) {
        // Its rows leave the budget its operator's other tables share.
        recentRows.forgetAll();
      }
      if (files != null) {
        files.abort();
      }
    } finally {
      tableLoader.close();
    }
  }

  /** The form in which the index keeps a data file's location: its name in the dictionary. */
  private String stored(String location) {
    return dictionary.nameOf(location);
  }

  /** The location of a file as the index keeps it, or null if its name's entry was dropped. */
  private String absolute(String stored) {
    return dictionary.locationOf(stored);
  }

  /** The writer as its compaction sees it. */
  private final class CompactionAccess implements WriterCompaction.Writer {

    @Override
    public Table refreshedTable() {
      table = WriterTable.refresh(table, tableLoader);
      return table;
    }

    @Override
    public String locationOf(String stored) {
      return absolute(stored);
    }

    @Override
    public WriterCompaction.Move move(RowData row, String location, long position)
        throws Exception {
      K key = keySelector.keyOf(files.schema().keyOf(row), row, files.schema());
      if (!owns(key)) {
        return WriterCompaction.Move.OTHER_SUBTASK;
      }
      host.setCurrentKey(scope.stateKey(key));
      AppliedChange entry = dedup.liveEntry();
      if (entry == null
          || entry.position() != position
          || entry.file() == null
          || !location.equals(absolute(entry.file()))) {
        return WriterCompaction.Move.NOT_CURRENT;
      }
      Location written = files.write(row);
      dedup.moved(entry, written.file(), written.position());
      files.deletePosition(location, position);
      return WriterCompaction.Move.MOVED;
    }

    @Override
    public boolean writtenByAnotherSubtask(String location) {
      return TableDeltaWriter.this.writtenByAnotherSubtask(location);
    }

    @Override
    public void compacted(String stored) {
      dictionary.remove(stored);
    }
  }
}
