package io.icebergcdc.commit.internal;

import io.icebergcdc.cdc.ChangeStats;
import io.icebergcdc.commit.BoundedWrite;
import io.icebergcdc.commit.ChangeCommittable;
import io.icebergcdc.commit.CommitException;
import io.icebergcdc.commit.CommitListener;
import io.icebergcdc.commit.Overwrite;
import io.icebergcdc.commit.OwnedFileNames;
import io.icebergcdc.commit.TableRefresh;
import java.time.Duration;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.function.Supplier;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.util.ExceptionUtils;
import org.apache.iceberg.BaseTransaction;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SnapshotUpdate;
import org.apache.iceberg.Table;
import org.apache.iceberg.Transaction;
import org.apache.iceberg.catalog.TableCommit;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.exceptions.CommitStateUnknownException;
import org.apache.iceberg.exceptions.ValidationException;
import org.apache.iceberg.flink.TableLoader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Commits one checkpoint of a table as one Iceberg snapshot: prepares it against the table as it is
 * ({@link CommitPreparation}), names what it did in the summary ({@link CommitSummary}), commits
 * it, waits out a catalog that cannot be reached ({@link CatalogOutage}), builds its position
 * deletes again after a concurrent change conflicts, and then lets the maintenance run. Which
 * checkpoints to commit, and when, is {@link TableCommitter}'s.
 *
 * <p><b>Threading:</b> one thread at a time, as its {@link TableCommitter}.
 */
final class SnapshotCommitter implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(SnapshotCommitter.class);

  /** How often a commit with position deletes is rebuilt after a concurrent change conflicts. */
  private static final int MAX_POSITION_DELETE_ATTEMPTS = 5;

  private final TableLoader tableLoader;
  private final CommitListener listener;
  private final Overwrite overwrite;
  private final BoundedWrite bounded;
  private final Duration catalogRetryTimeout;
  private final String sinkTag;
  private final String operatorId;
  private final String runId;
  private final CommitSummary summaries;

  /** What follows each commit: its log line, metrics, listener and maintenance. */
  private final CommitReports reports;

  private Table table;

  /** The table's UUID; null for a table that has none. */
  private final String tableUuid;

  /** What reads and writes the manifests of a commit; null for Iceberg's worker pool. */
  private final ExecutorService manifestsReadBy;

  /**
   * Opens the table.
   *
   * @param runId what tells this run of the job from others under its id ({@link
   *     SnapshotSummaryKeys#RUN_ID})
   * @param operatorId the id of the committing operator, which the snapshots record
   * @param checkpointing whether the job runs with checkpoints (else it commits once, at the end)
   * @param metricGroup where the commit metrics go
   * @param ownJobs the jobs whose commits the committer answers for, as it learns them
   * @param fileOwners the jobs whose files the committer answers for, as it learns them
   * @param filesToCommit the files of the checkpoints not committed yet
   * @param manifestsReadBy what reads and writes the manifests of a commit; null for Iceberg's
   *     worker pool
   */
  SnapshotCommitter(
      TableCommitter.Settings settings,
      String runId,
      String operatorId,
      boolean checkpointing,
      MetricGroup metricGroup,
      Set<String> ownJobs,
      java.util.Map<String, Long> fileOwners,
      Supplier<Set<String>> filesToCommit,
      ExecutorService manifestsReadBy) {
    this.manifestsReadBy = manifestsReadBy;
    this.tableLoader = settings.tableLoader();
    this.listener = settings.listener();
    this.overwrite = settings.overwrite();
    this.bounded = settings.bounded();
    this.catalogRetryTimeout = settings.catalogRetryTimeout();
    this.sinkTag = settings.sinkTag();
    this.operatorId = operatorId;
    this.runId = runId;
    tableLoader.open();
    // Nothing else closes the loader if this fails: the operator has no committer to close.
    try {
      table = tableLoader.loadTable();
      lastSeen =
          table.currentSnapshot() == null
              ? CommitterState.NO_SNAPSHOT
              : table.currentSnapshot().snapshotId();
      checkExecution(checkpointing);
      createFileIoClientHere(table);
      tableUuid = uuidOf(table);
      summaries =
          new CommitSummary(
              operatorId,
              runId,
              settings.recordsSourceSequence(),
              settings.positionNeverGoesBack(),
              ownJobs,
              settings.kafkaTopicIds());
      TableMaintainer maintainer =
          new TableMaintainer(settings.maintenance(), System::currentTimeMillis);
      maintainer.open(table);
      reports =
          new CommitReports(
              listener,
              new CommitterMetrics(metricGroup, maintainer),
              maintainer,
              sinkTag,
              fileOwners,
              filesToCommit);
    } catch (Throwable failure) {
      closeQuietly(tableLoader, failure);
      throw failure;
    }
  }

  /** The table as last loaded. */
  Table table() {
    return table;
  }

  /**
   * How old the table as last loaded may be for {@link #latestSeen} to name its snapshot without
   * reading the table again: expiry keeps snapshots younger than that (Iceberg's default keeps five
   * days, this project's one hour).
   */
  static Duration seenFreshFor = Duration.ofMinutes(10);

  /** When the table was last loaded, by {@link System#nanoTime()}. */
  private long loadedAt = System.nanoTime();

  /** The snapshot id {@link #latestSeen} gave last. */
  private long lastSeen = CommitterState.NO_SNAPSHOT;

  private void reload() {
    reload(true);
  }

  /**
   * Loads the table again, against the one first loaded: one dropped and created again is not taken
   * for it, even where a refresh let pass (for a checkpoint's state, a maintenance run) made the
   * operations forget the old one. {@code confirmDrop}: a table missing is asked for again over
   * some seconds before it counts as dropped, which a caller that lets the failure pass skips.
   */
  private void reload(boolean confirmDrop) {
    table = TableRefresh.refresh(table, tableLoader, tableUuid, confirmDrop);
    loadedAt = System.nanoTime();
  }

  /**
   * The id of the table's latest snapshot as this committer knows it, for the state of a
   * checkpoint: any commit of that checkpoint comes after it. Where {@code fresh} (the checkpoint
   * has files) and the table was last loaded longer ago than {@link #seenFreshFor} (no commit
   * since, as for a table the job changes rarely), it is read again, so that another engine's
   * expiry of an old snapshot does not make a restore refuse a checkpoint it could tell was not
   * committed. The catalog out of reach keeps the last. {@link CommitterState#NO_SNAPSHOT} where
   * the table has none.
   */
  long latestSeen(boolean fresh) {
    try {
      if (fresh && System.nanoTime() - loadedAt > seenFreshFor.toNanos()) {
        reload(false);
      }
      Snapshot current = table.currentSnapshot();
      lastSeen = current == null ? CommitterState.NO_SNAPSHOT : current.snapshotId();
    } catch (RuntimeException e) {
      LOG.debug(
          "Cannot read table {} again; its state names the snapshot seen last", table.name(), e);
    }
    return lastSeen;
  }

  /** The table as the catalog has it now. */
  Table refreshed() {
    reload();
    return table;
  }

  /** The table's UUID; null for a table that has none. */
  String tableUuid() {
    return tableUuid;
  }

  /** Whether the write is an overwrite, committed once at the end of its input. */
  boolean overwrites() {
    return overwrite != null;
  }

  /**
   * Whether the load's write id was published by a snapshot of the table already: then this
   * attempt's files are removed and nothing is committed.
   */
  boolean alreadyPublished(ChangeCommittable all) {
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
   * Commits one checkpoint, waiting out a catalog that cannot be reached ({@link CatalogOutage}):
   * after a failed attempt, the snapshot log says whether the attempt committed after all. The
   * position deletes are built again when a concurrent change of the table conflicts with them, but
   * not after a failure: then data files added to the table since it was read fail the attempt
   * instead of being built upon, since they may be the failed attempt's, which a catalog can apply
   * after it answered (a gateway's timeout, say). The commit is told of after the attempts, once: a
   * failure in telling of it (the listener) is no failed commit.
   */
  void commit(
      long checkpointId, ChangeCommittable committable, ChangeStats carried, String commitJobId) {
    commit(checkpointId, committable, carried, commitJobId, null);
  }

  /**
   * Commits one checkpoint, as {@link #commit(long, ChangeCommittable, ChangeStats, String)}, its
   * catalog's outage timed with the other commits of {@code round} (null: on its own).
   */
  void commit(
      long checkpointId,
      ChangeCommittable committable,
      ChangeStats carried,
      String commitJobId,
      CatalogOutage.Round round) {
    CatalogOutage outage = new CatalogOutage(catalogRetryTimeout, round);
    Attempt made;
    while (true) {
      boolean afterFailure = outage.failures() > 0;
      try {
        // After a failure the attempt looks for the checkpoint in the table it builds on: null
        // if it is there.
        made = attempt(checkpointId, committable, carried, commitJobId, false, afterFailure);
        outage.reached();
        break;
      } catch (RuntimeException e) {
        if (afterFailure
            && ExceptionUtils.findThrowable(e, ValidationException.class).isPresent()) {
          // Data files came since the table was looked up: the attempt whose answer was lost may
          // have landed since. If not, another writer's did: the job fails, and its restore looks
          // again.
          if (landed(checkpointId, commitJobId)) {
            outage.reached();
            made = null;
            break;
          }
          throw e;
        }
        outage.pauseOrThrow(e);
        LOG.warn(
            "The catalog of table {} cannot be reached to commit {} (attempt {});"
                + " trying again for up to {}: {}",
            table.name(),
            TableCommitter.describe(checkpointId),
            outage.failures(),
            catalogRetryTimeout,
            e.toString());
      }
    }
    if (made == null) {
      foundCommitted(checkpointId, commitJobId, carried.plus(committable.stats()));
    } else {
      committed(made, table.currentSnapshot(), made.durationMs, true);
    }
  }

  /**
   * Whether the table's snapshot log, read again now, holds checkpoint {@code checkpointId}: one
   * committed by an attempt whose answer was lost.
   */
  private boolean landed(long checkpointId, String commitJobId) {
    reload();
    return landedIn(checkpointId, commitJobId);
  }

  /** Whether the table as read last holds checkpoint {@code checkpointId}; logs it if so. */
  private boolean landedIn(long checkpointId, String commitJobId) {
    if (CommitHistory.maxCommittedCheckpointId(table, commitJobId, operatorId, runId)
        < checkpointId) {
      return false;
    }
    LOG.info(
        "Checkpoint {} was committed to table {} by the attempt whose answer was lost",
        checkpointId,
        table.name());
    return true;
  }

  /**
   * Makes one checkpoint's commit in a transaction of the table, for the catalog to commit with
   * other tables' in one transaction ({@link TransactionCommitter}); then {@link #stagedCommitted}
   * or, where the catalog surely did not commit it, {@link #abandon}. The position deletes are
   * built again when a concurrent change of the table conflicts with them.
   */
  Attempt stage(
      long checkpointId, ChangeCommittable committable, ChangeStats carried, String commitJobId) {
    return attempt(checkpointId, committable, carried, commitJobId, true, false);
  }

  /**
   * The catalog committed {@code staged}, taking {@code durationMs}: tells of the commit as {@link
   * #commit} does, with the snapshot the attempt made. The maintenance that follows runs on the
   * table as the catalog has it now, or not at all while it cannot be reached.
   */
  void stagedCommitted(Attempt staged, long durationMs) {
    Snapshot snapshot =
        ((BaseTransaction) staged.transaction()).currentMetadata().currentSnapshot();
    try {
      reload(false);
    } catch (RuntimeException e) {
      LOG.warn(
          "Table {} could not be read after checkpoint {} was committed; its maintenance waits"
              + " for the next commit: {}",
          table.name(),
          staged.checkpointId(),
          e.toString());
      committed(staged, snapshot, durationMs, false);
      return;
    }
    committed(staged, snapshot, durationMs, true);
  }

  /**
   * The snapshot of checkpoint {@code staged} in the table's snapshot log, read now, committed by
   * the attempt sent to the catalog or by one before it whose answer was lost; null if there is
   * none. Throws what reading the table throws.
   */
  Snapshot landed(Attempt staged) {
    reload();
    return CommitHistory.snapshotOf(
        table, staged.commitJobId(), operatorId, staged.checkpointId(), runId);
  }

  /**
   * Tells of checkpoint {@code checkpointId}, which the table as read last holds, committed by an
   * attempt whose answer was lost (logged when it was found), as {@link #committed} tells of one
   * made now: its metrics (the files counted from the snapshot's summary), the listener, the
   * maintenance.
   */
  private void foundCommitted(long checkpointId, String commitJobId, ChangeStats stats) {
    Snapshot snapshot =
        CommitHistory.snapshotOf(table, commitJobId, operatorId, checkpointId, runId);
    if (snapshot == null) {
      // Found by the log's wider look, outside the current snapshot's ancestry (a rollback).
      LOG.warn(
          "Checkpoint {} of table {} is not in the table's current history; not told of",
          checkpointId,
          table.name());
      return;
    }
    reports.found(table, checkpointId, snapshot, stats);
  }

  /** Tells of {@code staged}, found committed as {@code snapshot} ({@link #landed}). */
  void landedAs(Attempt staged, Snapshot snapshot) {
    committed(staged, snapshot, 0, true);
  }

  /** The catalog surely did not commit {@code staged}: removes the files made for it. */
  void abandon(Attempt staged) {
    staged.prepared.deleteWrittenFiles(table);
  }

  /**
   * A checkpoint's commit made, on the table or in a transaction of it ({@link #stage}).
   *
   * @param transaction the transaction it was made in, not yet committed; null for one made on the
   *     table
   */
  record Attempt(
      long checkpointId,
      String commitJobId,
      PreparedCommit prepared,
      ChangeStats stats,
      Transaction transaction,
      long durationMs) {

    /** What the catalog commits of a staged attempt, for the table {@code id}. */
    TableCommit toCommit(TableIdentifier id) {
      BaseTransaction staged = (BaseTransaction) transaction;
      return TableCommit.create(id, staged.startMetadata(), staged.currentMetadata());
    }

    /** The snapshot a staged attempt adds. */
    long snapshotId() {
      return ((BaseTransaction) transaction).currentMetadata().currentSnapshot().snapshotId();
    }
  }

  /**
   * Makes one checkpoint's commit, building its position deletes again on conflicts (unless {@code
   * nothingAddedSinceBase}); null where {@code nothingAddedSinceBase} and the table already holds
   * the checkpoint.
   */
  private Attempt attempt(
      long checkpointId,
      ChangeCommittable committable,
      ChangeStats carried,
      String commitJobId,
      boolean inTransaction,
      boolean nothingAddedSinceBase) {
    ChangeStats stats = carried.plus(committable.stats());
    for (int attempt = 1; ; attempt++) {
      reload();
      Snapshot base = table.currentSnapshot();
      if (nothingAddedSinceBase && landedIn(checkpointId, commitJobId)) {
        // In the very table state the attempt would build on: a lost commit landing later than
        // this read adds data files after base, which fail the attempt.
        return null;
      }
      PreparedCommit prepared =
          CommitPreparation.prepare(
              table,
              checkpointId,
              committable,
              base,
              operationIdOf(checkpointId, commitJobId),
              bounded.readSnapshotId() == null,
              manifestsReadBy);
      Transaction transaction = inTransaction ? table.newTransaction() : null;
      try {
        long start = System.nanoTime();
        commitUpdate(
            checkpointId,
            transaction == null ? table : transaction.table(),
            prepared,
            stats,
            base,
            commitJobId,
            nothingAddedSinceBase);
        return new Attempt(
            checkpointId,
            commitJobId,
            prepared,
            stats,
            transaction,
            (System.nanoTime() - start) / 1_000_000L);
      } catch (CommitException e) {
        if (e.surelyNotCommitted()) {
          prepared.deleteWrittenFiles(table);
        }
        boolean retryable =
            e.getCause() instanceof ValidationException
                && !nothingAddedSinceBase
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

  /**
   * Commits the prepared attempt's snapshot update to {@code target}: the table, or a transaction
   * of it.
   */
  private void commitUpdate(
      long checkpointId,
      Table target,
      PreparedCommit prepared,
      ChangeStats stats,
      Snapshot base,
      String commitJobId,
      boolean nothingAddedSinceBase) {
    SnapshotUpdate<?> update =
        SnapshotUpdates.of(target, prepared, base, overwrite, bounded, nothingAddedSinceBase);
    if (manifestsReadBy != null) {
      update.scanManifestsWith(manifestsReadBy);
    }
    summaries
        .of(table, checkpointId, commitJobId, stats, base, prepared, overwrite, bounded)
        .forEach(update::set);
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
          "the commit of "
              + TableCommitter.describe(checkpointId)
              + " to table "
              + table.name()
              + " may or may not have happened; the snapshot log decides, read again before"
              + " the commit is tried again, or by the job's restore",
          e);
    } catch (ValidationException e) {
      throw new CommitException(
          TableCommitter.describe(checkpointId)
              + " conflicts with a concurrent change of table "
              + table.name()
              + ": "
              + e.getMessage(),
          e,
          true);
    } catch (CommitFailedException e) {
      throw new CommitException(
          TableCommitter.describe(checkpointId)
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
  }

  /**
   * Tells of a commit made: the log, the metrics, the listener; then the maintenance runs, where
   * {@code maintain}.
   */
  private void committed(Attempt made, Snapshot snapshot, long durationMs, boolean maintain) {
    reports.made(table, made, snapshot, durationMs, maintain);
  }

  /**
   * Runs the maintenance due once the checkpoints up to {@code committedUpTo} are committed: after
   * each commit, and on a restore that finds everything committed already. Never throws.
   */
  void maintainAfter(long committedUpTo) {
    reports.maintainAfter(table, committedUpTo);
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
  void commitOverwrite(ChangeCommittable all, String jobId) {
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
    commit(TableCommitter.END_OF_INPUT_CHECKPOINT_ID, all, ChangeStats.EMPTY, jobId);
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

  /** A bounded write commits once at its end, so it must run without checkpoints. */
  private void checkExecution(boolean checkpointing) {
    if (overwrite != null && checkpointing) {
      throw new IllegalStateException(
          "an overwrite of table "
              + table.name()
              + " commits once at the end of a bounded input, so its job must run without"
              + " checkpoints (batch execution)");
    }
    if (!bounded.isNone() && checkpointing) {
      throw new IllegalStateException(
          (bounded.writeId() != null
                  ? "a load of table " + table.name() + " with a write id ('" + bounded.writeId()
                  : "an " + bounded.statement() + " of table " + table.name())
              + (bounded.writeId() != null ? "')" : "")
              + " commits once at the end of a bounded input, so its job must run without"
              + " checkpoints (batch execution: 'execution.runtime-mode' = 'batch')");
    }
  }

  private static void closeQuietly(TableLoader loader, Throwable failure) {
    try {
      loader.close();
    } catch (Exception e) {
      failure.addSuppressed(e);
    }
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
  public void close() throws Exception {
    tableLoader.close();
  }
}
