package io.icebergcdc.commit.internal;

import io.icebergcdc.cdc.ChangeStats;
import io.icebergcdc.commit.ChangeCommittable;
import io.icebergcdc.commit.CommitListener;
import io.icebergcdc.commit.ContentFileCodec;
import io.icebergcdc.commit.SnapshotSummaryKeys;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
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
import org.apache.iceberg.AppendFiles;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.RowDelta;
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
 * a message naming the table and checkpoint. After a commit of unknown outcome, the restore decides
 * from the snapshot log.
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

  private final TableLoader tableLoader;
  private final CommitListener listener;

  private transient Table table;
  private transient String jobId;
  private transient String operatorId;
  private transient ListState<byte[]> checkpointedState;
  private transient NavigableMap<Long, ChangeCommittable> pending;
  private transient ChangeCommittable current;
  private transient CommitterMetrics metrics;
  private transient CommitterStateSerializer stateSerializer;

  public IcebergCommitterOperator(TableLoader tableLoader, CommitListener listener) {
    this.tableLoader = tableLoader;
    this.listener = listener == null ? new CommitListener() {} : listener;
  }

  @Override
  public void initializeState(StateInitializationContext context) throws Exception {
    super.initializeState(context);
    tableLoader.open();
    table = tableLoader.loadTable();
    jobId = getRuntimeContext().getJobInfo().getJobId().toString();
    operatorId = getOperatorID().toString();
    stateSerializer = new CommitterStateSerializer();
    metrics = new CommitterMetrics(getMetricGroup());
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
        commitRestored(restored);
      }
    }
  }

  private void commitRestored(CommitterState restored) {
    long maxCommitted = CommitHistory.maxCommittedCheckpointId(table, restored.jobId(), operatorId);
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
                stateSerializer, new CommitterState(jobId, pending))));
  }

  @Override
  public void notifyCheckpointComplete(long checkpointId) throws Exception {
    super.notifyCheckpointComplete(checkpointId);
    commitUpTo(pending, checkpointId, jobId);
  }

  @Override
  public void endInput() {
    if (!getRuntimeContext().isCheckpointingEnabled()) {
      // Without checkpoints there is no restore to protect, and no checkpoint to wait for.
      pending.put(END_OF_INPUT_CHECKPOINT_ID, current);
      current = ChangeCommittable.EMPTY;
      commitUpTo(pending, END_OF_INPUT_CHECKPOINT_ID, jobId);
    }
    // With checkpoints, the final checkpoint after the end of input commits what is left.
  }

  /**
   * Commits, in order, the checkpoints of {@code checkpoints} up to {@code upTo}, removing each
   * from the map once it is committed; checkpoints without files are removed and their counts
   * carried into the next one.
   */
  private void commitUpTo(
      NavigableMap<Long, ChangeCommittable> checkpoints, long upTo, String commitJobId) {
    ChangeStats carried = ChangeStats.EMPTY;
    NavigableMap<Long, ChangeCommittable> due = checkpoints.headMap(upTo, true);
    while (!due.isEmpty()) {
      Map.Entry<Long, ChangeCommittable> entry = due.firstEntry();
      ChangeCommittable committable = entry.getValue();
      if (committable.hasFiles()) {
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

  private void commit(
      long checkpointId, ChangeCommittable committable, ChangeStats carried, String commitJobId) {
    table.refresh();
    Map<Integer, PartitionSpec> specs = table.specs();
    List<DataFile> dataFiles = new ArrayList<>();
    for (String json : committable.dataFiles()) {
      dataFiles.add(ContentFileCodec.decodeDataFile(json, specs));
    }
    List<DeleteFile> deleteFiles = new ArrayList<>();
    for (String json : committable.deleteFiles()) {
      deleteFiles.add(ContentFileCodec.decodeDeleteFile(json, specs));
    }
    ChangeStats stats = committable.stats().plus(carried);

    SnapshotUpdate<?> update;
    if (deleteFiles.isEmpty()) {
      AppendFiles append = table.newAppend();
      dataFiles.forEach(append::appendFile);
      update = append;
    } else {
      RowDelta delta = table.newRowDelta();
      dataFiles.forEach(delta::addRows);
      deleteFiles.forEach(delta::addDeletes);
      if (!committable.referencedDataFiles().isEmpty()) {
        delta.validateDataFilesExist(committable.referencedDataFiles());
      }
      delta.validateDeletedFiles();
      update = delta;
    }
    summary(checkpointId, commitJobId, stats).forEach(update::set);

    long start = System.nanoTime();
    try {
      listener.beforeCommit(checkpointId);
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
          e);
    } catch (CommitFailedException e) {
      throw new CommitException(
          "checkpoint "
              + checkpointId
              + " lost the race to commit to table "
              + table.name()
              + " more often than commit.retry.num-retries allows: "
              + e.getMessage(),
          e);
    } catch (Exception e) {
      throw new CommitException(
          "cannot commit checkpoint " + checkpointId + " to table " + table.name(), e);
    }
    long durationMs = (System.nanoTime() - start) / 1_000_000L;
    Snapshot snapshot = table.currentSnapshot();
    LOG.info(
        "Committed checkpoint {} of job {} to table {} as snapshot {} in {} ms: {} data files,"
            + " {} delete files, {}",
        checkpointId,
        commitJobId,
        table.name(),
        snapshot.snapshotId(),
        durationMs,
        dataFiles.size(),
        deleteFiles.size(),
        stats);
    metrics.committed(checkpointId, durationMs, dataFiles.size(), deleteFiles.size(), stats);
    try {
      listener.afterCommit(checkpointId, snapshot);
    } catch (Exception e) {
      throw new CommitException(
          "the commit listener failed after checkpoint " + checkpointId + " was committed", e);
    }
  }

  private Map<String, String> summary(long checkpointId, String commitJobId, ChangeStats stats) {
    Map<String, String> summary = new java.util.LinkedHashMap<>();
    summary.put(SnapshotSummaryKeys.JOB_ID, commitJobId);
    summary.put(SnapshotSummaryKeys.OPERATOR_ID, operatorId);
    summary.put(SnapshotSummaryKeys.CHECKPOINT_ID, Long.toString(checkpointId));
    summary.put(SnapshotSummaryKeys.ROWS_INSERTED, Long.toString(stats.inserted()));
    summary.put(SnapshotSummaryKeys.ROWS_UPDATED, Long.toString(stats.updated()));
    summary.put(SnapshotSummaryKeys.ROWS_DELETED, Long.toString(stats.deleted()));
    summary.put(SnapshotSummaryKeys.STALE_DROPPED, Long.toString(stats.staleDropped()));
    summary.put(SnapshotSummaryKeys.DUPLICATES_DROPPED, Long.toString(stats.duplicatesDropped()));
    summary.put(SnapshotSummaryKeys.DEAD_LETTERED, Long.toString(stats.deadLettered()));
    if (stats.lastSourcePosition() != null) {
      summary.put(SnapshotSummaryKeys.SOURCE_POSITION, stats.lastSourcePosition().toString());
    }
    return summary;
  }

  @Override
  public void close() throws Exception {
    super.close();
    if (tableLoader != null) {
      tableLoader.close();
    }
  }
}
