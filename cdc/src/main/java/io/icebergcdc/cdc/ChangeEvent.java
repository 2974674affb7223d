package io.icebergcdc.cdc;

import java.util.Objects;
import org.apache.flink.table.data.RowData;

/**
 * One change to one row of one table, as captured by a source.
 *
 * <p>Rows are Flink {@link RowData} in the internal representation of the table's schema (see
 * {@link ChangeSchema}). An upsert ({@link Operation#isUpsert()}) carries the row after the change;
 * a delete carries the row before it, in which at least the key columns are set. A change of
 * primary key never appears as one event: sources and parsers split it into a delete of the old key
 * and an insert of the new one.
 *
 * <p>An upsert may lack the values of some columns that the source did not send ({@link
 * #unavailableColumns()}: PostgreSQL leaves out a TOASTed value that an update did not change, and
 * Debezium puts a placeholder there). Those columns are null in the row until the dedup or the
 * writer fills them from the key's current row; {@link #missingColumns()} says which still lack
 * their value.
 *
 * <p>Instances are immutable.
 */
public final class ChangeEvent {

  /**
   * The {@link #rowSchemaId()} of a change whose rows are in the schema the job was built with for
   * its table: every change but those of a table whose schema changed while the job runs.
   */
  public static final int JOB_SCHEMA = -1;

  private final String table;
  private final Operation operation;
  private final RowKey key;
  private final RowData before;
  private final RowData after;
  private final SourceSequence sequence;
  private final long sourceTimestampMillis;
  private final String originPartition;
  private final long originOffset;
  private final ColumnMask unavailable;
  private final ColumnMask missing;
  private final int rowSchemaId;

  public ChangeEvent(
      String table,
      Operation operation,
      RowKey key,
      RowData before,
      RowData after,
      SourceSequence sequence,
      long sourceTimestampMillis) {
    this(
        table,
        operation,
        key,
        before,
        after,
        sequence,
        sourceTimestampMillis,
        null,
        -1L,
        ColumnMask.EMPTY,
        ColumnMask.EMPTY,
        JOB_SCHEMA);
  }

  private ChangeEvent(
      String table,
      Operation operation,
      RowKey key,
      RowData before,
      RowData after,
      SourceSequence sequence,
      long sourceTimestampMillis,
      String originPartition,
      long originOffset,
      ColumnMask unavailable,
      ColumnMask missing,
      int rowSchemaId) {
    this.rowSchemaId = rowSchemaId;
    this.originPartition = originPartition;
    this.originOffset = originOffset;
    this.table = Objects.requireNonNull(table, "table");
    this.operation = Objects.requireNonNull(operation, "operation");
    this.key = Objects.requireNonNull(key, "key");
    this.sequence = Objects.requireNonNull(sequence, "sequence");
    if (operation.isUpsert() && after == null) {
      throw new IllegalArgumentException(operation + " of key " + key + " has no row after");
    }
    if (operation == Operation.TRUNCATE && (before != null || after != null)) {
      throw new IllegalArgumentException("a TRUNCATE has no rows");
    }
    if (operation == Operation.DELETE && before == null) {
      throw new IllegalArgumentException("DELETE of key " + key + " has no row before");
    }
    this.before = before;
    this.after = after;
    this.sourceTimestampMillis = sourceTimestampMillis;
    this.unavailable = Objects.requireNonNull(unavailable, "unavailable");
    this.missing = Objects.requireNonNull(missing, "missing");
    if (!missing.minus(unavailable).isEmpty()) {
      throw new IllegalArgumentException(
          "columns " + missing + " are missing but not among the unavailable " + unavailable);
    }
    if (!operation.isUpsert() && !unavailable.isEmpty()) {
      throw new IllegalArgumentException("a DELETE of key " + key + " has unavailable columns");
    }
  }

  public String table() {
    return table;
  }

  public Operation operation() {
    return operation;
  }

  public RowKey key() {
    return key;
  }

  /** The row before the change; null where the source does not give it (inserts, reads). */
  public RowData before() {
    return before;
  }

  /** The row after the change; null for deletes. */
  public RowData after() {
    return after;
  }

  /**
   * The row that identifies the change's key: the row after an upsert, before a delete; null for a
   * truncate.
   */
  public RowData keyRow() {
    return operation.isUpsert() ? after : before;
  }

  public SourceSequence sequence() {
    return sequence;
  }

  /** When the source recorded the change, in epoch milliseconds; 0 where unknown. */
  public long sourceTimestampMillis() {
    return sourceTimestampMillis;
  }

  /**
   * The Kafka topic partition ({@code topic/partition}) the change was read from, or null if it was
   * not read from Kafka.
   */
  public String originPartition() {
    return originPartition;
  }

  /** The offset of the Kafka record the change was read from; -1 if it was not read from Kafka. */
  public long originOffset() {
    return originOffset;
  }

  /**
   * A truncate of {@code table} at {@code sequence}: no rows, and no key until it is copied for
   * each writer subtask ({@link TruncateCopies}).
   */
  public static ChangeEvent truncate(
      String table, SourceSequence sequence, long sourceTimestampMillis) {
    return new ChangeEvent(
        table,
        Operation.TRUNCATE,
        TruncateCopies.NO_KEY,
        null,
        null,
        sequence,
        sourceTimestampMillis);
  }

  /** The same truncate with the key of one of its copies ({@link TruncateCopies}). */
  public ChangeEvent withKey(RowKey newKey) {
    if (operation != Operation.TRUNCATE) {
      throw new IllegalStateException("only a truncate's copies take another key");
    }
    return new ChangeEvent(
        table,
        operation,
        newKey,
        before,
        after,
        sequence,
        sourceTimestampMillis,
        originPartition,
        originOffset,
        unavailable,
        missing,
        rowSchemaId);
  }

  /** This change as one of {@code newTable}, by the name a router of several tables gives it. */
  public ChangeEvent withTable(String newTable) {
    return newTable.equals(table)
        ? this
        : new ChangeEvent(
            newTable,
            operation,
            key,
            before,
            after,
            sequence,
            sourceTimestampMillis,
            originPartition,
            originOffset,
            unavailable,
            missing,
            rowSchemaId);
  }

  /**
   * The same change, read from a Kafka record at {@code partition} ({@code topic/n}) and offset.
   */
  public ChangeEvent withOrigin(String partition, long offset) {
    return new ChangeEvent(
        table,
        operation,
        key,
        before,
        after,
        sequence,
        sourceTimestampMillis,
        partition,
        offset,
        unavailable,
        missing,
        rowSchemaId);
  }

  /** The same change at another sequence, as the dedup numbers changes ordered by arrival. */
  public ChangeEvent withSequence(SourceSequence newSequence) {
    return new ChangeEvent(
        table,
        operation,
        key,
        before,
        after,
        newSequence,
        sourceTimestampMillis,
        originPartition,
        originOffset,
        unavailable,
        missing,
        rowSchemaId);
  }

  /** The same change with another operation, as the dedup emits net changes. */
  public ChangeEvent withOperation(Operation newOperation) {
    return newOperation == operation
        ? this
        : new ChangeEvent(
            table,
            newOperation,
            key,
            before,
            after,
            sequence,
            sourceTimestampMillis,
            originPartition,
            originOffset,
            unavailable,
            missing,
            rowSchemaId);
  }

  /**
   * The id of the Iceberg schema (of the change's table) whose columns the rows hold, in its order;
   * {@link #JOB_SCHEMA} for the schema the job was built with. A source that follows a schema
   * change while the job runs ({@link SchemaEvolution}) gives the changes of the evolved schema its
   * id, and the writer, which knows the table's schemas, reads their rows by it.
   */
  public int rowSchemaId() {
    return rowSchemaId;
  }

  /**
   * The same change with its rows replaced by {@code before} and {@code after}, which hold the
   * columns of the table's schema {@code schemaId} ({@link #rowSchemaId()}), and with the columns
   * the source did not send, and those still missing, at their positions in that schema.
   */
  public ChangeEvent inSchema(
      int schemaId,
      RowData newBefore,
      RowData newAfter,
      ColumnMask newUnavailable,
      ColumnMask newMissing) {
    return new ChangeEvent(
        table,
        operation,
        key,
        newBefore,
        newAfter,
        sequence,
        sourceTimestampMillis,
        originPartition,
        originOffset,
        newUnavailable,
        newMissing,
        schemaId);
  }

  /**
   * The columns of the row after whose values the source did not send (an unchanged TOASTed value
   * of PostgreSQL); empty for nearly every change. They stay unavailable once filled: two
   * deliveries of one change are the same change whether or not one of them was filled.
   */
  public ColumnMask unavailableColumns() {
    return unavailable;
  }

  /** The {@link #unavailableColumns()} whose values are not filled yet: null in the row after. */
  public ColumnMask missingColumns() {
    return missing;
  }

  /** The same upsert, with {@code columns} of its row after not sent by the source. */
  public ChangeEvent withUnavailableColumns(ColumnMask columns) {
    return new ChangeEvent(
        table,
        operation,
        key,
        before,
        after,
        sequence,
        sourceTimestampMillis,
        originPartition,
        originOffset,
        columns,
        columns,
        rowSchemaId);
  }

  /**
   * The same upsert with the row after {@code filled}, in which all of its missing columns but
   * {@code stillMissing} have their values.
   */
  public ChangeEvent withFilledColumns(RowData filled, ColumnMask stillMissing) {
    return new ChangeEvent(
        table,
        operation,
        key,
        before,
        filled,
        sequence,
        sourceTimestampMillis,
        originPartition,
        originOffset,
        unavailable,
        stillMissing,
        rowSchemaId);
  }

  @Override
  public boolean equals(Object o) {
    if (this == o) {
      return true;
    }
    if (!(o instanceof ChangeEvent)) {
      return false;
    }
    ChangeEvent that = (ChangeEvent) o;
    return sourceTimestampMillis == that.sourceTimestampMillis
        && table.equals(that.table)
        && operation == that.operation
        && key.equals(that.key)
        && Objects.equals(before, that.before)
        && Objects.equals(after, that.after)
        && sequence.equals(that.sequence)
        && unavailable.equals(that.unavailable)
        && missing.equals(that.missing)
        && rowSchemaId == that.rowSchemaId;
  }

  @Override
  public int hashCode() {
    return Objects.hash(table, operation, key, sequence);
  }

  @Override
  public String toString() {
    return operation + " " + table + " at " + sequence + (after != null ? " " + after : "");
  }
}
