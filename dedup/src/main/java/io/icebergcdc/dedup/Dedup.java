package io.icebergcdc.dedup;

import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.ChangeSchema;
import io.icebergcdc.cdc.ChangeStats;
import io.icebergcdc.cdc.DeadLetter;
import io.icebergcdc.cdc.SourceSequence;
import io.icebergcdc.cdc.typeutils.ChangeStatsSerializer;
import io.icebergcdc.cdc.typeutils.DeadLetterSerializer;
import io.icebergcdc.cdc.typeutils.SimpleVersionedTypeInfo;
import io.icebergcdc.dedup.internal.DedupOperator;
import io.icebergcdc.dedup.internal.IndexFootprint;
import io.icebergcdc.dedup.internal.SequencedChanges;
import java.time.Duration;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.util.OutputTag;

/**
 * The dedup as a sink's topology adds it: an operator on a stream keyed by primary key that orders
 * each key's changes by source sequence, drops stale and duplicate ones, and emits once per
 * checkpoint the net change of every key that changed (see the README, "Dedup"). Its side outputs
 * are {@link #STATS}, for the committer, and {@link #DEAD_LETTERS}.
 */
public final class Dedup {

  /** Per-checkpoint statistics of each dedup subtask, for the committer. */
  public static final OutputTag<ChangeStats> STATS =
      new OutputTag<>(
          "change-stats",
          new SimpleVersionedTypeInfo<>(ChangeStats.class, ChangeStatsSerializer::new));

  /** Changes refused as ambiguous under {@link AmbiguousChangePolicy#DEAD_LETTER}. */
  public static final OutputTag<DeadLetter> DEAD_LETTERS =
      new OutputTag<>(
          "dedup-dead-letters",
          new SimpleVersionedTypeInfo<>(DeadLetter.class, DeadLetterSerializer::new));

  private Dedup() {}

  /**
   * The operator state of the table's source position of the dedup of {@code scope}'s table ({@link
   * KeyedDedup#setTablePosition}): for the operator that hosts it, to forget the state of a table
   * no longer written.
   */
  public static org.apache.flink.api.common.state.ListStateDescriptor<String>
      tablePositionDescriptor(TableScope scope) {
    return new org.apache.flink.api.common.state.ListStateDescriptor<>(
        scope.stateName("table-position"), org.apache.flink.api.common.typeinfo.Types.STRING);
  }

  /**
   * The operator state of the position of the table's latest truncate ({@link
   * KeyedDedup#truncate}): the same on every subtask, written by the first.
   */
  public static org.apache.flink.api.common.state.ListStateDescriptor<String> truncatedAtDescriptor(
      TableScope scope) {
    return new org.apache.flink.api.common.state.ListStateDescriptor<>(
        scope.stateName("truncated-at"), org.apache.flink.api.common.typeinfo.Types.STRING);
  }

  /**
   * The dedup inside an operator of another kind (the key-indexed writer), which provides what
   * becomes of the net changes; see {@link KeyedDedup} for how the operator calls it.
   */
  public static KeyedDedup keyed(
      ChangeSchema schema, Duration tombstoneTtl, AmbiguousChangePolicy ambiguousChangePolicy) {
    return new SequencedChanges(schema, tombstoneTtl, ambiguousChangePolicy);
  }

  /**
   * @param tombstoneTtl how long a deleted key's tombstone is kept ({@link
   *     DedupOptions#TOMBSTONE_TTL})
   * @param indexMaxKeys the most keys per subtask the in-memory index holds ({@link
   *     DedupOptions#INDEX_MAX_KEYS})
   * @param tablePosition the source position the table holds, for a job that starts without state;
   *     null for none
   */
  public static OneInputStreamOperator<ChangeEvent, ChangeEvent> operator(
      ChangeSchema schema,
      Duration tombstoneTtl,
      AmbiguousChangePolicy ambiguousChangePolicy,
      long indexMaxKeys,
      SourceSequence tablePosition) {
    DedupOperator dedup = new DedupOperator(schema, tombstoneTtl, ambiguousChangePolicy);
    dedup.setIndexMaxKeys(indexMaxKeys);
    dedup.setTablePosition(tablePosition);
    return dedup;
  }

  /**
   * The heap per key of the in-memory key index ({@code dedup.index.max-keys}) holding {@code keys}
   * bigint keys as an upsert workload leaves them, measured by building one in this JVM: for sizing
   * TaskManagers, and for the benchmark. Runs full collections; not for a running job.
   */
  public static double indexHeapBytesPerKey(int keys) {
    return IndexFootprint.bytesPerKey(keys);
  }
}
