package io.icebergcdc.dedup.internal;

import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.ChangeSchema;
import io.icebergcdc.cdc.ChangeStats;
import io.icebergcdc.cdc.DeadLetter;
import io.icebergcdc.cdc.Operation;
import io.icebergcdc.cdc.RowKey;
import io.icebergcdc.cdc.SourceSequence;
import io.icebergcdc.cdc.typeutils.ChangeStatsSerializer;
import io.icebergcdc.cdc.typeutils.DeadLetterSerializer;
import io.icebergcdc.cdc.typeutils.SimpleVersionedTypeInfo;
import io.icebergcdc.dedup.AmbiguousChangeException;
import io.icebergcdc.dedup.AmbiguousChangePolicy;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.flink.api.common.state.StateTtlConfig;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.metrics.Counter;
import org.apache.flink.runtime.state.StateInitializationContext;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.BoundedOneInput;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.util.OutputTag;

/**
 * Orders the changes of each primary key by source sequence, drops stale and duplicate changes, and
 * emits, once per checkpoint, the net change of every key that changed.
 *
 * <p><b>Place in the topology:</b> directly after the source (or parser), on a stream keyed by
 * {@link RowKey}; its output goes to the writers, its {@link #STATS} side output to the committer
 * and its {@link #DEAD_LETTERS} side output to the dead-letter sink, if any.
 *
 * <p><b>State:</b> per key, in keyed state, the {@link AppliedChange} of the last change applied:
 * without expiry while the row exists, and with a processing-time time to live once it is deleted
 * (the tombstone), so that a late change older than the delete cannot bring the row back while the
 * tombstone lives. Between checkpoints the operator also holds, on the heap, the latest accepted
 * change of each key touched since the last checkpoint; that buffer is emitted and emptied in
 * {@link #prepareSnapshotPreBarrier} (and at the end of input), so it is always empty when state is
 * snapshotted and needs no state of its own.
 *
 * <p><b>Invariants:</b> a change is applied only if its sequence is greater than that of every
 * change applied to its key before, whatever the arrival order. A change at the same sequence as
 * the applied one is a duplicate when its fingerprint matches, and ambiguous otherwise. The net
 * change of a key within a checkpoint is its latest change, labelled by comparing with the key's
 * state at the start of the checkpoint: an update if the row existed, an insert otherwise, a delete
 * unless the row was already known to be deleted.
 *
 * <p><b>Threading:</b> Flink's task thread only.
 */
public final class DedupOperator extends AbstractStreamOperator<ChangeEvent>
    implements OneInputStreamOperator<ChangeEvent, ChangeEvent>, BoundedOneInput {

  private static final long serialVersionUID = 1L;

  /** Per-checkpoint statistics of this subtask, for the committer. */
  public static final OutputTag<ChangeStats> STATS =
      new OutputTag<>(
          "change-stats",
          new SimpleVersionedTypeInfo<>(ChangeStats.class, ChangeStatsSerializer::new));

  /** Changes refused as ambiguous under {@link AmbiguousChangePolicy#DEAD_LETTER}. */
  public static final OutputTag<DeadLetter> DEAD_LETTERS =
      new OutputTag<>(
          "dedup-dead-letters",
          new SimpleVersionedTypeInfo<>(DeadLetter.class, DeadLetterSerializer::new));

  private final ChangeSchema schema;
  private final Duration tombstoneTtl;
  private final AmbiguousChangePolicy ambiguousChangePolicy;

  private transient ValueState<AppliedChange> live;
  private transient ValueState<AppliedChange> tombstone;
  private transient Map<RowKey, Pending> pending;
  private transient DedupMetrics metrics;

  private transient long stale;
  private transient long duplicates;
  private transient long deadLettered;
  private transient SourceSequence lastSeen;
  private transient Map<String, Long> offsets;

  public DedupOperator(
      ChangeSchema schema, Duration tombstoneTtl, AmbiguousChangePolicy ambiguousChangePolicy) {
    this.schema = schema;
    this.tombstoneTtl = tombstoneTtl;
    this.ambiguousChangePolicy = ambiguousChangePolicy;
  }

  @Override
  public void initializeState(StateInitializationContext context) throws Exception {
    super.initializeState(context);
    live =
        context
            .getKeyedStateStore()
            .getState(new ValueStateDescriptor<>("applied", AppliedChangeSerializer.INSTANCE));
    ValueStateDescriptor<AppliedChange> tombstoneDescriptor =
        new ValueStateDescriptor<>("tombstone", AppliedChangeSerializer.INSTANCE);
    tombstoneDescriptor.enableTimeToLive(
        StateTtlConfig.newBuilder(tombstoneTtl)
            .setUpdateType(StateTtlConfig.UpdateType.OnCreateAndWrite)
            .setStateVisibility(StateTtlConfig.StateVisibility.NeverReturnExpired)
            // Expired tombstones go when read, in full snapshots and in RocksDB's compactions.
            // The heap backend's incremental cleanup is off: it walks the mostly empty tombstone
            // table on every access, which costs more than all the rest of the dedup.
            .disableCleanupInBackground()
            .cleanupFullSnapshot()
            .cleanupInRocksdbCompactFilter(1000)
            .build());
    tombstone = context.getKeyedStateStore().getState(tombstoneDescriptor);
  }

  @Override
  public void open() throws Exception {
    super.open();
    pending = new LinkedHashMap<>();
    offsets = new HashMap<>();
    metrics = new DedupMetrics(getMetricGroup(), () -> pending.size());
  }

  @Override
  public void processElement(StreamRecord<ChangeEvent> element) throws Exception {
    ChangeEvent event = element.getValue();
    metrics.received.inc();
    if (event.originPartition() != null) {
      offsets.merge(event.originPartition(), event.originOffset(), Math::max);
    }

    AppliedChange applied = live.value();
    AppliedChange last = applied != null ? applied : tombstone.value();
    if (event.sequence().isUnnumberedArrival()) {
      // Ordered by arrival: the next number after the key's last change.
      SourceSequence previous = last == null ? null : last.sequence();
      event =
          event.withSequence(
              SourceSequence.arrival(
                  previous != null && previous.kind() == SourceSequence.Kind.ARRIVAL
                      ? previous.components()[0] + 1
                      : 1));
    } else if (event.sequence().kind() != SourceSequence.Kind.UNORDERED) {
      lastSeen = lastSeen == null ? event.sequence() : event.sequence().max(lastSeen);
    }
    if (last != null) {
      int order = event.sequence().compareTo(last.sequence());
      if (order < 0) {
        stale++;
        metrics.stale.inc();
        return;
      }
      if (order == 0) {
        if (schema.fingerprint(event) == last.fingerprint()) {
          duplicates++;
          metrics.duplicates.inc();
        } else {
          refuseAmbiguous(event);
        }
        return;
      }
    }

    Pending entry = pending.get(event.key());
    if (entry == null) {
      Prior prior = applied != null ? Prior.LIVE : last != null ? Prior.DELETED : Prior.UNKNOWN;
      pending.put(event.key(), new Pending(prior, event));
    } else {
      entry.latest = event;
    }
    AppliedChange now =
        new AppliedChange(
            event.sequence(), schema.fingerprint(event), !event.operation().isUpsert());
    // Invariant: a key has a live entry or a tombstone, never both.
    if (now.deleted()) {
      if (applied != null) {
        live.clear();
      }
      tombstone.update(now);
    } else {
      live.update(now);
      if (applied == null && last != null) {
        tombstone.clear();
      }
    }
  }

  private void refuseAmbiguous(ChangeEvent event) {
    String message =
        "table "
            + event.table()
            + ", key "
            + schema.describeKey(event.keyRow())
            + (event.sequence().kind() == SourceSequence.Kind.UNORDERED
                ? ": two different changes in a bounded input without a sequence to order them"
                    + " (name the column that orders them in 'sequence.field')"
                : ": two different changes at the same source position "
                    + event.sequence()
                    + "; the source gives no order between them");
    if (ambiguousChangePolicy == AmbiguousChangePolicy.FAIL) {
      throw new AmbiguousChangeException(
          message
              + " (set "
              + io.icebergcdc.dedup.DedupOptions.ON_AMBIGUOUS_CHANGE.key()
              + " to DEAD_LETTER to set such changes aside)");
    }
    deadLettered++;
    metrics.deadLettered.inc();
    output.collect(
        DEAD_LETTERS,
        new StreamRecord<>(
            new DeadLetter(
                event.table(),
                "key " + schema.describeKey(event.keyRow()) + " at " + event.sequence(),
                "ambiguous change: a different change was already applied at the same source"
                    + " position",
                event.toString())));
  }

  @Override
  public void prepareSnapshotPreBarrier(long checkpointId) throws Exception {
    super.prepareSnapshotPreBarrier(checkpointId);
    flush();
  }

  @Override
  public void endInput() throws Exception {
    flush();
  }

  private void flush() {
    long inserted = 0;
    long updated = 0;
    long deleted = 0;
    for (Pending entry : pending.values()) {
      ChangeEvent latest = entry.latest;
      Operation net;
      if (latest.operation().isUpsert()) {
        net = entry.prior == Prior.LIVE ? Operation.UPDATE : Operation.INSERT;
      } else if (entry.prior == Prior.DELETED) {
        continue;
      } else {
        net = Operation.DELETE;
      }
      switch (net) {
        case INSERT:
          inserted++;
          break;
        case UPDATE:
          updated++;
          break;
        default:
          deleted++;
      }
      output.collect(new StreamRecord<>(latest.withOperation(net)));
    }
    pending.clear();
    metrics.inserted.inc(inserted);
    metrics.updated.inc(updated);
    metrics.deleted.inc(deleted);
    ChangeStats stats =
        new ChangeStats(
            inserted, updated, deleted, stale, duplicates, deadLettered, lastSeen, offsets);
    offsets.clear();
    if (!stats.isEmpty()) {
      output.collect(STATS, new StreamRecord<>(stats));
    }
    stale = 0;
    duplicates = 0;
    deadLettered = 0;
    lastSeen = null;
  }

  /** What was known of a key when the checkpoint interval first touched it. */
  private enum Prior {
    LIVE,
    DELETED,
    UNKNOWN
  }

  private static final class Pending {
    final Prior prior;
    ChangeEvent latest;

    Pending(Prior prior, ChangeEvent latest) {
      this.prior = prior;
      this.latest = latest;
    }
  }

  /** Counters of the dedup, in the operator's metric group. */
  private static final class DedupMetrics {
    final Counter received;
    final Counter stale;
    final Counter duplicates;
    final Counter deadLettered;
    final Counter inserted;
    final Counter updated;
    final Counter deleted;

    DedupMetrics(
        org.apache.flink.metrics.MetricGroup group,
        org.apache.flink.metrics.Gauge<Integer> buffered) {
      received = group.counter("changesReceived");
      stale = group.counter("staleChangesDropped");
      duplicates = group.counter("duplicateChangesDropped");
      deadLettered = group.counter("ambiguousChangesDeadLettered");
      inserted = group.counter("rowsInserted");
      updated = group.counter("rowsUpdated");
      deleted = group.counter("rowsDeleted");
      group.gauge("keysBufferedSinceCheckpoint", buffered);
    }
  }
}
