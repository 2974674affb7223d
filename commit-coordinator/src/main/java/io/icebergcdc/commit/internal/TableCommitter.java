package io.icebergcdc.commit.internal;

import io.icebergcdc.cdc.ChangeStats;
import io.icebergcdc.commit.BoundedWrite;
import io.icebergcdc.commit.ChangeCommittable;
import io.icebergcdc.commit.CommitListener;
import io.icebergcdc.commit.MaintenancePolicy;
import io.icebergcdc.commit.OrphanFiles;
import io.icebergcdc.commit.Overwrite;
import io.icebergcdc.commit.OwnedFileNames;
import io.icebergcdc.commit.SnapshotSummaryKeys;
import java.io.Serializable;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Set;
import java.util.TreeMap;
import org.apache.flink.metrics.MetricGroup;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.flink.TableLoader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The bookkeeping of one table's commits: what {@link IcebergCommitterOperator} does for the table
 * it writes, apart from Flink's side of it (state, metrics group, lifecycle), which the operator
 * keeps.
 *
 * <p>It collects the writers' contributions of the checkpoint in progress, holds each checkpoint
 * snapshotted but not yet committed, has each completed checkpoint committed as one snapshot (in
 * order, carrying the counts of checkpoints without files into the next), and on restore has the
 * restored checkpoints committed that the table's snapshot log does not show committed. The commits
 * themselves are the {@link SnapshotCommitter}'s. See the operator for the invariants and the
 * failures.
 *
 * <p><b>Threading:</b> one thread at a time: the committer's task thread, or in a committer of
 * several tables one of its commit threads, which the task thread waits for.
 */
final class TableCommitter implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(TableCommitter.class);

  /**
   * The checkpoint id recorded for the commit at the end of a job that runs without checkpoints.
   */
  static final long END_OF_INPUT_CHECKPOINT_ID = SnapshotSummaryKeys.END_OF_INPUT_CHECKPOINT_ID;

  /**
   * {@code checkpointId} for a message: "checkpoint 12", or for the one commit of a bounded input
   * (whose id is {@link #END_OF_INPUT_CHECKPOINT_ID}) "the end of the input".
   */
  static String describe(long checkpointId) {
    return checkpointId == END_OF_INPUT_CHECKPOINT_ID
        ? "the end of the input"
        : "checkpoint " + checkpointId;
  }

  /** The listener of a committer given none. */
  private static final CommitListener NO_LISTENER = new NoListener();

  private static final class NoListener implements CommitListener {
    private static final long serialVersionUID = 1L;
  }

  /**
   * How one table is committed.
   *
   * @param tableLoader the table
   * @param listener hears about every commit
   * @param overwrite what the job's bounded input replaces, committed once at its end; null for one
   *     commit per checkpoint
   * @param bounded the write id and statement of a bounded write, committed once at its end
   * @param catalogRetryTimeout how long a commit is tried again while the catalog cannot be reached
   * @param maintenance what follows the commits to keep the table healthy
   * @param recordsSourceSequence whether the snapshots record the source position ({@link
   *     SnapshotSummaryKeys#SOURCE_SEQUENCE})
   * @param positionNeverGoesBack whether that position never goes back below the table's
   * @param sinkTag the tag of the sink in the names of its files ({@link OwnedFileNames}); null for
   *     none
   * @param kafkaTopicIds the id of each Kafka topic the table's changes are read from, by its name,
   *     recorded with the offsets ({@link SnapshotSummaryKeys#KAFKA_TOPIC_IDS}); empty where
   *     unknown
   */
  record Settings(
      TableLoader tableLoader,
      CommitListener listener,
      Overwrite overwrite,
      BoundedWrite bounded,
      Duration catalogRetryTimeout,
      MaintenancePolicy maintenance,
      boolean recordsSourceSequence,
      boolean positionNeverGoesBack,
      String sinkTag,
      Map<String, String> kafkaTopicIds)
      implements Serializable {

    Settings {
      kafkaTopicIds = kafkaTopicIds == null ? Map.of() : new TreeMap<>(kafkaTopicIds);
      listener = listener == null ? NO_LISTENER : listener;
      bounded = bounded == null ? BoundedWrite.NONE : bounded;
      maintenance = maintenance == null ? MaintenancePolicy.NONE : maintenance;
    }

    Settings withSourceSequence(boolean record, boolean neverBack) {
      return new Settings(
          tableLoader,
          listener,
          overwrite,
          bounded,
          catalogRetryTimeout,
          maintenance,
          record,
          record && neverBack,
          sinkTag,
          kafkaTopicIds);
    }

    /**
     * These settings with a listener of their own, a copy of this one's: a committer of several
     * tables commits them on several threads, and each table hears of its commits as its own
     * committer did.
     */
    Settings withOwnListener() {
      try {
        return new Settings(
            tableLoader,
            org.apache.flink.util.InstantiationUtil.clone(listener),
            overwrite,
            bounded,
            catalogRetryTimeout,
            maintenance,
            recordsSourceSequence,
            positionNeverGoesBack,
            sinkTag,
            kafkaTopicIds);
      } catch (java.io.IOException | ClassNotFoundException e) {
        throw new IllegalArgumentException(
            "the commit listener " + listener + " cannot be copied", e);
      }
    }

    /**
     * These settings for {@code table}, a table the job wrote and no longer writes, to commit what
     * its restored state holds: no listener, no maintenance, and no tag of the files of a sink (its
     * orphans are left to the removal by age).
     */
    Settings forFormerTable(TableLoader table) {
      return new Settings(
          table,
          null,
          null,
          BoundedWrite.NONE,
          catalogRetryTimeout,
          MaintenancePolicy.NONE,
          recordsSourceSequence,
          positionNeverGoesBack,
          null,
          Map.of());
    }

    Settings withSinkTag(String tag) {
      return new Settings(
          tableLoader,
          listener,
          overwrite,
          bounded,
          catalogRetryTimeout,
          maintenance,
          recordsSourceSequence,
          positionNeverGoesBack,
          tag,
          kafkaTopicIds);
    }

    Settings withKafkaTopicIds(Map<String, String> ids) {
      return new Settings(
          tableLoader,
          listener,
          overwrite,
          bounded,
          catalogRetryTimeout,
          maintenance,
          recordsSourceSequence,
          positionNeverGoesBack,
          sinkTag,
          ids);
    }

    Settings withMaintenance(MaintenancePolicy policy) {
      return new Settings(
          tableLoader,
          listener,
          overwrite,
          bounded,
          catalogRetryTimeout,
          policy,
          recordsSourceSequence,
          positionNeverGoesBack,
          sinkTag,
          kafkaTopicIds);
    }
  }

  private final String jobId;
  private final String runId;
  private final String operatorId;
  private final boolean checkpointing;

  /** The commits themselves. */
  private final SnapshotCommitter commits;

  /** The table's UUID, which the state names; null for a table that has none. */
  private final String tableUuid;

  private final NavigableMap<Long, ChangeCommittable> pending = new TreeMap<>();
  private ChangeCommittable current = ChangeCommittable.EMPTY;

  /** The UUID of the table as the committer loaded it; null for a table that has none. */
  String tableUuid() {
    return tableUuid;
  }

  /**
   * The jobs whose commits this committer answers for (the source positions and offsets it
   * carries): its lineage's, oldest first, and its own.
   */
  private final Set<String> ownJobs = new java.util.LinkedHashSet<>();

  /**
   * The jobs whose files this committer answers for (removes when orphaned), each with the last
   * checkpoint whose files it answers for: its own, all of them; and the one whose state it
   * restored, those before the restored checkpoint (that job may still run, its savepoint taken
   * without stopping it, commit the restored checkpoint itself and write files for its later ones);
   * not the older ones of its lineage, one of which might still run.
   */
  private final Map<String, Long> fileOwners = new HashMap<>();

  /** The checkpoints being committed now, which may be restored ones outside {@link #pending}. */
  private NavigableMap<Long, ChangeCommittable> committing;

  /** Whether the input has ended: the last commit is made even without files, for its counts. */
  private boolean inputEnded;

  /**
   * Opens the table.
   *
   * @param jobId the id of the job that commits
   * @param runId what tells this run of the job from others under the same job id: the end of its
   *     input, where the job has no checkpoints, is committed once in this run
   * @param operatorId the id of the committing operator, which the snapshots record
   * @param checkpointing whether the job runs with checkpoints (else it commits once, at the end)
   * @param metricGroup where the commit metrics go
   * @param manifestsReadBy what reads and writes the manifests of a commit; null for Iceberg's
   *     worker pool
   */
  TableCommitter(
      Settings settings,
      String jobId,
      String runId,
      String operatorId,
      boolean checkpointing,
      MetricGroup metricGroup,
      java.util.concurrent.ExecutorService manifestsReadBy) {
    this.jobId = jobId;
    this.runId = runId;
    this.operatorId = operatorId;
    this.checkpointing = checkpointing;
    ownJobs.add(jobId);
    fileOwners.put(jobId, Long.MAX_VALUE);
    commits =
        new SnapshotCommitter(
            settings,
            runId,
            operatorId,
            checkpointing,
            metricGroup,
            ownJobs,
            fileOwners,
            this::filesToCommit,
            manifestsReadBy);
    tableUuid = commits.tableUuid();
  }

  /** Adds a writer's contribution to the checkpoint in progress. */
  void add(ChangeCommittable committable) {
    current = current.plus(committable);
  }

  /** Ends the checkpoint in progress as {@code checkpointId}; returns the state to keep. */
  CommitterState snapshot(long checkpointId) {
    pending.put(checkpointId, current);
    current = ChangeCommittable.EMPTY;
    long seen = commits.latestSeen(pending.values().stream().anyMatch(ChangeCommittable::hasFiles));
    List<String> lineage = new ArrayList<>(ownJobs);
    lineage.remove(jobId);
    return new CommitterState(jobId, tableUuid, pending, null, seen, lineage);
  }

  /** What the completion of checkpoint {@code checkpointId} commits: the checkpoints up to it. */
  Due dueAt(long checkpointId) {
    return new Due(pending, checkpointId, jobId);
  }

  /** Makes the commits that are due, in order. */
  void commit(Due due) {
    commit(due, null);
  }

  /**
   * Makes the commits that are due, in order, a catalog's outage timed with the other tables'
   * commits of {@code round} (null: on their own).
   */
  void commit(Due due, CatalogOutage.Round round) {
    for (Due.Commit commit : due.commits()) {
      commits.commit(
          commit.checkpointId(), commit.committable(), commit.carried(), due.jobId(), round);
      due.made(commit);
    }
    due.finish();
  }

  /** The commits themselves, for a commit of several tables at once. */
  SnapshotCommitter commits() {
    return commits;
  }

  /**
   * What a restore commits: the checkpoints of a restored state that the table's snapshot log does
   * not show committed.
   *
   * @param restoredCheckpointId the checkpoint the job restores from: its own checkpoints come
   *     after it
   */
  Due dueOnRestore(CommitterState restored, long restoredCheckpointId) {
    // Oldest first, before this job's own: the lineage it writes into its state keeps the latest.
    ownJobs.remove(jobId);
    ownJobs.addAll(restored.lineage());
    ownJobs.add(restored.jobId());
    ownJobs.add(jobId);
    // Before the restored checkpoint and every checkpoint pending in the restored state: that
    // job, still running, commits those too, writing files named for them meanwhile.
    long answeredUpTo = restoredCheckpointId - 1;
    if (!restored.pending().isEmpty()) {
      answeredUpTo = Math.min(answeredUpTo, restored.pending().firstKey() - 1);
    }
    fileOwners.putIfAbsent(restored.jobId(), answeredUpTo);
    Table table = commits.table();
    if (io.icebergcdc.commit.ReplacedTableException.isOtherTable(restored.tableUuid(), tableUuid)) {
      throw io.icebergcdc.commit.ReplacedTableException.replaced(
          table.name(),
          restored.tableUuid(),
          tableUuid,
          String.valueOf(restored.pending().keySet()));
    }
    long maxCommitted = CommitHistory.maxCommittedCheckpointId(table, restored.jobId(), operatorId);
    if (maxCommitted == CommitHistory.NONE
        && restored.pending().values().stream().anyMatch(ChangeCommittable::hasFiles)
        && !historyShowsCommitsSince(table, restored)) {
      throw new IllegalStateException(
          "The restored state of the committer of table "
              + table.name()
              + " is of job "
              + restored.jobId()
              + ", whose commits are not in what is left of the table's snapshot history (the"
              + " snapshots since the state was taken were expired, or the table rolled back):"
              + " whether its pending checkpoints "
              + restored.pending().keySet()
              + " were committed cannot be told, and committing them again could apply them"
              + " twice. Restore from a newer checkpoint or savepoint of the job that wrote the"
              + " table last, or start without state.");
    }
    NavigableMap<Long, ChangeCommittable> uncommitted =
        new TreeMap<>(restored.pending().tailMap(maxCommitted, false));
    Snapshot rolledBack =
        uncommitted.values().stream().anyMatch(ChangeCommittable::hasFiles)
            ? CommitHistory.laterCommitOffTheCurrentLine(
                table, restored.jobId(), operatorId, maxCommitted)
            : null;
    if (rolledBack != null) {
      throw new IllegalStateException(
          "The restored state of the committer of table "
              + table.name()
              + " is of job "
              + restored.jobId()
              + ", whose commit of checkpoint "
              + rolledBack.summary().get(SnapshotSummaryKeys.CHECKPOINT_ID)
              + " (snapshot "
              + rolledBack.snapshotId()
              + ") the table still holds but no longer leads to, its latest being that of"
              + " checkpoint "
              + maxCommitted
              + " (the table was rolled back, or its branch replaced): the job's state (the"
              + " applied sequence and row location of every key) holds changes the table lost;"
              + " committing its pending checkpoints "
              + uncommitted.keySet()
              + " on top would leave them out. Start the job without state, or roll the table"
              + " forward again.");
    }
    LOG.info(
        "Restored committer of table {}: job {} committed up to checkpoint {}; committing"
            + " restored checkpoints {} now",
        table.name(),
        restored.jobId(),
        maxCommitted,
        uncommitted.keySet());
    if (uncommitted.isEmpty() && maxCommitted != CommitHistory.NONE) {
      // The attempt that committed last may have failed before the maintenance that follows a
      // commit, leaving the files of its failed attempts behind; a job restored at its end makes
      // no commit after this one, so the maintenance runs now. Up to the restored checkpoint
      // only: a job restored from an older checkpoint than its last commit numbers its own
      // checkpoints, and names its files, from there.
      commits.maintainAfter(Math.min(maxCommitted, restoredCheckpointId));
    }
    return new Due(uncommitted, Long.MAX_VALUE, restored.jobId());
  }

  /**
   * Whether the table's snapshot history still holds every snapshot committed since {@code
   * restored} was taken, so that a pending checkpoint it does not show was not committed: the
   * snapshot the committer had seen then is in the current snapshot's ancestry (or the table had
   * none, and its ancestry reaches its first snapshot). Of a state that does not say what it had
   * seen (version 3 or before): unless the history was cut short and another job committed since.
   */
  private boolean historyShowsCommitsSince(Table table, CommitterState restored) {
    Long seen = restored.seenSnapshotId();
    if (seen == null) {
      return !(CommitHistory.isTruncated(table)
          && CommitHistory.committedByAnotherJob(table, restored.jobId(), operatorId));
    }
    if (table.currentSnapshot() == null) {
      return true;
    }
    return seen == CommitterState.NO_SNAPSHOT
        ? !CommitHistory.isTruncated(table)
        : org.apache.iceberg.util.SnapshotUtil.isAncestorOf(table, seen);
  }

  /**
   * What the end of the input commits through {@link #commit(Due)}; null where there is nothing
   * such: with checkpoints (the final checkpoint commits what is left), or where the end of input
   * was committed or published already, or is an overwrite, which this commits itself.
   */
  Due dueAtEndOfInput() {
    inputEnded = true;
    if (!checkpointing) {
      // Without checkpoints there is no restore to protect, and no checkpoint to wait for.
      ChangeCommittable all = current;
      current = ChangeCommittable.EMPTY;
      Table table = commits.refreshed();
      if (CommitHistory.maxCommittedCheckpointId(table, jobId, operatorId, runId)
          == END_OF_INPUT_CHECKPOINT_ID) {
        // A task that failed after its commit runs again in batch execution: the commit is done.
        LOG.info("The end of input of job {} is already committed to {}", jobId, table.name());
        return null;
      }
      if (commits.alreadyPublished(all)) {
        return null;
      }
      if (commits.overwrites()) {
        commits.commitOverwrite(all, jobId);
        return null;
      }
      pending.put(END_OF_INPUT_CHECKPOINT_ID, all);
      return new Due(pending, END_OF_INPUT_CHECKPOINT_ID, jobId);
    }
    // With checkpoints, the final checkpoint after the end of input commits what is left.
    return null;
  }

  /**
   * The commits a table owes for its checkpoints up to a given one, in order: one for each
   * checkpoint with files, carrying the counts of the checkpoints without files before it; at the
   * end of the input, the last checkpoint is committed without files when it has counts (there is
   * no next commit to carry them). Each made commit is taken off the checkpoints ({@link #made});
   * {@link #finish} then carries the counts of the checkpoints left without a commit into the
   * checkpoint in progress.
   */
  final class Due {

    /** One commit: a checkpoint, its files and counts, and the counts carried into it. */
    record Commit(long checkpointId, ChangeCommittable committable, ChangeStats carried) {}

    private final NavigableMap<Long, ChangeCommittable> checkpoints;
    private final String jobId;
    private final List<Commit> commits = new ArrayList<>();
    private final ChangeStats leftOver;
    private final long upTo;

    /**
     * @param checkpoints the table's checkpoints not committed yet, by id; emptied up to {@code
     *     upTo} as the commits are made
     * @param jobId the job the commits are made under
     */
    private Due(NavigableMap<Long, ChangeCommittable> checkpoints, long upTo, String jobId) {
      this.checkpoints = checkpoints;
      this.jobId = jobId;
      committing = checkpoints;
      ChangeStats carried = ChangeStats.EMPTY;
      NavigableMap<Long, ChangeCommittable> due = checkpoints.headMap(upTo, true);
      int left = due.size();
      for (Map.Entry<Long, ChangeCommittable> entry : due.entrySet()) {
        ChangeCommittable committable = entry.getValue();
        boolean countsWouldBeLost =
            inputEnded && --left == 0 && !carried.plus(committable.stats()).isEmpty();
        if (committable.hasFiles() || countsWouldBeLost) {
          // At the end of the input there is no next commit to carry the counts: a snapshot
          // without files records them (all changes stale or duplicates, say).
          commits.add(new Commit(entry.getKey(), committable, carried));
          carried = ChangeStats.EMPTY;
        } else {
          carried = carried.plus(committable.stats());
        }
      }
      leftOver = carried;
      this.upTo = upTo;
    }

    List<Commit> commits() {
      return commits;
    }

    String jobId() {
      return jobId;
    }

    /** The committer that owes these commits. */
    TableCommitter committer() {
      return TableCommitter.this;
    }

    /** {@code commit} was made: its checkpoint, and those carried into it, are done. */
    void made(Commit commit) {
      checkpoints.headMap(commit.checkpointId(), true).clear();
    }

    /**
     * All commits were made: the checkpoints after the last are done too, their counts carried into
     * the checkpoint in progress.
     */
    void finish() {
      checkpoints.headMap(upTo, true).clear();
      if (!leftOver.isEmpty()) {
        // Earlier than what the checkpoint in progress took so far: added to, not onto it.
        current = ChangeCommittable.ofStats(leftOver).plus(current);
      }
    }
  }

  /** The files that checkpoints not committed yet hold, normalized ({@link OrphanFiles}). */
  private Set<String> filesToCommit() {
    Map<Integer, PartitionSpec> specs = commits.table().specs();
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

  @Override
  public void close() throws Exception {
    commits.close();
  }
}
