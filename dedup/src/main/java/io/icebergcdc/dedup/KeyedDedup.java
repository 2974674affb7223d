package io.icebergcdc.dedup;

import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.ChangeSchema;
import io.icebergcdc.cdc.SourceSequence;
import java.io.Serializable;
import org.apache.flink.runtime.state.StateInitializationContext;
import org.apache.flink.runtime.state.StateSnapshotContext;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.Output;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;

/**
 * The dedup inside an operator of a stream keyed by primary key: it orders each key's changes by
 * source sequence, drops stale and duplicate ones, keeps per key the {@link AppliedChange} of the
 * last change applied, and hands the net change of every key that changed to the operator's {@link
 * NetChanges} once per checkpoint (see the README, "Dedup"). Made by {@link Dedup#keyed}.
 *
 * <p>The operator calls each method from its own of the same name, after Flink's part ({@code
 * super}), and declares that it uses raw keyed state ({@code isUsingCustomRawKeyedState}): the
 * in-memory index is written there. Its state names ({@code applied}, {@code tombstone}, {@code
 * awaiting-row}, {@code table-position}) are the operator's.
 *
 * <p><b>Threading:</b> Flink's task thread only.
 */
public interface KeyedDedup extends Serializable {

  /**
   * Reads or creates the dedup's state.
   *
   * @param operator the operator that hosts the dedup, for its keyed state backend, key context,
   *     runtime context and metrics
   * @param output the operator's output, for {@link Dedup#DEAD_LETTERS}
   * @param netChanges what becomes of the net changes
   */
  void initializeState(
      StateInitializationContext context,
      AbstractStreamOperator<?> operator,
      Output<? extends StreamRecord<?>> output,
      NetChanges netChanges)
      throws Exception;

  void open() throws Exception;

  /** Takes a change of the key in context. */
  void processElement(ChangeEvent event) throws Exception;

  /**
   * Takes a truncate of the table (one of its copies, {@link io.icebergcdc.cdc.TruncateCopies}):
   * from now on a change before it is stale, a change before it held since the last checkpoint
   * becomes a delete at it, and at the next checkpoint every key whose live row came from a change
   * before it is deleted, leaving a tombstone at it. A copy of a truncate taken already, and a
   * truncate before one taken, change nothing.
   *
   * @throws IllegalStateException if the operator does not know every key of the table ({@link
   *     NetChanges#unknownKeysHaveNoRow}), so that rows of the table would stay
   */
  void truncate(ChangeEvent truncate) throws Exception;

  /**
   * The table's schema changed while the job runs: the changes taken from now on have the rows of
   * {@code schema}, and {@code fit} gives a change kept since before (of an earlier schema) those
   * rows.
   */
  void useSchema(ChangeSchema schema, java.util.function.UnaryOperator<ChangeEvent> fit);

  /** Hands the net changes since the last checkpoint on, from the operator's pre-barrier hook. */
  void prepareSnapshotPreBarrier(long checkpointId) throws Exception;

  void snapshotState(StateSnapshotContext context) throws Exception;

  void endInput() throws Exception;

  /** See {@link DedupOptions#INDEX_MAX_KEYS}; before the state is initialized. */
  void setIndexMaxKeys(long maxKeys);

  /**
   * The part of the operator's keys, state and metrics that is this table's, for an operator of
   * several tables; {@link TableScope#WHOLE} unless set; before the state is initialized.
   */
  void setScope(TableScope scope);

  /**
   * The source position the table holds, for a job that starts without state; before the state is
   * initialized.
   */
  void setTablePosition(SourceSequence position);

  /**
   * The source position of the table's latest truncate that its summaries record, for a job that
   * starts without state; before the state is initialized.
   */
  void setTableTruncatedAt(SourceSequence position);

  /**
   * Records that the key in context has a live row at {@code file} and {@code position}, found in
   * the table before this job changed it.
   */
  void loaded(String file, long position) throws Exception;

  /** The live entry of the key in context, or null if it has no live row. */
  AppliedChange liveEntry() throws Exception;

  /** Records that the live row of the key in context, {@code entry}, moved to a new location. */
  void moved(AppliedChange entry, String file, long position) throws Exception;

  /**
   * That the table starts without state of its own although the job restored (a table added to the
   * job, or whose state the restore left unclaimed): it starts as in a job without state, from the
   * table's source position ({@link #setTablePosition}); before the state is initialized.
   */
  void setStartsWithoutState();

  /**
   * Clears the keyed state the dedup shares with other tables of the operator for every key that
   * {@code stateKeys} accepts (keys of the operator's keyed state): the entries of tables the job
   * no longer writes. After the state is initialized, before any change is taken.
   */
  void forgetKeys(java.util.function.Predicate<Object> stateKeys) throws Exception;

  /** Starts a key group of raw keyed state, as {@code KeyedStateCheckpointOutputStream} does. */
  interface KeyGroupStart {
    void start(int keyGroup) throws java.io.IOException;
  }

  /**
   * For an operator that writes the raw keyed state of its tables ({@link
   * TableScope#ownsRawKeyedState} false), from its {@code snapshotState} after this dedup's: writes
   * the in-memory index's entries of key groups {@code first} to {@code first + count - 1}, each
   * after starting it (entries of other key groups are left for other calls); a key group without
   * entries is not started. Writes nothing when the dedup keeps no in-memory index.
   */
  void writeIndex(
      int first, int count, KeyGroupStart start, org.apache.flink.core.memory.DataOutputView out)
      throws Exception;

  /** The entries the in-memory index holds; 0 when the entries are in keyed state. */
  long indexSize();

  /**
   * The bytes of the in-memory index's last snapshot that it keeps to write again while it does not
   * change (heap it holds besides its entries); 0 when none are kept.
   */
  long indexKeptBytes();

  /**
   * How many writes of the in-memory index's key groups (one or more a checkpoint) wrote the bytes
   * it kept, not its entries.
   */
  long indexKeptWrites();

  /**
   * For an operator that reads the raw keyed state of its tables, after this dedup's {@code
   * initializeState}: the entries of {@code keyGroup} as {@link #writeIndex} wrote them.
   */
  void readIndex(int keyGroup, org.apache.flink.core.memory.DataInputView in) throws Exception;

  /**
   * For an operator that reads the raw keyed state of its tables: all of it is read. Before any
   * change is taken; a no-op when the job did not restore.
   */
  void indexRestored() throws Exception;

  /**
   * The failure of an upsert whose {@link ChangeEvent#missingColumns()} cannot be filled, and why.
   */
  IllegalStateException unfillable(ChangeEvent change, String why);
}
