package io.icebergcdc.dedup.internal;

import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.ChangeSchema;
import io.icebergcdc.cdc.ColumnMask;
import io.icebergcdc.cdc.Operation;
import io.icebergcdc.cdc.RowKey;
import io.icebergcdc.cdc.SourceSequence;
import io.icebergcdc.dedup.AppliedChange;
import io.icebergcdc.dedup.Dedup;
import io.icebergcdc.dedup.NetChanges;
import io.icebergcdc.dedup.TableScope;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.runtime.state.StateInitializationContext;
import org.apache.flink.table.data.RowData;

/**
 * The latest truncate of a table that a subtask of its dedup took ({@link
 * io.icebergcdc.dedup.KeyedDedup#truncate}), for {@link SequencedChanges}: its position, before
 * which a change is stale, kept in operator state ({@code truncated-at}, written by the first
 * subtask: every subtask takes every truncate, so all hold the same), and the deletes it makes at
 * the next flush, of the keys whose live rows came from changes before it.
 *
 * <p>Not thread-safe: Flink's task thread only.
 */
final class TruncatedAt {

  private final ListState<String> state;

  /** The truncate's position; null if the table was not truncated. */
  private SourceSequence position;

  /** The table's name in the truncate, for the deletes it makes. */
  private String table;

  /** Whether the keys with live rows from before {@link #position} are still to be deleted. */
  private boolean due;

  /**
   * Whether {@link #position} was taken up from the table's summaries by a subtask that started
   * without state, and no truncate was taken since.
   */
  private boolean fromTable;

  /**
   * Marks a position in state that was taken up from the table ({@link #fromTable}); a state
   * written before there was such a position holds positions as {@link SourceSequence#encode()}
   * writes them.
   */
  private static final String FROM_TABLE = "from-table ";

  private TruncatedAt(ListState<String> state) {
    this.state = state;
  }

  /**
   * The position restored from operator state; where the table starts without state of its own, the
   * position of the latest truncate that the table's summaries record (a table the job writes again
   * after an earlier job dropped it keeps nothing of that job's state).
   *
   * @param fromTable the position of the table's latest truncate that its summaries record, or null
   */
  static TruncatedAt restore(
      StateInitializationContext context,
      TableScope scope,
      boolean ownStateRestored,
      SourceSequence fromTable)
      throws Exception {
    TruncatedAt truncated =
        new TruncatedAt(
            context.getOperatorStateStore().getUnionListState(Dedup.truncatedAtDescriptor(scope)));
    if (ownStateRestored) {
      for (String encoded : truncated.state.get()) {
        boolean fromItsTable = encoded.startsWith(FROM_TABLE);
        SourceSequence at =
            SourceSequence.decode(fromItsTable ? encoded.substring(FROM_TABLE.length()) : encoded);
        if (truncated.position == null || at.compareTo(truncated.position) > 0) {
          truncated.position = at;
          truncated.fromTable = fromItsTable;
        }
      }
    } else if (fromTable != null) {
      // Its rows were deleted by the job that took it; a change before it is still stale, as a
      // Kafka partition behind the others delivers one after a restart from the table's offsets.
      truncated.position = fromTable;
      truncated.fromTable = true;
    }
    return truncated;
  }

  /**
   * Writes the position, from the first subtask only, and whether it was taken up from the table
   * (so that a restore keeps the snapshot reads such a position lets by).
   */
  void snapshot(boolean firstSubtask) throws Exception {
    state.update(
        position == null || !firstSubtask
            ? List.of()
            : List.of((fromTable ? FROM_TABLE : "") + position.encode()));
  }

  /**
   * Whether {@code truncate} is one this subtask took already, or older than it (another of its
   * copies, or a truncate before the latest).
   *
   * @throws IllegalStateException if it cannot be ordered against the latest, of another source
   */
  boolean takenAlready(ChangeEvent truncate) {
    if (position == null) {
      return false;
    }
    SourceSequence at = truncate.sequence();
    if (fromTable
        && (at.kind() != position.kind()
            || !java.util.Objects.equals(at.prefix(), position.prefix()))) {
      // The table's summaries tell of another source's (or another server's binlog): this
      // source's truncate replaces it.
      return false;
    }
    if (at.kind() != position.kind()) {
      throw new IllegalStateException(
          "table "
              + truncate.table()
              + " was truncated in the source at "
              + at
              + ", which cannot be ordered against its earlier truncate at "
              + position
              + " (another source's position): start the job without state");
    }
    return at.compareTo(position) <= 0;
  }

  /** Takes {@code truncate}: its table's rows from before it go at the next flush. */
  void take(ChangeEvent truncate) {
    position = truncate.sequence();
    table = truncate.table();
    due = true;
    fromTable = false;
  }

  /** Whether the position was taken up from the table's summaries, no truncate taken since. */
  boolean takenUpFromTable() {
    return fromTable;
  }

  /** The position of the latest truncate, taken or taken up from the table; null if none. */
  SourceSequence position() {
    return position;
  }

  /**
   * Whether a change at {@code sequence} came before the latest truncate of its table: a position
   * of the same log (kind and binlog name; a snapshot read is before every position of the log, but
   * for a truncate taken up from the table: the snapshot of a job that started without state reads
   * the database as it is now, after the truncate).
   */
  boolean before(SourceSequence sequence) {
    return position != null
        && sequence != null
        && sequence.kind() == position.kind()
        && (sequence.isBeforeLog()
            ? !fromTable
            : java.util.Objects.equals(sequence.prefix(), position.prefix()))
        && sequence.compareTo(position) < 0;
  }

  /**
   * A change held since the last checkpoint that came before the truncate taken since, as a delete
   * of its key at the truncate's position.
   */
  ChangeEvent asDelete(ChangeEvent change) {
    return deleteAt(
        change.table(),
        change.key(),
        change.keyRow(),
        change.rowSchemaId(),
        change.sourceTimestampMillis());
  }

  /** A delete of {@code key} at the truncate's position, its row of schema {@code schemaId}. */
  private ChangeEvent deleteAt(
      String tableName, RowKey key, RowData row, int schemaId, long sourceTimestampMillis) {
    return new ChangeEvent(
            tableName, Operation.DELETE, key, row, null, position, sourceTimestampMillis)
        .inSchema(schemaId, row, null, ColumnMask.EMPTY, ColumnMask.EMPTY);
  }

  /** Whether the deletes of a truncate taken since the last flush are still to be made. */
  boolean due() {
    return due;
  }

  /**
   * Deletes every key whose live row came from a change before the truncate (or was in the table
   * before the job): through {@code netChanges}, with a tombstone at the truncate's position; after
   * a flush, which left no change pending. Returns how many.
   *
   * @param schema the table's schema now, in which the deletes carry their key columns (it may have
   *     widened them since the job began)
   * @param jobSchema the schema the job was built with, whose fingerprints the entries keep
   */
  long deleteRowsBefore(
      EntryPlacement entries, NetChanges netChanges, ChangeSchema schema, ChangeSchema jobSchema)
      throws Exception {
    due = false;
    List<Object> keys = new ArrayList<>();
    entries.forEachLive(
        (key, entry) -> {
          SourceSequence sequence = entry.sequence();
          if (sequence != null && sequence.kind() != position.kind()) {
            throw new IllegalStateException(
                "table "
                    + table
                    + " was truncated in the source at "
                    + position
                    + ", which cannot be ordered against the change at "
                    + sequence
                    + " of one of its keys");
          }
          if (sequence == null || sequence.compareTo(position) < 0) {
            keys.add(key);
          }
        });
    EntryStore store = entries.store();
    int schemaId = schema == jobSchema ? ChangeEvent.JOB_SCHEMA : schema.schema().schemaId();
    long deleted = 0;
    for (Object key : keys) {
      entries.setCurrentKey(key);
      AppliedChange prior = store.live();
      RowKey rowKey = netChanges.rowKeyOf(key);
      ChangeEvent delete = deleteAt(table, rowKey, schema.keyRowOf(rowKey), schemaId, 0L);
      netChanges.apply(delete, prior);
      store.putTombstone(new AppliedChange(position, jobSchema.fingerprint(delete), true));
      deleted++;
    }
    return deleted;
  }
}
