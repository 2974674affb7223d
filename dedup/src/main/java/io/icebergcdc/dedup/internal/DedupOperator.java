package io.icebergcdc.dedup.internal;

import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.ChangeSchema;
import io.icebergcdc.cdc.ChangeStats;
import io.icebergcdc.dedup.AmbiguousChangePolicy;
import io.icebergcdc.dedup.AppliedChange;
import io.icebergcdc.dedup.Dedup;
import io.icebergcdc.dedup.NetChanges;
import java.time.Duration;
import java.util.function.LongSupplier;
import org.apache.flink.annotation.VisibleForTesting;
import org.apache.flink.runtime.state.StateInitializationContext;
import org.apache.flink.runtime.state.StateSnapshotContext;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.BoundedOneInput;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;

/**
 * Orders and deduplicates the changes of each key (see {@link SequencedChanges}) and emits, once
 * per checkpoint, the net change of every key that changed, for a writer that keeps no state: the
 * append writer of an overwrite.
 *
 * <p><b>Place in the topology:</b> directly after the source (or parser), on a stream keyed by
 * primary key; its output goes to the writers, its {@link Dedup#STATS} side output to the committer
 * and its {@link Dedup#DEAD_LETTERS} side output to the dead-letter sink, if any.
 */
public final class DedupOperator extends AbstractStreamOperator<ChangeEvent>
    implements OneInputStreamOperator<ChangeEvent, ChangeEvent>, BoundedOneInput, NetChanges {

  private static final long serialVersionUID = 1L;

  private final SequencedChanges dedup;

  public DedupOperator(
      ChangeSchema schema, Duration tombstoneTtl, AmbiguousChangePolicy ambiguousChangePolicy) {
    this.dedup = new SequencedChanges(schema, tombstoneTtl, ambiguousChangePolicy);
  }

  /** See {@link io.icebergcdc.dedup.DedupOptions#INDEX_MAX_KEYS}. */
  public void setIndexMaxKeys(long maxKeys) {
    dedup.setIndexMaxKeys(maxKeys);
  }

  /** See {@link SequencedChanges#setTablePosition}. */
  public void setTablePosition(io.icebergcdc.cdc.SourceSequence position) {
    dedup.setTablePosition(position);
  }

  /** Replaces the processing time of the in-memory index's tombstones, for tests. */
  @VisibleForTesting
  void useClock(LongSupplier clock) {
    dedup.useClock(clock);
  }

  @Override
  public void initializeState(StateInitializationContext context) throws Exception {
    super.initializeState(context);
    dedup.initializeState(context, this, output, this);
  }

  @Override
  protected boolean isUsingCustomRawKeyedState() {
    return true;
  }

  @Override
  public void open() throws Exception {
    super.open();
    dedup.open();
  }

  @Override
  public void processElement(StreamRecord<ChangeEvent> element) throws Exception {
    if (element.getValue().operation() == io.icebergcdc.cdc.Operation.TRUNCATE) {
      // The routers refuse a truncate of a table without a key-indexed writer before it gets here.
      throw new IllegalStateException(
          "table "
              + element.getValue().table()
              + " was truncated in the source at "
              + element.getValue().sequence()
              + ", which the dedup before an overwrite's writer cannot apply (it knows only the keys"
              + " the job met)");
    }
    dedup.processElement(element.getValue());
  }

  @Override
  public void prepareSnapshotPreBarrier(long checkpointId) throws Exception {
    super.prepareSnapshotPreBarrier(checkpointId);
    dedup.prepareSnapshotPreBarrier(checkpointId);
  }

  @Override
  public void snapshotState(StateSnapshotContext context) throws Exception {
    super.snapshotState(context);
    dedup.snapshotState(context);
  }

  @Override
  public void endInput() throws Exception {
    dedup.endInput();
  }

  @Override
  public Location apply(ChangeEvent net, AppliedChange prior) {
    if (!net.missingColumns().isEmpty()) {
      throw dedup.unfillable(
          net,
          "the key's current row is known only to the position-delete writer (this is the dedup"
              + " before an overwrite's writer)");
    }
    output.collect(new StreamRecord<>(net));
    return null;
  }

  @Override
  public void checkpointed(ChangeStats stats) {
    if (!stats.isEmpty()) {
      output.collect(Dedup.STATS, new StreamRecord<>(stats));
    }
  }
}
