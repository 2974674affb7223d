package io.icebergcdc.cdc.debezium;

import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.ChangeSchema;
import io.icebergcdc.cdc.ColumnMask;
import io.icebergcdc.cdc.MalformedChangeException;
import io.icebergcdc.cdc.Operation;
import io.icebergcdc.cdc.RowKey;
import io.icebergcdc.cdc.SourceSequence;
import java.util.List;
import org.apache.flink.table.data.RowData;

/**
 * The change events of one Debezium envelope once its rows are read, however they were read (from
 * JSON or from Kafka Connect structs): an upsert needs its row after, a delete its row before; an
 * update whose key changed becomes a delete of the old key and an insert of the new one, both at
 * the envelope's sequence.
 */
public final class DebeziumChanges {

  private DebeziumChanges() {}

  /**
   * Fails naming {@code locator} if the envelope lacks the row its operation needs.
   *
   * @throws MalformedChangeException if it does
   */
  public static void checkRows(Operation op, RowData before, RowData after, String locator) {
    if (op == Operation.TRUNCATE) {
      return;
    }
    if (op.isUpsert() && after == null) {
      throw new MalformedChangeException(locator + ": a '" + op.code() + "' event has no 'after'");
    }
    if (!op.isUpsert() && before == null) {
      throw new MalformedChangeException(
          locator + ": a delete has no 'before', so its key is unknown");
    }
  }

  /**
   * The changes of an envelope whose rows {@link #checkRows} accepted: one, or two for a change of
   * key.
   *
   * @param unavailable the columns of {@code after} whose values the source did not send
   */
  public static List<ChangeEvent> of(
      ChangeSchema schema,
      String table,
      Operation op,
      RowData before,
      RowData after,
      ColumnMask unavailable,
      SourceSequence sequence,
      long timestampMillis,
      String locator) {
    if (op == Operation.TRUNCATE) {
      return List.of(ChangeEvent.truncate(table, sequence, timestampMillis));
    }
    if (op == Operation.SNAPSHOT_READ && isDebeziumsPostgresSnapshot(sequence)) {
      sequence = SourceSequence.beforeLog(SourceSequence.Kind.POSTGRES_LSN);
    }
    RowKey key = key(schema, op.isUpsert() ? after : before, locator);
    if (op == Operation.UPDATE && before != null) {
      RowKey oldKey = keyIfComplete(schema, before);
      if (oldKey != null && !oldKey.equals(key)) {
        return List.of(
            new ChangeEvent(
                table, Operation.DELETE, oldKey, before, null, sequence, timestampMillis),
            new ChangeEvent(table, Operation.INSERT, key, null, after, sequence, timestampMillis)
                .withUnavailableColumns(unavailable));
      }
    }
    ChangeEvent event = new ChangeEvent(table, op, key, before, after, sequence, timestampMillis);
    return List.of(unavailable.isEmpty() ? event : event.withUnavailableColumns(unavailable));
  }

  /**
   * Whether a read is of Debezium's own snapshot of PostgreSQL ({@code source.sequence} {@code
   * [null, X]}: no commit before it, at the slot's consistent point X). Such a row shows the
   * database at X, and every change the log streams after it is of a transaction committed later;
   * but the first of those carries no last commit either ({@code [null, L]}), and its changes' LSNs
   * may be below X (it began before the slot was consistent). Ordered as {@code [0, X]} against
   * {@code [0, L]}, the snapshot's row would win over that transaction's change of the same key.
   * The row is before the log instead ({@link SourceSequence#beforeLog}), as the chunked snapshot's
   * rows are.
   */
  private static boolean isDebeziumsPostgresSnapshot(SourceSequence sequence) {
    return sequence.kind() == SourceSequence.Kind.POSTGRES_LSN
        && sequence.size() == 2
        && sequence.component(0) == 0;
  }

  private static RowKey key(ChangeSchema schema, RowData row, String locator) {
    try {
      return schema.keyOf(row);
    } catch (IllegalArgumentException e) {
      throw new MalformedChangeException(
          locator + ": the event has no primary key: " + e.getMessage(), e);
    }
  }

  private static RowKey keyIfComplete(ChangeSchema schema, RowData row) {
    for (int pos : schema.keyPositions()) {
      if (row.isNullAt(pos)) {
        return null;
      }
    }
    return schema.keyOf(row);
  }

  /**
   * {@code events} with rows of the table's schema {@code rowSchemaId} ({@link
   * ChangeEvent#rowSchemaId()}), as a source that followed a schema change gives them; themselves
   * for the job's schema.
   */
  public static List<ChangeEvent> inSchema(List<ChangeEvent> events, int rowSchemaId) {
    if (rowSchemaId == ChangeEvent.JOB_SCHEMA) {
      return events;
    }
    List<ChangeEvent> evolved = new java.util.ArrayList<>(events.size());
    for (ChangeEvent event : events) {
      evolved.add(
          event.inSchema(
              rowSchemaId,
              event.before(),
              event.after(),
              event.unavailableColumns(),
              event.missingColumns()));
    }
    return evolved;
  }
}
