package io.icebergcdc.dedup.internal;

import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.ChangeSchema;
import io.icebergcdc.cdc.Operation;
import io.icebergcdc.cdc.typeutils.ChangeEventTypeInfo;
import io.icebergcdc.dedup.AppliedChange;
import io.icebergcdc.dedup.TableScope;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.PrimitiveArrayTypeInfo;
import org.apache.flink.runtime.state.StateInitializationContext;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;

/**
 * What the dedup does with changes that lack values the source did not send ({@link
 * ChangeEvent#missingColumns()}, PostgreSQL's unchanged TOASTed values): an update takes them from
 * the key's earlier change of the interval, or from a snapshot read that lost to it where the key
 * has no live row; at the flush, a change whose key has no row yet waits in {@link AwaitingRows}
 * (keyed state {@code awaiting-row}) until its read or a complete change comes, and one that no row
 * can fill fails, naming the table, key and columns. The writer fills the rest from the key's live
 * row.
 *
 * <p><b>Threading:</b> Flink's task thread only.
 */
final class MissingValues {

  /** The keyed state of the changes that {@link AwaitingRows} keeps. */
  private static final String AWAITING_ROW = "awaiting-row";

  private static final org.slf4j.Logger LOG =
      org.slf4j.LoggerFactory.getLogger(MissingValues.class);

  private ChangeSchema schema;
  private final AbstractStreamOperator<?> operator;
  private final TableScope scope;
  private final AwaitingRows awaiting;
  private long heldInInterval;

  private MissingValues(
      ChangeSchema schema,
      AbstractStreamOperator<?> operator,
      TableScope scope,
      AwaitingRows awaiting) {
    this.schema = schema;
    this.operator = operator;
    this.scope = scope;
    this.awaiting = awaiting;
  }

  /** Opens the state of the changes kept, restored or new, for the operator's keys. */
  static MissingValues open(
      StateInitializationContext context,
      AbstractStreamOperator<?> operator,
      TableScope scope,
      ChangeSchema schema)
      throws Exception {
    long keys = 0;
    ValueState<byte[]> state =
        context
            .getKeyedStateStore()
            .getState(
                new ValueStateDescriptor<>(
                    AWAITING_ROW, PrimitiveArrayTypeInfo.BYTE_PRIMITIVE_ARRAY_TYPE_INFO));
    if (context.isRestored()) {
      keys = KeyedStateKeys.count(operator, AWAITING_ROW, scope::holds);
    }
    return new MissingValues(
        schema,
        operator,
        scope,
        new AwaitingRows(
            state,
            keys,
            schema,
            ChangeEventTypeInfo.of(schema)
                .createSerializer(operator.getExecutionConfig().getSerializerConfig())));
  }

  /**
   * Fills the changes of {@code newSchema} from now on; {@code fit} gives a change kept since
   * before (of an earlier schema) its rows.
   */
  void useSchema(ChangeSchema newSchema, java.util.function.UnaryOperator<ChangeEvent> fit) {
    this.schema = newSchema;
    awaiting.useSchema(fit);
  }

  /** How many keys have a change waiting for their row. */
  long waiting() {
    return awaiting.count();
  }

  /** The change kept for the key in context, now no longer kept; null if there is none. */
  ChangeEvent takeWaiting() throws Exception {
    return awaiting.take();
  }

  /** {@code event}, with what it misses taken from {@code earlier}, the key's change before it. */
  ChangeEvent fillFromEarlier(ChangeEvent event, ChangeEvent earlier) {
    if (!event.missingColumns().isEmpty() && earlier.operation().isUpsert()) {
      return schema.fillMissing(event, earlier.after(), earlier.missingColumns());
    }
    return event;
  }

  /**
   * {@code latest}, the key's pending change, with what it misses lent by {@code read}, a snapshot
   * read that lost to it, where the key has no live row ({@code prior}); null if nothing is lent.
   * The read shows the row as it was after the log's start, and a change of the log that set those
   * columns since then came before the pending one (the log is in order), so it would have filled
   * them itself. A live row is never older than the read in those columns, and is used at the flush
   * instead.
   */
  ChangeEvent lentBy(ChangeEvent latest, ChangeEvent read, AppliedChange prior) {
    if (read.operation().isUpsert()
        && (prior == null || prior.deleted())
        && !latest.missingColumns().isEmpty()) {
      return schema.fillMissing(latest, read.after(), read.missingColumns());
    }
    return null;
  }

  /**
   * At the flush, for {@code latest}, the key's net change, when it misses values and its key has
   * no live row: keeps it (true) where the key has no row yet and one may come (a complete key
   * index without the key, input not ended), else fails.
   *
   * @param prior what was known of the key; null if nothing
   * @param mayExist whether the key may have a row this dedup does not know of
   * @param store positioned on the key's pending change, which a kept change leaves
   */
  boolean keepUntilItsRow(
      ChangeEvent latest,
      AppliedChange prior,
      boolean mayExist,
      boolean unknownKeysHaveNoRow,
      boolean endOfInput,
      EntryStore store)
      throws Exception {
    if (prior == null && unknownKeysHaveNoRow && !endOfInput) {
      // A row not read by the snapshot yet: its read, or a complete change, comes later.
      store.releasePending();
      awaiting.hold(latest);
      heldInInterval++;
      return true;
    }
    throw unfillable(
        latest,
        prior == null && mayExist
            ? "this writer does not know the key's row (the key index was not loaded from"
                + " the table)"
            : endOfInput && prior == null
                ? "the key has no row, and the input ended before one came"
                : "the key has no row"
                    + (latest.operation() == Operation.INSERT
                        ? " (a change of primary key leaves the values on the old key's row)"
                        : ""));
  }

  /** After a flush: says how many changes it kept. */
  void flushed() {
    if (heldInInterval > 0) {
      LOG.info(
          "Kept {} changes lacking values the source did not send until their keys' rows come"
              + " ({} kept in all)",
          heldInInterval,
          awaiting.count());
      heldInInterval = 0;
    }
  }

  /**
   * Drops the kept changes whose sequence {@code beforeTruncate} accepts (before a truncate of the
   * table, which deleted what they would have changed); returns how many.
   */
  long forgetBefore(java.util.function.Predicate<io.icebergcdc.cdc.SourceSequence> beforeTruncate)
      throws Exception {
    if (awaiting.count() == 0) {
      return 0;
    }
    long[] forgotten = {0};
    KeyedStateKeys.forEach(
        operator,
        AWAITING_ROW,
        scope::holds,
        () -> {
          ChangeEvent kept = awaiting.take();
          if (kept == null) {
            return;
          }
          if (beforeTruncate.test(kept.sequence())) {
            forgotten[0]++;
          } else {
            awaiting.hold(kept);
          }
        });
    return forgotten[0];
  }

  /** Clears the changes kept for the operator's keys {@code stateKeys} accepts. */
  void forgetKeys(java.util.function.Predicate<Object> stateKeys) throws Exception {
    KeyedStateKeys.forEach(operator, AWAITING_ROW, stateKeys, awaiting::forget);
  }

  /** At the end of a bounded input, which keeps no state: fails if a change still waits. */
  void failIfAnyWaits() throws Exception {
    if (awaiting.count() > 0) {
      if (!KeyedStateKeys.setFirst(operator, AWAITING_ROW, scope::holds)) {
        throw new IllegalStateException(
            "changes wait for a row (" + awaiting.count() + "), but no key holds one");
      }
      long waiting = awaiting.count();
      throw unfillable(
          awaiting.take(),
          "the key has no row, and the input ended before one came (changes waiting so: "
              + waiting
              + ")");
    }
  }

  /**
   * The failure of an upsert whose {@link ChangeEvent#missingColumns()} cannot be filled, and why.
   */
  IllegalStateException unfillable(ChangeEvent change, String why) {
    return new IllegalStateException(
        "table "
            + change.table()
            + ", key "
            + schema.describeKey(change.keyRow())
            + ": the change at "
            + change.sequence()
            + " lacks the values of "
            + schema.describeColumns(change.missingColumns())
            + ", which the source did not send (PostgreSQL's unchanged TOASTed values), and "
            + why
            + ". Set REPLICA IDENTITY FULL on the source table so that its changes carry every"
            + " value");
  }
}
