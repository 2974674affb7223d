package io.icebergcdc.dedup.internal;

import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.ChangeSchema;
import io.icebergcdc.cdc.ChangeStats;
import io.icebergcdc.cdc.DeadLetter;
import io.icebergcdc.cdc.Operation;
import io.icebergcdc.cdc.SourceSequence;
import io.icebergcdc.cdc.typeutils.ChangeEventTypeInfo;
import io.icebergcdc.dedup.AmbiguousChangeException;
import io.icebergcdc.dedup.AmbiguousChangePolicy;
import io.icebergcdc.dedup.AppliedChange;
import io.icebergcdc.dedup.Dedup;
import io.icebergcdc.dedup.DedupOptions;
import io.icebergcdc.dedup.KeyedDedup;
import io.icebergcdc.dedup.NetChanges;
import io.icebergcdc.dedup.TableScope;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;
import org.apache.flink.annotation.VisibleForTesting;
import org.apache.flink.api.common.state.StateTtlConfig;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.runtime.state.StateInitializationContext;
import org.apache.flink.runtime.state.StateSnapshotContext;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.Output;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;

/**
 * The dedup ({@link KeyedDedup}): orders the changes of each primary key by source sequence, drops
 * stale and duplicate changes, and hands the net change of every key that changed to the hosting
 * operator's {@link NetChanges} once per checkpoint.
 *
 * <p><b>Place in the topology:</b> inside an operator on a stream keyed by primary key (hashed by
 * key or by partition), directly after the source or parser. The operator decides what a net change
 * becomes: {@link DedupOperator} emits it to the writers, the key-indexed writer writes it.
 *
 * <p><b>State:</b> per key, the {@link AppliedChange} of the last change applied (with the location
 * of the key's live row, where the writer keeps one): without expiry while the row exists, and with
 * a processing-time time to live once it is deleted (the tombstone), so that a late change older
 * than the delete cannot bring the row back while the tombstone lives. Where the job checkpoints
 * with the heap state backend, the entries live in a {@link KeyIndex}, written to raw keyed state
 * per key group at every snapshot, so they rescale as keyed state does; otherwise (RocksDB, or
 * batch execution) in keyed state. A restore moves entries from one form into the other when the
 * backend changed (through a savepoint in the canonical format): {@link EntryPlacement} keeps them
 * and moves them, and gives this class the {@link EntryStore} of where they are. Between
 * checkpoints the operator also holds, on the heap, the latest change accepted for each key touched
 * since the last checkpoint, serialized into reused chunks of memory ({@link PendingChanges}: kept
 * as objects, they were copied by every young collection until the checkpoint), and what it knew of
 * the key where the index does not keep that. Keyed state is read once per key and interval and
 * written once, when the buffer is handed on and emptied in {@link #prepareSnapshotPreBarrier} (and
 * at the end of input); so the buffer is always empty when state is snapshotted and needs no state
 * of its own. With the in-memory index, a key's entry also holds its place in the buffer, so that
 * one look-up finds both (a key new to the index gets a slot with nothing applied until then).
 *
 * <p>A truncate of the table ({@link #truncate}, one of its copies for every key group) makes every
 * change before it stale, of any key, and deletes at the next flush every key whose live row came
 * before it ({@link TruncatedAt}).
 *
 * <p><b>Invariants:</b> a change is applied only if its sequence is greater than that of every
 * change applied to its key before, whatever the arrival order. A change at the same sequence as
 * the applied one is a duplicate when its fingerprint matches, and ambiguous otherwise. The net
 * change of a key within a checkpoint is its latest change, labelled by comparing with the key's
 * state at the start of the checkpoint: an update if the row existed, an insert otherwise, a delete
 * unless the row is known not to exist. A key has a live entry or a tombstone, never both.
 *
 * <p><b>Threading:</b> Flink's task thread only.
 */
public final class SequencedChanges implements KeyedDedup {

  private static final long serialVersionUID = 1L;

  private static final org.slf4j.Logger LOG =
      org.slf4j.LoggerFactory.getLogger(SequencedChanges.class);

  private ChangeSchema schema;

  /**
   * The job's schema of the table: the serializers' (of pending changes and of the changes kept
   * until their row comes), and the columns the fingerprints hash, the same whatever schema a
   * change's rows have, since a schema followed while the job runs only adds columns behind them
   * and widens them ({@link #useSchema}).
   */
  private final ChangeSchema jobSchema;

  /**
   * What gives a change read back from pending or kept changes the rows of {@link #schema}; set on
   * the task ({@link #useSchema}), identity until then.
   */
  private transient java.util.function.UnaryOperator<ChangeEvent> fit;

  /** The operator that hosts this dedup: its keyed state, key context, runtime and metrics. */
  private transient AbstractStreamOperator<?> operator;

  private transient Output<? extends StreamRecord<?>> output;
  private transient NetChanges netChanges;
  private final Duration tombstoneTtl;
  private final AmbiguousChangePolicy ambiguousChangePolicy;

  private transient ValueState<AppliedChange> live;
  private transient ValueState<AppliedChange> tombstone;

  /** Where the keys' entries live: the in-memory index or keyed state. */
  private transient EntryPlacement entries;

  private transient LongSupplier clock;

  /** The most keys the in-memory index holds before it moves into keyed state. */
  private long maxIndexKeys = DedupOptions.INDEX_MAX_KEYS.defaultValue();

  /**
   * The source position the table already holds, for a job that starts without state: a change of a
   * key without state at or before it is stale. Null when the job restored its state (which knows
   * each key's own position), or when the table holds no position of a globally ordered source.
   */
  private SourceSequence tablePosition;

  /** The table's latest truncate as its summaries record it; see {@link #setTableTruncatedAt}. */
  private SourceSequence tableTruncatedAt;

  /** The part of the hosting operator's keys, state and metrics that is this table's. */
  private TableScope scope = TableScope.WHOLE;

  /** Whether the table starts without state of its own in a restored job. */
  private boolean startsWithoutState;

  private transient org.apache.flink.api.common.state.ListState<String> tablePositionState;

  /** The latest truncate of the table this subtask took ({@link #truncate}), if any. */
  private transient TruncatedAt truncated;

  /**
   * The keys with changes since the last checkpoint, numbered in the order they came; the entry
   * store finds a key's number.
   */
  private transient PendingChanges pending;

  /** Changes kept until their keys have a row to fill the values they lack from. */
  private transient MissingValues missing;

  private transient boolean endOfInput;
  private transient DedupMetrics metrics;

  private transient long stale;
  private transient long duplicates;
  private transient long deadLettered;
  private transient SourceSequence lastSeen;
  private transient Map<String, Long> offsets;

  public SequencedChanges(
      ChangeSchema schema, Duration tombstoneTtl, AmbiguousChangePolicy ambiguousChangePolicy) {
    this.schema = schema;
    this.jobSchema = schema;
    this.tombstoneTtl = tombstoneTtl;
    this.ambiguousChangePolicy = ambiguousChangePolicy;
  }

  /**
   * The source position the table holds ({@link SourceSequence#isGlobal()} only, others are
   * ignored): in a job that starts without state, a change of a key the state does not know, at or
   * before it, is dropped as stale, so that reading a changelog again from its start changes
   * nothing the table already has.
   */
  @Override
  public void setTablePosition(SourceSequence position) {
    this.tablePosition = position != null && position.isGlobal() ? position : null;
  }

  /**
   * The position of the table's latest truncate that its summaries record, for a job that starts
   * without state: a change before it, but for a snapshot read, is dropped as stale.
   */
  @Override
  public void setTableTruncatedAt(SourceSequence position) {
    this.tableTruncatedAt = position;
  }

  @Override
  public void setStartsWithoutState() {
    this.startsWithoutState = true;
  }

  @Override
  public void forgetKeys(java.util.function.Predicate<Object> stateKeys) throws Exception {
    KeyedStateKeys.forEach(operator, "applied", stateKeys, live::clear);
    KeyedStateKeys.forEach(operator, "tombstone", stateKeys, tombstone::clear);
    missing.forgetKeys(stateKeys);
  }

  @Override
  public void setScope(TableScope scope) {
    this.scope = java.util.Objects.requireNonNull(scope, "scope");
  }

  @Override
  public void initializeState(
      StateInitializationContext context,
      AbstractStreamOperator<?> operator,
      Output<? extends StreamRecord<?>> output,
      NetChanges netChanges)
      throws Exception {
    this.operator = operator;
    this.output = output;
    this.netChanges = netChanges;
    tablePositionState =
        context.getOperatorStateStore().getUnionListState(Dedup.tablePositionDescriptor(scope));
    if (context.isRestored() && !startsWithoutState) {
      // The position the job started from still holds for the keys its state does not know:
      // changes at or before it were dropped without leaving state.
      tablePosition = null;
      for (String encoded : tablePositionState.get()) {
        tablePosition = SourceSequence.decode(encoded);
      }
    } else if (tablePosition != null) {
      LOG.info(
          "Started without state on a table at source position {}: changes at or before it are"
              + " dropped as stale",
          tablePosition);
    }
    truncated =
        TruncatedAt.restore(
            context, scope, context.isRestored() && !startsWithoutState, tableTruncatedAt);
    if (truncated.takenUpFromTable()) {
      LOG.info(
          "Started without state on a table truncated in the source at {}: changes before it are"
              + " dropped as stale",
          tableTruncatedAt);
    }
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
    missing = MissingValues.open(context, operator, scope, jobSchema);
    if (fit != null) {
      missing.useSchema(schema, fit);
    }
    entries =
        new EntryPlacement(
            operator, scope, live, tombstone, tombstoneTtl.toMillis(), this::now, maxIndexKeys);
    entries.restore(context);
  }

  @Override
  public void readIndex(int keyGroup, DataInputView in) throws Exception {
    entries.readIndex(keyGroup, in);
  }

  /**
   * Takes the in-memory index as restored ({@link EntryPlacement#indexRestored}), once the operator
   * has read its raw keyed state for all its tables.
   */
  @Override
  public void indexRestored() throws Exception {
    entries.indexRestored();
  }

  @Override
  public long indexSize() {
    return entries.indexSize();
  }

  @Override
  public long indexKeptBytes() {
    return entries.indexKeptBytes();
  }

  @Override
  public long indexKeptWrites() {
    return entries.indexKeptWrites();
  }

  @Override
  public void writeIndex(int first, int count, KeyGroupStart start, DataOutputView out)
      throws Exception {
    entries.writeIndex(first, count, start, out);
  }

  /** Processing time as tombstones' time to live counts it. */
  private long now() {
    return clock == null ? System.currentTimeMillis() : clock.getAsLong();
  }

  /** Replaces the processing time of the in-memory index's tombstones, for tests. */
  @VisibleForTesting
  public void useClock(LongSupplier clock) {
    this.clock = clock;
  }

  /**
   * Sets the most keys per subtask the in-memory index holds before its entries move into keyed
   * state ({@link DedupOptions#INDEX_MAX_KEYS}); 0 keeps them in keyed state.
   */
  @Override
  public void setIndexMaxKeys(long maxKeys) {
    this.maxIndexKeys = DedupOptions.checkIndexMaxKeys(maxKeys);
    if (entries != null) {
      entries.setMaxIndexKeys(this.maxIndexKeys);
    }
  }

  @Override
  public void snapshotState(StateSnapshotContext context) throws Exception {
    truncated.snapshot(operator.getRuntimeContext().getTaskInfo().getIndexOfThisSubtask() == 0);
    tablePositionState.update(
        tablePosition == null
                || operator.getRuntimeContext().getTaskInfo().getIndexOfThisSubtask() != 0
            ? List.of()
            : List.of(tablePosition.encode()));
    entries.snapshot(context);
  }

  /**
   * Records that the key in context has a live row at {@code file} and {@code position}, found in
   * the table before this job changed it.
   */
  @Override
  public void loaded(String file, long position) throws Exception {
    putCurrent(AppliedChange.loaded(file, position));
  }

  /** Records {@code value} for the key in context. */
  private void putCurrent(AppliedChange value) throws Exception {
    entries.store().put(value);
  }

  /** The live entry of the key in context, or null if it has no live row. */
  @Override
  public AppliedChange liveEntry() throws Exception {
    return entries.store().live();
  }

  /** Records that the live row of the key in context, {@code entry}, moved to a new location. */
  @Override
  public void moved(AppliedChange entry, String file, long position) throws Exception {
    putCurrent(AppliedChange.of(entry.sequence(), entry.fingerprint(), false, file, position));
  }

  @Override
  public void open() throws Exception {
    pending =
        new PendingChanges(
            ChangeEventTypeInfo.of(jobSchema)
                .createSerializer(operator.getExecutionConfig().getSerializerConfig()));
    if (fit != null) {
      pending.useSchema(fit);
    }
    offsets = new HashMap<>();
    MetricGroup group = scope.metrics(operator.getMetricGroup());
    metrics = new DedupMetrics(group, () -> pending.size(), () -> pending.chunkBytes());
    group.gauge("changesAwaitingTheirRow", () -> missing.waiting());
    group.gauge("keyIndexKeptBytes", this::indexKeptBytes);
  }

  @Override
  public void useSchema(
      ChangeSchema newSchema, java.util.function.UnaryOperator<ChangeEvent> newFit) {
    this.schema = newSchema;
    this.fit = newFit;
    // Before the state is initialized and the operator opened, where the writer starts in a
    // schema the table took since the job was built, these are made with it.
    if (pending != null) {
      pending.useSchema(newFit);
    }
    if (missing != null) {
      missing.useSchema(newSchema, newFit);
    }
  }

  @Override
  public void processElement(ChangeEvent event) throws Exception {
    metrics.received.inc();
    if (event.originPartition() != null) {
      offsets.merge(event.originPartition(), event.originOffset(), Math::max);
    }
    if (truncated.before(event.sequence())) {
      // Its table was truncated after it: its row, had it come in time, is deleted.
      stale++;
      metrics.stale.inc();
      return;
    }
    EntryStore store = entries.store();

    int number = store.find(event);
    AppliedChange prior = null;
    SourceSequence lastSequence;
    if (number == 0) {
      prior = store.entry();
      ChangeEvent held = prior == null ? missing.takeWaiting() : null;
      if (held != null) {
        // The held change is pending again, as if it had just come: what follows fills it, lends
        // to it or replaces it.
        number = pending.add(store.pendingKey(), null, held);
        store.markPending(number, held);
      }
    }
    if (number != 0) {
      lastSequence = pending.sequence(number);
    } else {
      if ((prior == null || prior.sequence() == null) && atOrBeforeTablePosition(event)) {
        // Checked before the key's row is looked up: a stale change leaves it where it was.
        stale++;
        metrics.stale.inc();
        return;
      }
      if (prior == null) {
        prior = netChanges.unknownKey(scope.keyOf(operator.getCurrentKey()));
      }
      lastSequence = prior == null ? null : prior.sequence();
    }

    if (event.sequence().isUnnumberedArrival()) {
      // Ordered by arrival: the next number after the key's last change.
      event =
          event.withSequence(
              SourceSequence.arrival(
                  lastSequence != null && lastSequence.kind() == SourceSequence.Kind.ARRIVAL
                      ? lastSequence.component(0) + 1
                      : 1));
    } else if (event.sequence().kind() != SourceSequence.Kind.UNORDERED
        && !event.sequence().isBeforeLog()) {
      // A snapshot read beside the log is at no position of it: the table's position is the log's.
      lastSeen = lastSeen == null ? event.sequence() : event.sequence().max(lastSeen);
    }
    if (lastSequence != null) {
      int order = event.sequence().orderAgainstLast(lastSequence);
      if (order < 0 && lastSequence.isDeleteOfRowAt(event.sequence())) {
        // After the delete of the row at its value: that row's write delivered late (stale, as
        // below), or another row written at that value, which the value does not order.
        if (!isLastChange(event, number, prior)) {
          refuseAmbiguous(event);
          return;
        }
      }
      if (order < 0) {
        if (number != 0 && event.sequence().isBeforeLog()) {
          ChangeEvent lent =
              missing.lentBy(pending.event(number), event, store.priorOfPending(number, pending));
          if (lent != null) {
            pending.replace(number, lent);
          }
        }
        stale++;
        metrics.stale.inc();
        return;
      }
      if (order == 0) {
        // Fingerprints are taken only here and when a change is applied: most changes are
        // neither the same as the one before nor the last of their key in the interval.
        if (isLastChange(event, number, prior)) {
          duplicates++;
          metrics.duplicates.inc();
          return;
        }
        if (!event.sequence().isBeforeLog()) {
          refuseAmbiguous(event);
          return;
        }
        // A snapshot chunk read again after a restore: the later read of the database is never
        // older than the earlier one, and any change of the log still wins over both.
      }
    }
    if (number != 0) {
      // The earlier pending change is read back (deserialized) only for the values this one misses:
      // most replacements miss none.
      pending.replace(
          number,
          event.missingColumns().isEmpty()
              ? event
              : missing.fillFromEarlier(event, pending.event(number)));
    } else {
      int added = pending.add(store.pendingKey(), store.priorToKeep(prior), event);
      store.markPending(added, event);
    }
  }

  @Override
  public void truncate(ChangeEvent truncate) throws Exception {
    if (truncate.originPartition() != null) {
      offsets.merge(truncate.originPartition(), truncate.originOffset(), Math::max);
    }
    SourceSequence at = truncate.sequence();
    if (truncated.takenAlready(truncate)) {
      // Another copy of the truncate, or a truncate before the one taken.
      return;
    }
    if (atOrBeforeTablePosition(truncate)) {
      // A changelog read again: the table holds what came after the truncate already.
      return;
    }
    if (!operator.getRuntimeContext().isCheckpointingEnabled()) {
      throw new IllegalStateException(
          "table "
              + truncate.table()
              + " was truncated in the source at "
              + at
              + ", which the writer applies only in a job with checkpoints (its keys' rows are"
              + " known to it only then)");
    }
    if (!netChanges.unknownKeysHaveNoRow()) {
      throw new IllegalStateException(
          "table "
              + truncate.table()
              + " was truncated in the source at "
              + at
              + ", which the writer cannot apply: it does not know every key of the table, as"
              + " where it started without state on a table with rows and without reading its"
              + " keys first (sink.bootstrap-index = false)");
    }
    truncated.take(truncate);
    if (!at.isBeforeLog()) {
      lastSeen = lastSeen == null ? at : at.max(lastSeen);
    }
    LOG.info(
        "Table {} was truncated in the source at {}: its rows of changes before it are deleted at"
            + " the next checkpoint, and changes before it that come later are dropped",
        truncate.table(),
        at);
  }

  /**
   * Whether a change of a key without a sequence of its own is at or before the position the table
   * holds: of the same source (kind and binlog file name), not a snapshot read (which shows the
   * database as it is now, never older than the table), with as many components.
   */
  private boolean atOrBeforeTablePosition(ChangeEvent event) {
    SourceSequence position = tablePosition;
    SourceSequence sequence = event.sequence();
    return position != null
        && event.operation() != io.icebergcdc.cdc.Operation.SNAPSHOT_READ
        && sequence.kind() == position.kind()
        && sequence.size() == position.size()
        && java.util.Objects.equals(sequence.prefix(), position.prefix())
        && sequence.compareTo(position) <= 0;
  }

  /**
   * Whether {@code event} is the key's last change by its fingerprint: the pending change {@code
   * number} of this interval, else the applied one, {@code prior}.
   */
  private boolean isLastChange(ChangeEvent event, int number, AppliedChange prior) {
    return number != 0
        ? jobSchema.fingerprint(pending.event(number)) == jobSchema.fingerprint(event)
        : jobSchema.isFingerprintOf(prior.fingerprint(), event);
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
      // A bounded input without a sequence is a SQL statement's, which has no dead-letter output.
      throw new AmbiguousChangeException(
          event.sequence().kind() == SourceSequence.Kind.UNORDERED
              ? message
              : message
                  + " (with a dead-letter output, "
                  + DedupOptions.ON_AMBIGUOUS_CHANGE.key()
                  + " = DEAD_LETTER, --on-ambiguous-change dead_letter on the command line, sets"
                  + " such changes aside)");
    }
    deadLettered++;
    metrics.deadLettered.inc();
    output.collect(
        Dedup.DEAD_LETTERS,
        new StreamRecord<>(
            new DeadLetter(
                event.table(),
                "key " + schema.describeKey(event.keyRow()) + " at " + event.sequence(),
                "ambiguous change: a different change was already applied at the same source"
                    + " position",
                schema.describe(event))));
  }

  @Override
  public void prepareSnapshotPreBarrier(long checkpointId) throws Exception {
    flush();
  }

  @Override
  public void endInput() throws Exception {
    endOfInput = true;
    flush();
    missing.failIfAnyWaits();
  }

  private void flush() throws Exception {
    EntryStore store = entries.store();
    long inserted = 0;
    long updated = 0;
    long deleted = 0;
    for (int number = 1; number <= pending.size(); number++) {
      AppliedChange prior = store.atPending(number, pending.key(number), pending.prior(number));
      ChangeEvent latest = pending.event(number);
      if (truncated.before(latest.sequence())) {
        latest = truncated.asDelete(latest);
      }
      long fingerprint = jobSchema.fingerprint(latest);
      boolean existed = prior != null && !prior.deleted();
      boolean mayExist = existed || (prior == null && !netChanges.unknownKeysHaveNoRow());
      if (!latest.missingColumns().isEmpty()
          && !existed
          && missing.keepUntilItsRow(
              latest, prior, mayExist, netChanges.unknownKeysHaveNoRow(), endOfInput, store)) {
        continue;
      }
      if (latest.operation().isUpsert()) {
        Operation net = existed ? Operation.UPDATE : Operation.INSERT;
        if (existed) {
          updated++;
        } else {
          inserted++;
        }
        NetChanges.Location written = netChanges.apply(latest.withOperation(net), prior);
        AppliedChange applied =
            AppliedChange.live(
                latest.sequence(),
                fingerprint,
                written == null ? null : written.file(),
                written == null ? 0 : written.position());
        store.putLive(applied, prior);
      } else {
        if (mayExist) {
          deleted++;
          netChanges.apply(latest.withOperation(Operation.DELETE), prior);
        }
        AppliedChange applied = new AppliedChange(latest.sequence(), fingerprint, true);
        store.putDeleted(applied, existed);
      }
    }
    pending.clear();
    store.pendingCleared();
    missing.flushed();
    if (truncated.due()) {
      deleted += truncated.deleteRowsBefore(entries, netChanges, schema, jobSchema);
      // Changes kept until their rows come, from before the truncate: their rows are gone.
      long forgotten = missing.forgetBefore(truncated::before);
      stale += forgotten;
      metrics.stale.inc(forgotten);
    }
    metrics.inserted.inc(inserted);
    metrics.updated.inc(updated);
    metrics.deleted.inc(deleted);
    ChangeStats stats =
        new ChangeStats(
            inserted,
            updated,
            deleted,
            stale,
            duplicates,
            deadLettered,
            lastSeen,
            offsets,
            truncated.position());
    offsets.clear();
    stale = 0;
    duplicates = 0;
    deadLettered = 0;
    lastSeen = null;
    netChanges.checkpointed(stats);
  }

  @Override
  public IllegalStateException unfillable(ChangeEvent change, String why) {
    return missing.unfillable(change, why);
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
        MetricGroup group,
        org.apache.flink.metrics.Gauge<Integer> buffered,
        org.apache.flink.metrics.Gauge<Long> bufferBytes) {
      received = group.counter("changesReceived");
      stale = group.counter("staleChangesDropped");
      duplicates = group.counter("duplicateChangesDropped");
      deadLettered = group.counter("ambiguousChangesDeadLettered");
      inserted = group.counter("rowsInserted");
      updated = group.counter("rowsUpdated");
      deleted = group.counter("rowsDeleted");
      group.gauge("keysBufferedSinceCheckpoint", buffered);
      // The memory of the buffer: what the last interval needed, kept for the next one.
      group.gauge("bufferedChangeBytes", bufferBytes);
    }
  }
}
