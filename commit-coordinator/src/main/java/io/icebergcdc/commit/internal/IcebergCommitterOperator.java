package io.icebergcdc.commit.internal;

import io.icebergcdc.cdc.ChangeStats;
import io.icebergcdc.commit.BoundedWrite;
import io.icebergcdc.commit.ChangeCommittable;
import io.icebergcdc.commit.CommitException;
import io.icebergcdc.commit.CommitListener;
import io.icebergcdc.commit.JobClassLoaderRelease;
import io.icebergcdc.commit.MaintenancePolicy;
import io.icebergcdc.commit.OrphanFiles;
import io.icebergcdc.commit.Overwrite;
import io.icebergcdc.commit.OwnedFileNames;
import io.icebergcdc.commit.SnapshotSummaryKeys;
import io.icebergcdc.commit.TableRefresh;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
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
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SnapshotUpdate;
import org.apache.iceberg.Table;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.exceptions.CommitStateUnknownException;
import org.apache.iceberg.exceptions.ValidationException;
import org.apache.iceberg.flink.TableLoader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Turns each completed checkpoint into one atomic Iceberg commit.
 *
 * <p><b>Place in the topology:</b> the last operator, with parallelism 1. Its input is the union of
 * the writers' file contributions and the dedup's statistics, all emitted before the checkpoint
 * barrier, so everything received between two snapshots belongs to the later checkpoint (this
 * relies on aligned checkpoints, which the sink requires).
 *
 * <p><b>State:</b> one {@link CommitterState}: the id of the job that wrote it and, per checkpoint
 * snapshotted but not known to be committed, its {@link ChangeCommittable}.
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
 * that validation rejects, a commit whose outcome is unknown, and any other error fail the job with
 * a message naming the table and checkpoint. A catalog that cannot be reached makes the commit wait
 * and try again, for a bounded time ({@link CatalogOutage}); a commit of unknown outcome is then
 * looked up in the snapshot log before it is tried again. After a failure, the restore decides from
 * the snapshot log.
 *
 * <p><b>Threading:</b> Flink's task thread only.
 */
public final class IcebergCommitterOperator extends AbstractStreamOperator<Void>
    implements OneInputStreamOperator<ChangeCommittable, Void>, BoundedOneInput {

  private static final long serialVersionUID = 1L;
  private static final Logger LOG = LoggerFactory.getLogger(IcebergCommitterOperator.class);

  /**
   * The checkpoint id recorded for the commit at the end of a job that runs without checkpoints.
   */
  static final long END_OF_INPUT_CHECKPOINT_ID = Long.MAX_VALUE;

  /** How often a commit with position deletes is rebuilt after a concurrent change conflicts. */
  private static final int MAX_POSITION_DELETE_ATTEMPTS = 5;

  private final TableLoader tableLoader;
  private final CommitListener listener;
  private final Overwrite overwrite;
  private final BoundedWrite bounded;
  private final Duration catalogRetryTimeout;
  private MaintenancePolicy maintenance = MaintenancePolicy.NONE;
  private boolean recordsSourceSequence;
  private boolean positionNeverGoesBack;
  private String sinkTag;

  /** How long a commit is tried again while the catalog cannot be reached, by default. */
  public static final Duration DEFAULT_CATALOG_RETRY_TIMEOUT = Duration.ofMinutes(5);

  private transient Table table;

  /** The table's UUID, which the state names; null for a table that has none. */
  private transient String tableUuid;

  private transient String jobId;
  private transient String operatorId;
  private transient ListState<byte[]> checkpointedState;
  private transient NavigableMap<Long, ChangeCommittable> pending;
  private transient ChangeCommittable current;
  private transient CommitterMetrics metrics;
  private transient CommitterStateSerializer stateSerializer;
  private transient TableMaintainer maintainer;
  private transient CommitSummary summaries;

  /** The jobs whose files this committer answers for: its own, and the one it restored. */
  private transient Set<String> ownJobs;

  /** The checkpoints being committed now, which may be restored ones outside {@link #pending}. */
  private transient NavigableMap<Long, ChangeCommittable> committing;

  /** Whether the input has ended: the last commit is made even without files, for its counts. */
  private transient boolean inputEnded;

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
    this.tableLoader = tableLoader;
    this.bounded = bounded == null ? BoundedWrite.NONE : bounded;
    this.listener = listener == null ? new CommitListener() {} : listener;
    this.overwrite = overwrite;
    this.catalogRetryTimeout = catalogRetryTimeout;
  }

  /**
   * Whether the snapshots record the source position as {@link
   * SnapshotSummaryKeys#SOURCE_SEQUENCE}, for a later job without state to take up from: only for
   * changes read in their source's order (not Kafka's interleaved partitions); and whether that
   * position never goes back below the table's (not for a job told to go back). Off by default.
   */
  public IcebergCommitterOperator sourceSequence(boolean record, boolean neverBack) {
    this.recordsSourceSequence = record;
    this.positionNeverGoesBack = record && neverBack;
    return this;
  }

  /**
   * The tag of this committer's sink in the names of the files its writers write ({@link
   * OwnedFileNames}), which it then names its own files with too: orphans among them are removed as
   * soon as their checkpoint is committed, others only by age. None by default.
   */
  public IcebergCommitterOperator filesNamedFor(String sinkTag) {
    this.sinkTag = sinkTag;
    return this;
  }

  /** What the committer does after its commits to keep the table healthy; none by default. */
  public IcebergCommitterOperator maintenance(MaintenancePolicy policy) {
    this.maintenance = policy == null ? MaintenancePolicy.NONE : policy;
    return this;
  }

  @Override
  public void initializeState(StateInitializationContext context) throws Exception {
    super.initializeState(context);
    JobClassLoaderRelease.registerFor(getRuntimeContext());
    tableLoader.open();
    table = tableLoader.loadTable();
    createFileIoClientHere(table);
    tableUuid = uuidOf(table);
    jobId = getRuntimeContext().getJobInfo().getJobId().toString();
    ownJobs = new HashSet<>();
    ownJobs.add(jobId);
    if (overwrite != null && getRuntimeContext().isCheckpointingEnabled()) {
      throw new IllegalStateException(
          "an overwrite of table "
              + table.name()
              + " commits once at the end of a bounded input, so its job must run without"
              + " checkpoints (batch execution)");
    }
    if (!bounded.isNone() && getRuntimeContext().isCheckpointingEnabled()) {
      throw new IllegalStateException(
          (bounded.writeId() != null
                  ? "a load of table " + table.name() + " with a write id ('" + bounded.writeId()
                  : "an " + bounded.statement() + " of table " + table.name())
              + (bounded.writeId() != null ? "')" : "")
              + " commits once at the end of a bounded input, so its job must run without"
              + " checkpoints (batch execution: 'execution.runtime-mode' = 'batch')");
    }
    operatorId = getOperatorID().toString();
    stateSerializer = new CommitterStateSerializer();
    summaries = new CommitSummary(operatorId, recordsSourceSequence, positionNeverGoesBack);
    maintainer = new TableMaintainer(maintenance, System::currentTimeMillis);
    maintainer.open(table);
    metrics = new CommitterMetrics(getMetricGroup(), maintainer);
    pending = new TreeMap<>();
    current = ChangeCommittable.EMPTY;
    checkpointedState =
        context
            .getOperatorStateStore()
            .getListState(
                new ListStateDescriptor<>(
                    "iceberg-cdc-committer-state", BytePrimitiveArraySerializer.INSTANCE));
    if (context.isRestored()) {
      for (byte[] bytes : checkpointedState.get()) {
        CommitterState restored =
            SimpleVersionedSerialization.readVersionAndDeSerialize(stateSerializer, bytes);
        ownJobs.add(restored.jobId());
        commitRestored(restored);
      }
    }
  }

  private void commitRestored(CommitterState restored) {
    if (restored.tableUuid() != null
        && tableUuid != null
        && !restored.tableUuid().equals(tableUuid)) {
      throw new IllegalStateException(
          "The restored state of the committer of table "
              + table.name()
              + " belongs to another table (UUID "
              + restored.tableUuid()
              + "; this one is "
              + tableUuid
              + "): the table was dropped and created again, or the job now names another table."
              + " The job's state (pending checkpoints "
              + restored.pending().keySet()
              + ", the applied sequence and row location of every key) describes that table;"
              + " start the job without that checkpoint or savepoint, or point it at the table"
              + " it wrote.");
    }
    long maxCommitted = CommitHistory.maxCommittedCheckpointId(table, restored.jobId(), operatorId);
    if (maxCommitted == CommitHistory.NONE
        && !restored.pending().isEmpty()
        && CommitHistory.isTruncated(table)
        && CommitHistory.committedByAnotherJob(table, restored.jobId(), operatorId)) {
      throw new IllegalStateException(
          "The restored state of the committer of table "
              + table.name()
              + " is of job "
              + restored.jobId()
              + ", whose commits are not in what is left of the table's snapshot history (older"
              + " snapshots were expired, and later jobs committed since): whether its pending"
              + " checkpoints "
              + restored.pending().keySet()
              + " were committed cannot be told, and committing them again could apply them"
              + " twice. Restore from a newer checkpoint or savepoint of the job that wrote the"
              + " table last, or start without state.");
    }
    NavigableMap<Long, ChangeCommittable> uncommitted =
        new TreeMap<>(restored.pending().tailMap(maxCommitted, false));
    LOG.info(
        "Restored committer of table {}: job {} committed up to checkpoint {}; committing"
            + " restored checkpoints {} now",
        table.name(),
        restored.jobId(),
        maxCommitted,
        uncommitted.keySet());
    commitUpTo(uncommitted, Long.MAX_VALUE, restored.jobId());
  }

  /**
   * Has the table's file IO create its storage client now, on this task's thread. S3FileIO makes
   * its client on first use and loads the HTTP client's classes through the context class loader of
   * the thread it runs on; Iceberg writes manifests on its shared worker pool, whose threads keep
   * the context class loader of the job that started them, which may be closed by now (another job
   * of the same JVM or TaskManager, when Iceberg is on the cluster's class path).
   */
  private static void createFileIoClientHere(Table table) {
    try {
      table.io().newInputFile(table.location() + "/metadata/version-hint.text");
    } catch (RuntimeException e) {
      LOG.debug("The file IO of table {} made no client up front", table.name(), e);
    }
  }

  private static String uuidOf(Table table) {
    try {
      UUID uuid = table.uuid();
      return uuid == null ? null : uuid.toString();
    } catch (UnsupportedOperationException e) {
      return null;
    }
  }

  @Override
  public void processElement(StreamRecord<ChangeCommittable> element) {
    current = current.plus(element.getValue());
  }

  @Override
  public void snapshotState(StateSnapshotContext context) throws Exception {
    super.snapshotState(context);
    pending.put(context.getCheckpointId(), current);
    current = ChangeCommittable.EMPTY;
    checkpointedState.update(
        List.of(
            SimpleVersionedSerialization.writeVersionAndSerialize(
                stateSerializer, new CommitterState(jobId, tableUuid, pending))));
  }

  @Override
  public void notifyCheckpointComplete(long checkpointId) throws Exception {
    super.notifyCheckpointComplete(checkpointId);
    commitUpTo(pending, checkpointId, jobId);
  }

  @Override
  public void endInput() {
    inputEnded = true;
    if (!getRuntimeContext().isCheckpointingEnabled()) {
      // Without checkpoints there is no restore to protect, and no checkpoint to wait for.
      ChangeCommittable all = current;
      current = ChangeCommittable.EMPTY;
      table = TableRefresh.refresh(table, tableLoader);
      if (CommitHistory.maxCommittedCheckpointId(table, jobId, operatorId)
          == END_OF_INPUT_CHECKPOINT_ID) {
        // A task that failed after its commit runs again in batch execution: the commit is done.
        LOG.info("The end of input of job {} is already committed to {}", jobId, table.name());
        return;
      }
      if (alreadyPublished(all)) {
        return;
      }
      if (overwrite != null) {
        commitOverwrite(all);
        return;
      }
      pending.put(END_OF_INPUT_CHECKPOINT_ID, all);
      commitUpTo(pending, END_OF_INPUT_CHECKPOINT_ID, jobId);
    }
    // With checkpoints, the final checkpoint after the end of input commits what is left.
  }

  /**
   * Whether the load's write id was published by a snapshot of the table already: then this
   * attempt's files are removed and nothing is committed.
   */
  private boolean alreadyPublished(ChangeCommittable all) {
    if (bounded.writeId() == null) {
      return false;
    }
    Snapshot published = WriteIds.publishedBy(table, bounded.writeId());
    if (published == null) {
      return false;
    }
    deleteWrittenFiles(all);
    LOG.warn(
        "The load with write id '{}' was already published to table {} as snapshot {} at {}:"
            + " this attempt commits nothing ({})",
        bounded.writeId(),
        table.name(),
        published.snapshotId(),
        java.time.Instant.ofEpochMilli(published.timestampMillis()),
        all.stats());
    try {
      listener.alreadyPublished(bounded.writeId(), published);
    } catch (Exception e) {
      throw new CommitException(
          "the commit listener failed on the already published load '" + bounded.writeId() + "'",
          e);
    }
    return true;
  }

  /**
   * Commits, in order, the checkpoints of {@code checkpoints} up to {@code upTo}, removing each
   * from the map once it is committed; checkpoints without files are removed and their counts
   * carried into the next one, but for the last after the end of the input, which is committed
   * without files when it has counts.
   */
  private void commitUpTo(
      NavigableMap<Long, ChangeCommittable> checkpoints, long upTo, String commitJobId) {
    ChangeStats carried = ChangeStats.EMPTY;
    committing = checkpoints;
    NavigableMap<Long, ChangeCommittable> due = checkpoints.headMap(upTo, true);
    while (!due.isEmpty()) {
      Map.Entry<Long, ChangeCommittable> entry = due.firstEntry();
      ChangeCommittable committable = entry.getValue();
      boolean countsWouldBeLost =
          inputEnded && due.size() == 1 && !carried.plus(committable.stats()).isEmpty();
      if (committable.hasFiles() || countsWouldBeLost) {
        // At the end of the input there is no next commit to carry the counts: a snapshot
        // without files records them (all changes stale or duplicates, say).
        commit(entry.getKey(), committable, carried, commitJobId);
        carried = ChangeStats.EMPTY;
      } else {
        carried = carried.plus(committable.stats());
      }
      due.remove(entry.getKey());
    }
    if (!carried.isEmpty()) {
      current = current.plus(ChangeCommittable.ofStats(carried));
    }
  }

  /**
   * Commits one checkpoint, waiting out a catalog that cannot be reached ({@link CatalogOutage}):
   * after a failed attempt, the snapshot log says whether the attempt committed after all.
   */
  private void commit(
      long checkpointId, ChangeCommittable committable, ChangeStats carried, String commitJobId) {
    CatalogOutage outage = new CatalogOutage(catalogRetryTimeout);
    while (true) {
      try {
        if (outage.failures() > 0) {
          table = TableRefresh.refresh(table, tableLoader);
          if (CommitHistory.maxCommittedCheckpointId(table, commitJobId, operatorId)
              >= checkpointId) {
            LOG.info(
                "Checkpoint {} was committed to table {} by the attempt whose answer was lost",
                checkpointId,
                table.name());
            return;
          }
        }
        commitWithRebuilds(checkpointId, committable, carried, commitJobId);
        return;
      } catch (RuntimeException e) {
        outage.pauseOrThrow(e);
        LOG.warn(
            "The catalog of table {} cannot be reached to commit checkpoint {} (attempt {});"
                + " trying again for up to {}: {}",
            table.name(),
            checkpointId,
            outage.failures(),
            catalogRetryTimeout,
            e.toString());
      }
    }
  }

  /**
   * Commits one checkpoint, building its position deletes again when a concurrent change of the
   * table conflicts with them.
   */
  private void commitWithRebuilds(
      long checkpointId, ChangeCommittable committable, ChangeStats carried, String commitJobId) {
    ChangeStats stats = committable.stats().plus(carried);
    for (int attempt = 1; ; attempt++) {
      table = TableRefresh.refresh(table, tableLoader);
      Snapshot base = table.currentSnapshot();
      PreparedCommit prepared =
          CommitPreparation.prepare(
              table,
              checkpointId,
              committable,
              base,
              operationIdOf(checkpointId, commitJobId),
              bounded.readSnapshotId() == null);
      try {
        commitPrepared(checkpointId, prepared, stats, base, commitJobId);
        return;
      } catch (CommitException e) {
        if (e.surelyNotCommitted()) {
          prepared.deleteWrittenFiles(table);
        }
        boolean retryable =
            e.getCause() instanceof ValidationException
                && (!committable.positionDeletes().isEmpty()
                    || !committable.compactedDataFiles().isEmpty());
        if (!retryable || attempt >= MAX_POSITION_DELETE_ATTEMPTS) {
          throw e;
        }
        LOG.warn(
            "Checkpoint {} conflicts with a concurrent change of table {} (attempt {}): {};"
                + " writing its position deletes again against the new table state",
            checkpointId,
            table.name(),
            attempt,
            e.getCause().getMessage());
      }
    }
  }

  private void commitPrepared(
      long checkpointId,
      PreparedCommit prepared,
      ChangeStats stats,
      Snapshot base,
      String commitJobId) {
    SnapshotUpdate<?> update = SnapshotUpdates.of(table, prepared, base, overwrite, bounded);
    summaries
        .of(table, checkpointId, commitJobId, stats, base, prepared, overwrite, bounded)
        .forEach(update::set);

    long start = System.nanoTime();
    try {
      listener.beforeCommit(checkpointId);
    } catch (Exception e) {
      throw new CommitException(
          "the commit listener failed before checkpoint "
              + checkpointId
              + " was committed to table "
              + table.name(),
          e,
          true);
    }
    try {
      update.commit();
    } catch (CommitStateUnknownException e) {
      throw new CommitException(
          "the commit of checkpoint "
              + checkpointId
              + " to table "
              + table.name()
              + " may or may not have happened; the job fails, and its restore reads the"
              + " table's snapshot log to decide",
          e);
    } catch (ValidationException e) {
      throw new CommitException(
          "checkpoint "
              + checkpointId
              + " conflicts with a concurrent change of table "
              + table.name()
              + ": "
              + e.getMessage(),
          e,
          true);
    } catch (CommitFailedException e) {
      throw new CommitException(
          "checkpoint "
              + checkpointId
              + " lost the race to commit to table "
              + table.name()
              + " more often than commit.retry.num-retries allows: "
              + e.getMessage(),
          e,
          true);
    } catch (Exception e) {
      throw new CommitException(
          "cannot commit checkpoint " + checkpointId + " to table " + table.name(), e);
    }
    long durationMs = (System.nanoTime() - start) / 1_000_000L;
    Snapshot snapshot = table.currentSnapshot();
    LOG.info(
        "Committed checkpoint {} of job {} to table {} as snapshot {} in {} ms: {} data files,"
            + " {} delete files ({} deletes fell back to equality deletes), {}",
        checkpointId,
        commitJobId,
        table.name(),
        snapshot.snapshotId(),
        durationMs,
        prepared.dataFiles.size(),
        prepared.addedDeletes.size(),
        prepared.fellBack,
        stats);
    metrics.committed(
        checkpointId,
        durationMs,
        prepared.dataFiles.size(),
        prepared.addedDeletes.size(),
        prepared.fellBack,
        stats);
    try {
      listener.afterCommit(checkpointId, snapshot);
    } catch (Exception e) {
      throw new CommitException(
          "the commit listener failed after checkpoint " + checkpointId + " was committed", e);
    }
    maintainer.afterCommit(
        table, new OrphanRemoval.HandedFiles(checkpointId, ownJobs, sinkTag, this::filesToCommit));
  }

  /** The files that checkpoints not committed yet hold, normalized ({@link OrphanFiles}). */
  private Set<String> filesToCommit() {
    Map<Integer, PartitionSpec> specs = table.specs();
    Set<String> files = new HashSet<>();
    List<ChangeCommittable> all = new ArrayList<>(pending.values());
    if (committing != null) {
      all.addAll(committing.values());
    }
    all.add(current);
    for (ChangeCommittable committable : all) {
      committable.addedFileLocations(specs).forEach(l -> files.add(OrphanFiles.normalize(l)));
      committable.referencedDataFiles().forEach(l -> files.add(OrphanFiles.normalize(l)));
      committable.compactedDataFiles().forEach(l -> files.add(OrphanFiles.normalize(l)));
    }
    return files;
  }

  /** The operation id that names the files a commit attempt of checkpoint writes. */
  private String operationIdOf(long checkpointId, String commitJobId) {
    if (sinkTag != null && commitJobId != null && commitJobId.matches("[0-9a-f]{32}")) {
      return OwnedFileNames.operationId(commitJobId, sinkTag, checkpointId);
    }
    return "commit-" + checkpointId + "-" + UUID.randomUUID();
  }

  /**
   * Commits the whole bounded input as one overwrite: rows to insert only; an input without rows
   * fails unless the overwrite allows it, since replacing nothing (or everything) by mistake is the
   * classic failure of a load whose input went missing.
   */
  private void commitOverwrite(ChangeCommittable all) {
    if (!all.deleteFiles().isEmpty() || !all.positionDeletes().isEmpty()) {
      deleteWrittenFiles(all);
      throw new RefusedCommitException(
          "an overwrite of table "
              + table.name()
              + " takes rows to insert, but its input deleted or updated rows; nothing was"
              + " committed");
    }
    if (all.dataFiles().isEmpty()) {
      if (!overwrite.allowEmptyInput()) {
        throw new RefusedCommitException(
            "the overwrite of "
                + overwrite.describe()
                + " of table "
                + table.name()
                + " read no rows, so it would "
                + (overwrite.scope() == Overwrite.Scope.PARTITIONS_IN_INPUT
                    ? "replace no partition and leave the old rows as they are"
                    : overwrite.scope() == Overwrite.Scope.FILTER
                        ? "delete " + overwrite.describe()
                        : "delete every row of " + overwrite.describe())
                + "; nothing was committed. If an empty input is expected, set '"
                + Overwrite.ALLOW_EMPTY_INPUT_OPTION
                + "' = 'true'");
      }
      if (overwrite.scope() == Overwrite.Scope.PARTITIONS_IN_INPUT) {
        LOG.info(
            "The overwrite of table {} read no rows: no partition to replace, nothing committed",
            table.name());
        return;
      }
    }
    commit(END_OF_INPUT_CHECKPOINT_ID, all, ChangeStats.EMPTY, jobId);
  }

  /** Removes the writers' files of a commit that is refused, and so never made. */
  private void deleteWrittenFiles(ChangeCommittable refused) {
    for (String location : refused.addedFileLocations(table.specs())) {
      try {
        table.io().deleteFile(location);
      } catch (RuntimeException e) {
        LOG.warn("Cannot remove the file {} of a refused commit", location, e);
      }
    }
  }

  @Override
  public void close() throws Exception {
    super.close();
    if (tableLoader != null) {
      tableLoader.close();
    }
  }
}
