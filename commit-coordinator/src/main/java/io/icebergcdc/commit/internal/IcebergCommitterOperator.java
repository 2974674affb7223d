package io.icebergcdc.commit.internal;

import io.icebergcdc.commit.BoundedWrite;
import io.icebergcdc.commit.ChangeCommittable;
import io.icebergcdc.commit.CommitListener;
import io.icebergcdc.commit.JobClassLoaderRelease;
import io.icebergcdc.commit.MaintenancePolicy;
import io.icebergcdc.commit.Overwrite;
import io.icebergcdc.commit.OwnedFileNames;
import io.icebergcdc.commit.SnapshotSummaryKeys;
import io.icebergcdc.commit.TableThreads;
import io.icebergcdc.commit.TablesBuiltWith;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.typeutils.base.array.BytePrimitiveArraySerializer;
import org.apache.flink.core.io.SimpleVersionedSerialization;
import org.apache.flink.runtime.state.StateInitializationContext;
import org.apache.flink.runtime.state.StateSnapshotContext;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.BoundedOneInput;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.util.ExceptionUtils;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.flink.CatalogLoader;
import org.apache.iceberg.flink.TableLoader;

/**
 * Turns each completed checkpoint into one atomic Iceberg commit.
 *
 * <p><b>Place in the topology:</b> the last operator, with parallelism 1. Its input is the union of
 * the writers' file contributions and the dedup's statistics, all emitted before the checkpoint
 * barrier, so everything received between two snapshots belongs to the later checkpoint (this
 * relies on aligned checkpoints, which the sink requires).
 *
 * <p>It commits one table, or several ({@link #ofTables}): a job of many tables then has one
 * committer instead of one per table. Each table is committed as the committer of one table would
 * commit it, in a snapshot of its own per checkpoint; the writers tag their contributions with
 * their table's name ({@link ChangeCommittable#table()}). Where asked, and the catalog is a REST
 * catalog, the tables of each checkpoint are committed in one transaction of the catalog instead
 * ({@link TransactionCommitter}): a reader sees all of them change at once, or none.
 *
 * <p><b>State:</b> one {@link CommitterState} per table: the id of the job that wrote it and, per
 * checkpoint snapshotted but not known to be committed, its {@link ChangeCommittable}.
 *
 * <p><b>Invariants:</b> checkpoints are committed in order, each as one snapshot (an append when it
 * has only data files, else a row delta) whose summary records job id, operator id and checkpoint
 * id. A checkpoint with no files is not committed; its counts go into the next commit. On restore,
 * the snapshot log tells which pending checkpoints the restored job already committed: those are
 * dropped, the others are committed at once, under the restored job's id so that a second failure
 * finds them too. So no checkpoint is committed twice and none is lost.
 *
 * <p><b>Failures:</b> Iceberg retries a commit that lost a race with another writer
 * (commit.retry.num-retries), re-validating it against what the other writer committed; a conflict
 * that validation rejects and any other error fail the job with a message naming the table and
 * checkpoint. A catalog that cannot be reached, or a commit of unknown outcome, makes the commit
 * wait and try again, for a bounded time ({@link CatalogOutage}), each time after looking the
 * checkpoint up in the snapshot log; such an attempt fails rather than add its rows to data files
 * that came since, which may be those of the attempt whose answer was lost. After a failure, the
 * restore decides from the snapshot log.
 *
 * <p>Which checkpoints are committed when is the {@link TableCommitter}'s bookkeeping, and each
 * commit the {@link SnapshotCommitter}'s; this operator is Flink's side of them: it hands the
 * committer its input, its checkpoints and their completion, and keeps its state.
 *
 * <p><b>Threading:</b> Flink's task thread; a committer of several tables commits them on threads
 * of its own ({@link TableThreads}, {@link #COMMIT_THREADS} of them), several tables at once, each
 * table on one thread at a time, and the task thread waits until all are done.
 */
public final class IcebergCommitterOperator extends AbstractStreamOperator<Void>
    implements OneInputStreamOperator<ChangeCommittable, Void>, BoundedOneInput {

  private static final long serialVersionUID = 1L;

  private static final org.slf4j.Logger LOG =
      org.slf4j.LoggerFactory.getLogger(IcebergCommitterOperator.class);

  /**
   * The checkpoint id recorded for the commit at the end of a job that runs without checkpoints.
   */
  static final long END_OF_INPUT_CHECKPOINT_ID = TableCommitter.END_OF_INPUT_CHECKPOINT_ID;

  /**
   * How many tables a committer of several commits at once. A commit mostly waits on the catalog
   * and the file system; a job of hundreds of tables committed one after the other took longer than
   * its checkpoint interval. The benchmark of 300 tables ran with this many.
   */
  static final int COMMIT_THREADS = 32;

  /** How long a commit is tried again while the catalog cannot be reached, by default. */
  public static final Duration DEFAULT_CATALOG_RETRY_TIMEOUT = Duration.ofMinutes(5);

  /**
   * How each table is committed, by the name its writers tag their contributions with ({@link
   * ChangeCommittable#table()}); one entry under null for the committer of one table.
   */
  private final Map<String, TableCommitter.Settings> tables;

  /**
   * The catalog of the tables of a committer of several tables, which it knows by their
   * identifiers: the pending checkpoints of a restored table that it no longer commits are
   * committed through it, then forgotten. Null where there is none, and such state is refused.
   */
  private final CatalogLoader formerTables;

  private transient ListState<byte[]> checkpointedState;
  private transient CommitterStateSerializer stateSerializer;
  private transient Map<String, TableCommitter> committers;

  /** Whether the tables of a checkpoint are committed in one transaction of their catalog. */
  private final boolean inOneTransaction;

  /** What commits the tables that appear while the job runs; null where none may. */
  private final NewTables newTables;

  /**
   * The build of this committer ({@link TablesBuiltWith}): a committer that takes the tables that
   * appear takes back the appeared tables of a restored state only from a state of its own build
   * (Flink's restart of the job as it was built); otherwise they are tables taken out of the job.
   */
  private final long builtWith;

  private transient ListState<Long> builtWithState;

  /**
   * This run of the job, drawn when the job is built: a job without checkpoints commits the end of
   * its input once per run, which a task run again after a failure tells by it, while a new run
   * under the same job id commits its own ({@link
   * io.icebergcdc.commit.SnapshotSummaryKeys#RUN_ID}).
   */
  private final String runId = java.util.UUID.randomUUID().toString();

  /** Where the work of each table is done. */
  private transient TableThreads commitThreads;

  /** The catalog's transactions, where the tables of a checkpoint are committed in one. */
  private transient TransactionCommitter transactions;

  public IcebergCommitterOperator(TableLoader tableLoader, CommitListener listener) {
    this(tableLoader, listener, null);
  }

  /**
   * @param overwrite what the job's bounded input replaces, committed once at its end; null for one
   *     commit per checkpoint
   */
  public IcebergCommitterOperator(
      TableLoader tableLoader, CommitListener listener, Overwrite overwrite) {
    this(tableLoader, listener, overwrite, DEFAULT_CATALOG_RETRY_TIMEOUT);
  }

  /**
   * @param catalogRetryTimeout how long a commit is tried again while the catalog cannot be
   *     reached, before the job fails
   */
  public IcebergCommitterOperator(
      TableLoader tableLoader,
      CommitListener listener,
      Overwrite overwrite,
      Duration catalogRetryTimeout) {
    this(tableLoader, listener, overwrite, BoundedWrite.NONE, catalogRetryTimeout);
  }

  /**
   * @param bounded the write id and statement of a bounded write, committed once at the end of its
   *     input
   */
  public IcebergCommitterOperator(
      TableLoader tableLoader,
      CommitListener listener,
      Overwrite overwrite,
      BoundedWrite bounded,
      Duration catalogRetryTimeout) {
    this.tables = new HashMap<>();
    this.formerTables = null;
    this.inOneTransaction = false;
    this.newTables = null;
    this.builtWith = 0;
    tables.put(
        null,
        new TableCommitter.Settings(
            tableLoader,
            listener,
            overwrite,
            bounded,
            catalogRetryTimeout,
            MaintenancePolicy.NONE,
            false,
            false,
            null,
            Map.of()));
  }

  private IcebergCommitterOperator(
      Map<String, TableCommitter.Settings> tables,
      CatalogLoader formerTables,
      boolean inOneTransaction,
      NewTables newTables) {
    this.tables = tables;
    this.formerTables = formerTables;
    this.inOneTransaction = inOneTransaction;
    this.newTables = newTables;
    this.builtWith = TablesBuiltWith.draw();
  }

  /**
   * Builds the committer of one table for a table that appears while the job runs, by the name its
   * writers tag its contributions with (its identifier in the catalog).
   */
  @FunctionalInterface
  public interface NewTables extends java.io.Serializable {
    IcebergCommitterOperator committerOf(String table);
  }

  /**
   * The committer of several tables: each committer of one table given, by the name that the
   * writers of that table tag their contributions with ({@link ChangeCommittable#forTable}). Each
   * table is committed as its committer of one table would commit it, in a snapshot of its own per
   * checkpoint; the tables of a checkpoint are committed several at once ({@link #COMMIT_THREADS}),
   * not atomically.
   */
  public static IcebergCommitterOperator ofTables(Map<String, IcebergCommitterOperator> tables) {
    return ofTables(tables, null);
  }

  /**
   * The committer of several tables, as {@link #ofTables(Map)}, whose names are the tables'
   * identifiers in {@code catalog}: where a restored state holds checkpoints of a table the
   * committer no longer commits (a table taken out of the job), they are committed to it, as far as
   * its snapshot log shows them missing, and then forgotten.
   */
  public static IcebergCommitterOperator ofTables(
      Map<String, IcebergCommitterOperator> tables, CatalogLoader catalog) {
    return ofTables(tables, catalog, false);
  }

  /**
   * The committer of several tables, as {@link #ofTables(Map, CatalogLoader)}; where {@code
   * inOneTransaction}, the tables of each checkpoint are committed in one transaction of {@code
   * catalog}, which must be a REST catalog ({@link TransactionCommitter}): a reader then sees all
   * the tables a checkpoint changed take their new snapshots at once, or none of them.
   */
  public static IcebergCommitterOperator ofTables(
      Map<String, IcebergCommitterOperator> tables,
      CatalogLoader catalog,
      boolean inOneTransaction) {
    return ofTables(tables, catalog, inOneTransaction, null);
  }

  /**
   * The committer of several tables, as {@link #ofTables(Map, CatalogLoader, boolean)}, that
   * commits the tables that appear while the job runs too: the first contribution to a table it
   * does not commit, or a restored state of one, makes it commit that table as {@code newTables}
   * builds its committer; null where none may appear.
   */
  public static IcebergCommitterOperator ofTables(
      Map<String, IcebergCommitterOperator> tables,
      CatalogLoader catalog,
      boolean inOneTransaction,
      NewTables newTables) {
    if (inOneTransaction && catalog == null) {
      throw new IllegalArgumentException(
          "committing the tables in one transaction needs the catalog of the tables");
    }
    if (tables.isEmpty()) {
      throw new IllegalArgumentException("a committer of several tables needs at least one table");
    }
    Map<String, TableCommitter.Settings> settings = new TreeMap<>();
    tables.forEach(
        (name, one) ->
            settings.put(Objects.requireNonNull(name, "table"), one.only().withOwnListener()));
    return new IcebergCommitterOperator(settings, catalog, inOneTransaction, newTables);
  }

  /** The settings of the one table of a committer of one table. */
  private TableCommitter.Settings only() {
    if (tables.size() != 1 || !tables.containsKey(null)) {
      throw new IllegalStateException("not the committer of one table: " + tables.keySet());
    }
    return tables.get(null);
  }

  private IcebergCommitterOperator withOnly(TableCommitter.Settings settings) {
    tables.put(null, settings);
    return this;
  }

  /**
   * Whether the snapshots record the source position as {@link
   * SnapshotSummaryKeys#SOURCE_SEQUENCE}, for a later job without state to take up from: only for
   * changes read in their source's order (not Kafka's interleaved partitions); and whether that
   * position never goes back below the table's (not for a job told to go back). Off by default.
   */
  public IcebergCommitterOperator sourceSequence(boolean record, boolean neverBack) {
    return withOnly(only().withSourceSequence(record, neverBack));
  }

  /**
   * The id of each Kafka topic, by its name, that the table's changes are read from, as the job
   * found it when it was built: recorded beside the offsets ({@link
   * SnapshotSummaryKeys#KAFKA_TOPIC_IDS}), so that a job started later tells a topic deleted and
   * created again under its name from the one whose offsets the table holds. None by default.
   */
  public IcebergCommitterOperator kafkaTopicIds(Map<String, String> ids) {
    return withOnly(only().withKafkaTopicIds(ids));
  }

  /**
   * The tag of this committer's sink in the names of the files its writers write ({@link
   * OwnedFileNames}), which it then names its own files with too: orphans among them are removed as
   * soon as their checkpoint is committed, others only by age. None by default.
   */
  public IcebergCommitterOperator filesNamedFor(String sinkTag) {
    return withOnly(only().withSinkTag(sinkTag));
  }

  /** What the committer does after its commits to keep the table healthy; none by default. */
  public IcebergCommitterOperator maintenance(MaintenancePolicy policy) {
    return withOnly(only().withMaintenance(policy));
  }

  @Override
  public void initializeState(StateInitializationContext context) throws Exception {
    super.initializeState(context);
    JobClassLoaderRelease.registerFor(getRuntimeContext());
    committers = new LinkedHashMap<>();
    for (Map.Entry<String, TableCommitter.Settings> table : tables.entrySet()) {
      // One of the job's own tables, which the job created or found at its start.
      TableCommitter committer =
          io.icebergcdc.commit.ReplacedTableException.unlessDropped(
              table.getKey(),
              () ->
                  new TableCommitter(
                      table.getValue(),
                      getRuntimeContext().getJobInfo().getJobId().toString(),
                      runId,
                      getOperatorID().toString(),
                      getRuntimeContext().isCheckpointingEnabled(),
                      table.getKey() == null
                          ? getMetricGroup()
                          : getMetricGroup().addGroup("table", table.getKey()),
                      // Several tables are committed at once on the commit threads, each of
                      // which reads and writes its commit's manifests itself: Iceberg's worker
                      // pool has a thread per core for the whole JVM, and waits for its tasks by
                      // polling every 10 ms.
                      tables.size() > 1
                          ? org.apache.flink.util.concurrent.Executors.newDirectExecutorService()
                          : null));
      committers.put(table.getKey(), committer);
    }
    stateSerializer = new CommitterStateSerializer();
    checkpointedState =
        context
            .getOperatorStateStore()
            .getListState(
                new ListStateDescriptor<>(
                    "iceberg-cdc-committer-state", BytePrimitiveArraySerializer.INSTANCE));
    commitThreads =
        committers.size() > 1
            ? TableThreads.of(
                Math.min(committers.size(), COMMIT_THREADS),
                "iceberg-cdc-commit-" + getOperatorID())
            : TableThreads.none();
    if (inOneTransaction) {
      transactions =
          new TransactionCommitter(
              formerTables.loadCatalog(),
              getOperatorID().toString(),
              // One value for the job, which every table's settings carry.
              tables.values().iterator().next().catalogRetryTimeout());
      transactions.checkNames(committers, commitThreads);
    }
    boolean sameBuild = false;
    if (newTables != null) {
      builtWithState = context.getOperatorStateStore().getUnionListState(TablesBuiltWith.STATE);
      for (Long restored : builtWithState.get()) {
        sameBuild |= restored == builtWith;
      }
    }
    if (context.isRestored()) {
      long restoredCheckpointId = context.getRestoredCheckpointId().orElse(Long.MAX_VALUE);
      Map<TableCommitter, CommitterState> restored = new LinkedHashMap<>();
      List<TableCommitter> former = new ArrayList<>();
      try {
        for (byte[] bytes : checkpointedState.get()) {
          CommitterState state =
              SimpleVersionedSerialization.readVersionAndDeSerialize(stateSerializer, bytes);
          TableCommitter committer = committers.get(state.table());
          if (committer == null && sameBuild && state.table() != null) {
            // A table that appeared while the job ran, before Flink's restart rebuilt the job as
            // it was built, without it.
            committer = startCommitting(state.table());
          }
          if (committer == null) {
            if (state.pending().values().stream().noneMatch(ChangeCommittable::hasFiles)) {
              LOG.info(
                  "Restored checkpoints {} of table {}, which this job no longer writes, hold no"
                      + " files: forgotten",
                  state.pending().keySet(),
                  state.table());
              continue;
            }
            committer = formerTableCommitter(state);
            if (committer == null) {
              continue;
            }
            former.add(committer);
          }
          if (restored.put(committer, state) != null) {
            throw new IllegalStateException(
                "The restored state of the committer holds table "
                    + state.table()
                    + " twice; the state is not of this committer");
          }
        }
        Map<String, TableCommitter> byName = new LinkedHashMap<>();
        restored.forEach((committer, state) -> byName.put(state.table(), committer));
        commit(
            byName,
            committer -> committer.dueOnRestore(restored.get(committer), restoredCheckpointId));
      } finally {
        for (TableCommitter committer : former) {
          committer.close();
        }
      }
      for (TableCommitter committer : former) {
        LOG.info(
            "Restored checkpoints {} of table {}, which this job no longer writes: committed"
                + " those its snapshot log lacked, and forgot the table",
            restored.get(committer).pending().keySet(),
            restored.get(committer).table());
      }
    }
  }

  /**
   * The committer of a table that a restored state holds checkpoints of and this committer no
   * longer commits: one that commits them to the table, as its committer did, and is then closed.
   */
  private TableCommitter formerTableCommitter(CommitterState restored) throws Exception {
    if (restored.table() == null || formerTables == null || committers.containsKey(null)) {
      throw new IllegalStateException(
          "The restored state of the committer holds checkpoints "
              + restored.pending().keySet()
              + " of "
              + (restored.table() == null
                  ? "the one table of a committer of one table"
                  : "table " + restored.table())
              + ", which this committer does not commit (it commits "
              + (committers.containsKey(null) ? "one table" : "tables " + committers.keySet())
              + "): they may not be committed yet. Restore the job that wrote them, or start"
              + " without that checkpoint or savepoint.");
    }
    TableCommitter.Settings like = tables.values().iterator().next();
    TableCommitter committer;
    try {
      committer =
          new TableCommitter(
              like.forFormerTable(
                  TableLoader.fromCatalog(formerTables, TableIdentifier.parse(restored.table()))),
              getRuntimeContext().getJobInfo().getJobId().toString(),
              runId,
              getOperatorID().toString(),
              getRuntimeContext().isCheckpointingEnabled(),
              getMetricGroup().addGroup("former-table", restored.table()),
              org.apache.flink.util.concurrent.Executors.newDirectExecutorService());
    } catch (org.apache.iceberg.exceptions.NoSuchTableException e) {
      LOG.warn(
          "Restored checkpoints {} of table {}, which this job no longer writes, cannot be"
              + " committed: the catalog no longer has the table. Forgotten.",
          restored.pending().keySet(),
          restored.table());
      return null;
    }
    if (io.icebergcdc.commit.ReplacedTableException.isOtherTable(
        restored.tableUuid(), committer.tableUuid())) {
      committer.close();
      LOG.warn(
          "Restored checkpoints {} of table {}, which this job no longer writes, cannot be"
              + " committed: the table was dropped and created again since (UUID {}, now {})."
              + " Forgotten.",
          restored.pending().keySet(),
          restored.table(),
          restored.tableUuid(),
          committer.tableUuid());
      return null;
    }
    return committer;
  }

  /**
   * Starts committing {@code table}, which appeared while the job runs, as {@link #newTables}
   * builds its committer; null if the catalog no longer has the table.
   */
  private TableCommitter startCommitting(String table) throws Exception {
    TableCommitter committer;
    try {
      committer =
          new TableCommitter(
              newTables.committerOf(table).only().withOwnListener(),
              getRuntimeContext().getJobInfo().getJobId().toString(),
              runId,
              getOperatorID().toString(),
              getRuntimeContext().isCheckpointingEnabled(),
              getMetricGroup().addGroup("table", table),
              org.apache.flink.util.concurrent.Executors.newDirectExecutorService());
    } catch (org.apache.iceberg.exceptions.NoSuchTableException e) {
      LOG.warn("Table {}, which appeared while the job ran, is no longer in the catalog", table);
      return null;
    }
    if (transactions != null) {
      try {
        transactions.checkNames(Map.of(table, committer), TableThreads.none());
      } catch (Exception e) {
        committer.close();
        throw e;
      }
    }
    committers.put(table, committer);
    int threads = commitThreads.threads();
    if (committers.size() > threads && threads < COMMIT_THREADS) {
      // More tables than threads to commit them at once, as a committer built with them would
      // have: none commits now (the commits of a checkpoint end before an element is taken), and
      // the threads are made again, twice as many, so that a job that grows to hundreds of tables
      // makes them a few times only.
      commitThreads.close();
      commitThreads =
          TableThreads.of(
              Math.min(COMMIT_THREADS, Math.max(committers.size(), 2 * threads)),
              "iceberg-cdc-commit-" + getOperatorID());
    }
    LOG.info("Committing table {} too, which appeared while the job runs", table);
    return committer;
  }

  /** How many tables' commits run at once. */
  @org.apache.flink.annotation.VisibleForTesting
  int commitThreads() {
    return commitThreads.threads();
  }

  /** The tables this committer commits now, by the names their contributions carry. */
  @org.apache.flink.annotation.VisibleForTesting
  java.util.Set<String> committedTables() {
    return java.util.Set.copyOf(committers.keySet());
  }

  @Override
  public void processElement(StreamRecord<ChangeCommittable> element) throws Exception {
    ChangeCommittable committable = element.getValue();
    TableCommitter committer = committers.get(committable.table());
    if (committer == null && newTables != null && committable.table() != null) {
      committer = startCommitting(committable.table());
      if (committer == null && !committable.hasFiles()) {
        // Counts only (a dead letter of the table's records, say): nothing of the table is lost.
        LOG.warn(
            "Dropped the counts {} of table {}, which appeared while the job ran and is no longer"
                + " in the catalog",
            committable.stats(),
            committable.table());
        return;
      }
      if (committer == null) {
        throw new IllegalStateException(
            "table "
                + committable.table()
                + ", which appeared while the job ran, is no longer in the catalog, but the"
                + " writers wrote files for it: "
                + committable);
      }
    }
    if (committer == null) {
      throw new IllegalStateException(
          "a contribution to "
              + (committable.table() == null ? "no table" : "table " + committable.table())
              + " reached the committer of "
              + (committers.containsKey(null) ? "one table" : "tables " + committers.keySet())
              + ": "
              + committable);
    }
    committer.add(committable.forTable(null));
  }

  @Override
  public void snapshotState(StateSnapshotContext context) throws Exception {
    super.snapshotState(context);
    List<byte[]> states = new ArrayList<>(committers.size());
    for (Map.Entry<String, TableCommitter> table : committers.entrySet()) {
      CommitterState state = table.getValue().snapshot(context.getCheckpointId());
      states.add(
          SimpleVersionedSerialization.writeVersionAndSerialize(
              stateSerializer, table.getKey() == null ? state : state.forTable(table.getKey())));
    }
    checkpointedState.update(states);
    if (builtWithState != null) {
      builtWithState.update(List.of(builtWith));
    }
  }

  @Override
  public void notifyCheckpointComplete(long checkpointId) throws Exception {
    super.notifyCheckpointComplete(checkpointId);
    long start = System.nanoTime();
    commit(committers, committer -> committer.dueAt(checkpointId));
    if (committers.size() > 1) {
      LOG.info(
          "Checkpoint {} of {} tables: their commits took {} ms",
          checkpointId,
          committers.size(),
          (System.nanoTime() - start) / 1_000_000);
    }
  }

  @Override
  public void endInput() throws Exception {
    commit(committers, TableCommitter::dueAtEndOfInput);
  }

  /** What a table owes now, worked out on a commit thread: its due commits, or null for none. */
  @FunctionalInterface
  private interface Owed {
    TableCommitter.Due of(TableCommitter committer) throws Exception;
  }

  /**
   * Makes the commits that {@code tables} (by name, null for the one table of a committer of one)
   * owe, working on the commit threads: each table's on its own, or each checkpoint's of all the
   * tables in one transaction of the catalog.
   */
  private void commit(Map<String, TableCommitter> tables, Owed owed) throws Exception {
    Map<String, TableCommitter.Due> due = new java.util.concurrent.ConcurrentHashMap<>();
    // An outage of the catalog ends the commits of all the tables after the retry timeout, not
    // after it once for each batch of tables the threads take in turn.
    CatalogOutage.Round round = new CatalogOutage.Round();
    commitThreads.forEach(
        tables.entrySet(),
        table -> {
          TableCommitter.Due owes = owed.of(table.getValue());
          if (owes == null) {
            return;
          }
          if (transactions == null) {
            table.getValue().commit(owes, round);
          } else {
            // A transaction names its tables: a committer of several, whose names are not null.
            due.put(table.getKey(), owes);
          }
        });
    if (transactions != null) {
      transactions.commit(new TreeMap<>(due), commitThreads);
    }
  }

  @Override
  public void close() throws Exception {
    Exception failure = null;
    try {
      super.close();
    } catch (Exception e) {
      // The committers below still close: their table loaders hold the catalog they share.
      failure = e;
    }
    if (commitThreads != null) {
      commitThreads.close();
    }
    if (transactions != null) {
      try {
        transactions.close();
      } catch (Exception e) {
        failure = ExceptionUtils.firstOrSuppressed(e, failure);
      }
    }
    if (committers != null) {
      for (TableCommitter committer : committers.values()) {
        try {
          committer.close();
        } catch (Exception e) {
          failure = ExceptionUtils.firstOrSuppressed(e, failure);
        }
      }
    }
    if (failure != null) {
      throw failure;
    }
  }
}
