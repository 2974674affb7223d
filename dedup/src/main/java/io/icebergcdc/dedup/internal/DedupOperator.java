package io.icebergcdc.dedup.internal;

import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.ChangeSchema;
import io.icebergcdc.cdc.ChangeStats;
import io.icebergcdc.dedup.AmbiguousChangePolicy;
import io.icebergcdc.dedup.AppliedChange;
import io.icebergcdc.dedup.Dedup;
import io.icebergcdc.dedup.NetChanges;
import io.icebergcdc.dedup.SchemaFollower;
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
 * per checkpoint, the net change of every key that changed, for writers that keep no state.
 *
 * <p><b>Place in the topology:</b> directly after the source (or parser), on a stream keyed by
 * primary key; its output goes to the writers, its {@link Dedup#STATS} side output to the committer
 * and its {@link Dedup#DEAD_LETTERS} side output to the dead-letter sink, if any.
 */
public final class DedupOperator extends AbstractStreamOperator<ChangeEvent>
    implements OneInputStreamOperator<ChangeEvent, ChangeEvent>, BoundedOneInput, NetChanges {

  private static final long serialVersionUID = 1L;

  private final SequencedChanges dedup;
  private final ChangeSchema schema;

  /** The schemas the table takes while the job runs; null where its changes all have the job's. */
  private final SchemaFollower schemas;

  public DedupOperator(
      ChangeSchema schema, Duration tombstoneTtl, AmbiguousChangePolicy ambiguousChangePolicy) {
    this(schema, tombstoneTtl, ambiguousChangePolicy, null);
  }

  /**
   * @param schemas the schemas the table takes while the job runs, whose rows the net changes are
   *     given; null for a table whose changes all have the job's
   */
  public DedupOperator(
      ChangeSchema schema,
      Duration tombstoneTtl,
      AmbiguousChangePolicy ambiguousChangePolicy,
      SchemaFollower schemas) {
    this.dedup = new SequencedChanges(schema, tombstoneTtl, ambiguousChangePolicy);
    this.schema = schema;
    this.schemas = schemas;
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
    if (schemas != null) {
      ChangeSchema current = schemas.open();
      if (current != schema) {
        dedup.useSchema(current, schemas::fit);
      }
    }
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
    ChangeEvent change = element.getValue();
    if (schemas != null) {
      ChangeSchema before = schemas.current();
      change = schemas.fit(change);
      if (schemas.current() != before) {
        // The changes held since the last checkpoint are given the new schema's rows too.
        dedup.useSchema(schemas.current(), schemas::fit);
      }
    }
    dedup.processElement(change);
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
    // A change kept in state since before the schema changed has that schema's rows.
    output.collect(new StreamRecord<>(schemas == null ? net : schemas.fit(net)));
    return null;
  }

  @Override
  public void close() throws Exception {
    try {
      if (schemas != null) {
        schemas.close();
      }
    } finally {
      super.close();
    }
  }

  @Override
  public void checkpointed(ChangeStats stats) {
    if (!stats.isEmpty()) {
      output.collect(Dedup.STATS, new StreamRecord<>(stats));
    }
  }
}
