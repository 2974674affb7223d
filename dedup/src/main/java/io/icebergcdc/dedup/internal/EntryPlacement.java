package io.icebergcdc.dedup.internal;

import io.icebergcdc.cdc.RowKey;
import io.icebergcdc.cdc.typeutils.RowKeySerializer;
import io.icebergcdc.dedup.AppliedChange;
import io.icebergcdc.dedup.KeyedDedup;
import io.icebergcdc.dedup.TableScope;
import java.io.InputStream;
import java.util.List;
import java.util.function.LongSupplier;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataInputViewStreamWrapper;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.core.memory.DataOutputView;
import org.apache.flink.core.memory.DataOutputViewStreamWrapper;
import org.apache.flink.runtime.state.AbstractKeyedStateBackend;
import org.apache.flink.runtime.state.KeyGroupStatePartitionStreamProvider;
import org.apache.flink.runtime.state.KeyGroupsList;
import org.apache.flink.runtime.state.KeyedStateCheckpointOutputStream;
import org.apache.flink.runtime.state.StateInitializationContext;
import org.apache.flink.runtime.state.StateSnapshotContext;
import org.apache.flink.runtime.state.heap.HeapKeyedStateBackend;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;

/**
 * Where the {@link AppliedChange} entries of one table's keys live, for {@link SequencedChanges}:
 * in a {@link KeyIndex} on the heap, written to raw keyed state at every checkpoint, where the job
 * checkpoints with the heap state backend and the subtask's keys are at most {@code maxIndexKeys};
 * otherwise in keyed state ({@code applied} and {@code tombstone}). It moves the entries from one
 * place into the other when a restore finds them in the other (a savepoint of another backend, or
 * of a release before the index) and when the index grows past its limit, and gives the dedup the
 * {@link EntryStore} of the place they are in. It is also the key context the stores and the index
 * work in: the key in context, its bytes and its key group.
 *
 * <p>Not thread-safe: Flink's task thread only.
 */
final class EntryPlacement implements KeyContext {

  private static final org.slf4j.Logger LOG =
      org.slf4j.LoggerFactory.getLogger(EntryPlacement.class);

  private final AbstractStreamOperator<?> operator;
  private final TableScope scope;
  private final ValueState<AppliedChange> live;
  private final ValueState<AppliedChange> tombstone;
  private final TypeSerializer<Object> keySerializer;
  private final DataOutputSerializer buffer = new DataOutputSerializer(64);
  private final LongSupplier clock;
  private long maxIndexKeys;

  /** Whether the entries may live in {@link #index} (heap state and checkpoints). */
  private final boolean inMemory;

  /** The entries, with heap state and checkpoints; null where they are in keyed state. */
  private KeyIndex index;

  /** The index as raw keyed state restores it, until {@link #indexRestored}. */
  private KeyIndex restoredIndex;

  /** The entries as the records reach them: in {@link #index}, or in keyed state. */
  private EntryStore store;

  /**
   * @param clock processing time, as the tombstones' time to live counts it
   * @param maxIndexKeys the most keys the in-memory index holds before its entries move into keyed
   *     state; 0 keeps them in keyed state
   */
  @SuppressWarnings("unchecked")
  EntryPlacement(
      AbstractStreamOperator<?> operator,
      TableScope scope,
      ValueState<AppliedChange> live,
      ValueState<AppliedChange> tombstone,
      long tombstoneTtlMillis,
      LongSupplier clock,
      long maxIndexKeys) {
    this.operator = operator;
    this.scope = scope;
    this.live = live;
    this.tombstone = tombstone;
    this.keySerializer =
        (TypeSerializer<Object>)
            scope.keySerializer(operator.getKeyedStateBackend().getKeySerializer());
    this.clock = clock;
    this.maxIndexKeys = maxIndexKeys;
    this.inMemory =
        maxIndexKeys > 0
            && operator.getRuntimeContext().isCheckpointingEnabled()
            && operator.getKeyedStateBackend() instanceof HeapKeyedStateBackend;
    this.restoredIndex = new KeyIndex(tombstoneTtlMillis);
  }

  /**
   * Restores the entries: reads the index's raw keyed state where the table owns it; else, in a
   * restored job, the operator reads its raw keyed state for all its tables ({@link #readIndex})
   * and then calls {@link #indexRestored}.
   */
  void restore(StateInitializationContext context) throws Exception {
    if (scope.ownsRawKeyedState()) {
      long now = now();
      for (KeyGroupStatePartitionStreamProvider group : context.getRawKeyedStateInputs()) {
        try (InputStream in = group.getStream()) {
          restoredIndex.read(group.getKeyGroupId(), new DataInputViewStreamWrapper(in), now);
        }
      }
      indexRestored();
    } else if (!context.isRestored()) {
      indexRestored();
    }
  }

  /** Reads one key group of the index, as the operator restores it for this table. */
  void readIndex(int keyGroup, DataInputView in) throws Exception {
    restoredIndex.read(keyGroup, in, now());
  }

  /**
   * Takes the in-memory index as restored: kept as the index, unless it and the entries restored
   * into keyed state (by a job with another backend or an earlier release) are more than the index
   * may hold, when all go into keyed state; where the index is not used, its restored entries go
   * into keyed state.
   */
  void indexRestored() throws Exception {
    if (store != null) {
      return;
    }
    KeyIndex restored = restoredIndex;
    restoredIndex = null;
    if (inMemory) {
      index = restored;
      if (index.size() + keysInKeyedState() > maxIndexKeys) {
        moveIntoKeyedState(index);
        index = null;
      } else {
        moveKeyedStateIntoIndex();
      }
    } else if (restored.size() > 0) {
      moveIntoKeyedState(restored);
    }
    store =
        index != null
            ? new IndexEntryStore(index, this)
            : new KeyedStateEntryStore(live, tombstone, this);
  }

  /**
   * Sets the most keys the in-memory index holds before its entries move into keyed state, from the
   * next snapshot on (whether the index is used at all was decided with the limit at the start).
   */
  void setMaxIndexKeys(long maxKeys) {
    this.maxIndexKeys = maxKeys;
  }

  /** The store of the entries, once they are restored. */
  EntryStore store() {
    return store;
  }

  /** What {@link #forEachLive} hands each key with a live row. */
  interface LiveVisitor {
    void visit(Object key, AppliedChange entry) throws Exception;
  }

  /**
   * Hands {@code visitor} each key of the table with a live row and its entry; no key may have a
   * pending change (after a flush).
   */
  void forEachLive(LiveVisitor visitor) throws Exception {
    if (index != null) {
      index.forEach(
          (bytes, keyGroup, value) -> {
            if (value != null && !value.deleted()) {
              visitor.visit(keyOf(bytes), value);
            }
          });
      return;
    }
    KeyedStateKeys.forEach(
        operator,
        "applied",
        scope::holds,
        () -> {
          AppliedChange value = live.value();
          if (value != null) {
            visitor.visit(currentKey(), value);
          }
        });
  }

  /** How many keys the in-memory index holds; 0 where the entries are in keyed state. */
  long indexSize() {
    return index == null ? 0 : index.size();
  }

  /** See {@link KeyIndex#keptBytes}. */
  long indexKeptBytes() {
    // Read by a metrics reporter while the task thread may move the index into keyed state.
    KeyIndex entries = index;
    return entries == null ? 0 : entries.keptBytes();
  }

  /** See {@link KeyIndex#keptWrites}. */
  long indexKeptWrites() {
    KeyIndex entries = index;
    return entries == null ? 0 : entries.keptWrites();
  }

  /** Writes the index's key groups {@code first} to {@code first + count - 1}, if it is used. */
  void writeIndex(int first, int count, KeyedDedup.KeyGroupStart start, DataOutputView out)
      throws Exception {
    if (index != null) {
      index.write(first, count, now(), start::start, out, true);
    }
  }

  /**
   * Snapshots the entries of the index: moved into keyed state if it holds more keys than it may
   * (the heap backend snapshots keyed state once this returns), else written to the raw keyed state
   * where the table owns it (else the operator writes it with its other tables, {@link
   * #writeIndex}).
   */
  void snapshot(StateSnapshotContext context) throws Exception {
    if (index == null) {
      return;
    }
    int expired = index.removeExpiredTombstones(now());
    if (expired > 0) {
      LOG.debug("Removed {} expired tombstones from the in-memory key index", expired);
    }
    if (index.size() > maxIndexKeys) {
      LOG.info(
          "The in-memory key index holds {} keys, more than {}: moving it into keyed state",
          index.size(),
          maxIndexKeys);
      moveIntoKeyedState(index);
      index = null;
      store = new KeyedStateEntryStore(live, tombstone, this);
      return;
    }
    index.forgetUnusedFiles();
    index.snapshotBegins();
    if (!scope.ownsRawKeyedState()) {
      return;
    }
    long start = System.nanoTime();
    KeyedStateCheckpointOutputStream out = context.getRawKeyedOperatorStateOutput();
    KeyGroupsList range = out.getKeyGroupList();
    index.write(
        range.getKeyGroupId(0),
        range.getNumberOfKeyGroups(),
        now(),
        out::startNewKeyGroup,
        new DataOutputViewStreamWrapper(out));
    LOG.debug(
        "Wrote the in-memory key index of {} keys for checkpoint {} in {} ms",
        index.size(),
        context.getCheckpointId(),
        (System.nanoTime() - start) / 1_000_000L);
  }

  private long keysInKeyedState() {
    return KeyedStateKeys.count(operator, "applied", scope::holds)
        + KeyedStateKeys.count(operator, "tombstone", scope::holds);
  }

  /**
   * Moves entries restored into keyed state (written by a job with another state backend, or by a
   * release before the in-memory index) into the index, and empties the keyed state.
   */
  private void moveKeyedStateIntoIndex() throws Exception {
    long now = now();
    for (ValueState<AppliedChange> state : List.of(live, tombstone)) {
      KeyedStateKeys.forEach(
          operator,
          state == live ? "applied" : "tombstone",
          scope::holds,
          () -> {
            AppliedChange value = state.value();
            if (value != null) {
              byte[] bytes = keyBytes(scope.keyOf(operator.getCurrentKey()));
              index.put(bytes, KeyIndex.hash(bytes), currentKeyGroup(), value, now);
            }
            state.clear();
          });
    }
  }

  /** Writes every entry of {@code from} into keyed state. */
  private void moveIntoKeyedState(KeyIndex from) throws Exception {
    from.forEach(
        (key, keyGroup, value) -> {
          operator.setCurrentKey(scope.stateKey(keyOf(key)));
          (value.deleted() ? tombstone : live).update(value);
        });
  }

  @Override
  public Object currentKey() {
    return scope.keyOf(operator.getCurrentKey());
  }

  @Override
  public void setCurrentKey(Object key) {
    operator.setCurrentKey(scope.stateKey(key));
  }

  /**
   * The bytes by which the index keeps {@code key}: those of a {@link RowKey}, else the key
   * serializer's.
   */
  @Override
  public byte[] keyBytes(Object key) throws java.io.IOException {
    if (key instanceof RowKey) {
      return ((RowKey) key).bytes();
    }
    buffer.clear();
    keySerializer.serialize(key, buffer);
    return buffer.getCopyOfBuffer();
  }

  @Override
  public Object keyOf(byte[] bytes) throws java.io.IOException {
    if ((TypeSerializer<?>) keySerializer instanceof RowKeySerializer) {
      return new RowKey(bytes);
    }
    return keySerializer.deserialize(new DataInputDeserializer(bytes));
  }

  /** The key group of the key in context; the index is only used with the heap backend. */
  @Override
  public int currentKeyGroup() {
    return ((AbstractKeyedStateBackend<?>) operator.getKeyedStateBackend())
        .getCurrentKeyGroupIndex();
  }

  @Override
  public long now() {
    return clock.getAsLong();
  }
}
