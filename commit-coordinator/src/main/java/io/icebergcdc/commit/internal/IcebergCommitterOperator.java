package io.icebergcdc.commit.internal;

import io.icebergcdc.commit.BoundedWrite;
import io.icebergcdc.commit.ChangeCommittable;
import io.icebergcdc.commit.CommitListener;
import io.icebergcdc.commit.JobClassLoaderRelease;
import io.icebergcdc.commit.MaintenancePolicy;
import io.icebergcdc.commit.Overwrite;
import io.icebergcdc.commit.OwnedFileNames;
import io.icebergcdc.commit.SnapshotSummaryKeys;
import java.time.Duration;
import java.util.List;
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
import org.apache.iceberg.flink.TableLoader;

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
 * <p>Which checkpoints are committed when is the {@link TableCommitter}'s bookkeeping, and each
 * commit the {@link SnapshotCommitter}'s; this operator is Flink's side of them: it hands the
 * committer its input, its checkpoints and their completion, and keeps its state.
 *
 * <p><b>Threading:</b> Flink's task thread only.
 */
public final class IcebergCommitterOperator extends AbstractStreamOperator<Void>
    implements OneInputStreamOperator<ChangeCommittable, Void>, BoundedOneInput {

  private static final long serialVersionUID = 1L;

  /**
   * The checkpoint id recorded for the commit at the end of a job that runs without checkpoints.
   */
  static final long END_OF_INPUT_CHECKPOINT_ID = TableCommitter.END_OF_INPUT_CHECKPOINT_ID;

  /** How long a commit is tried again while the catalog cannot be reached, by default. */
  public static final Duration DEFAULT_CATALOG_RETRY_TIMEOUT = Duration.ofMinutes(5);

  private TableCommitter.Settings settings;

  private transient ListState<byte[]> checkpointedState;
  private transient CommitterStateSerializer stateSerializer;
  private transient TableCommitter committer;

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
    this.settings =
        new TableCommitter.Settings(
            tableLoader,
            listener,
            overwrite,
            bounded,
            catalogRetryTimeout,
            MaintenancePolicy.NONE,
            false,
            false,
            null);
  }

  /**
   * Whether the snapshots record the source position as {@link
   * SnapshotSummaryKeys#SOURCE_SEQUENCE}, for a later job without state to take up from: only for
   * changes read in their source's order (not Kafka's interleaved partitions); and whether that
   * position never goes back below the table's (not for a job told to go back). Off by default.
   */
  public IcebergCommitterOperator sourceSequence(boolean record, boolean neverBack) {
    settings = settings.withSourceSequence(record, neverBack);
    return this;
  }

  /**
   * The tag of this committer's sink in the names of the files its writers write ({@link
   * OwnedFileNames}), which it then names its own files with too: orphans among them are removed as
   * soon as their checkpoint is committed, others only by age. None by default.
   */
  public IcebergCommitterOperator filesNamedFor(String sinkTag) {
    settings = settings.withSinkTag(sinkTag);
    return this;
  }

  /** What the committer does after its commits to keep the table healthy; none by default. */
  public IcebergCommitterOperator maintenance(MaintenancePolicy policy) {
    settings = settings.withMaintenance(policy);
    return this;
  }

  @Override
  public void initializeState(StateInitializationContext context) throws Exception {
    super.initializeState(context);
    JobClassLoaderRelease.registerFor(getRuntimeContext());
    committer =
        new TableCommitter(
            settings,
            getRuntimeContext().getJobInfo().getJobId().toString(),
            getOperatorID().toString(),
            getRuntimeContext().isCheckpointingEnabled(),
            getMetricGroup());
    stateSerializer = new CommitterStateSerializer();
    checkpointedState =
        context
            .getOperatorStateStore()
            .getListState(
                new ListStateDescriptor<>(
                    "iceberg-cdc-committer-state", BytePrimitiveArraySerializer.INSTANCE));
    if (context.isRestored()) {
      long restoredCheckpointId = context.getRestoredCheckpointId().orElse(Long.MAX_VALUE);
      for (byte[] bytes : checkpointedState.get()) {
        committer.restore(
            SimpleVersionedSerialization.readVersionAndDeSerialize(stateSerializer, bytes),
            restoredCheckpointId);
      }
    }
  }

  @Override
  public void processElement(StreamRecord<ChangeCommittable> element) {
    committer.add(element.getValue());
  }

  @Override
  public void snapshotState(StateSnapshotContext context) throws Exception {
    super.snapshotState(context);
    checkpointedState.update(
        List.of(
            SimpleVersionedSerialization.writeVersionAndSerialize(
                stateSerializer, committer.snapshot(context.getCheckpointId()))));
  }

  @Override
  public void notifyCheckpointComplete(long checkpointId) throws Exception {
    super.notifyCheckpointComplete(checkpointId);
    committer.checkpointComplete(checkpointId);
  }

  @Override
  public void endInput() {
    committer.endInput();
  }

  @Override
  public void close() throws Exception {
    super.close();
    if (committer != null) {
      committer.close();
    }
  }
}
