package io.icebergcdc.cdc;

import java.util.Objects;

/**
 * A change the applier could not apply and, at the user's request, set aside instead of failing:
 * where it came from, why it was refused, and the record itself as far as it is known.
 */
public final class DeadLetter {

  /**
   * The Flink accumulator in which the parsers count the records they write to the dead-letter
   * output: a bounded job reports it when it ends.
   */
  public static final String ACCUMULATOR = "iceberg-cdc.dead-lettered-records";

  private final String table;
  private final String origin;
  private final String reason;
  private final String record;
  private final String writtenAs;

  /**
   * @param table the table the change was meant for
   * @param origin where the record came from: a file and line, a topic, partition and offset, or a
   *     key and source position
   * @param reason why it was refused
   * @param record the record's text, or a description of the change where the text is gone
   */
  public DeadLetter(String table, String origin, String reason, String record) {
    this(table, origin, reason, record, null);
  }

  private DeadLetter(String table, String origin, String reason, String record, String writtenAs) {
    this.table = Objects.requireNonNull(table, "table");
    this.origin = Objects.requireNonNull(origin, "origin");
    this.reason = Objects.requireNonNull(reason, "reason");
    this.record = record == null ? "" : record;
    this.writtenAs = writtenAs;
  }

  /**
   * This dead letter, of a table whose changes reach the writer of several tables named {@code
   * name} ({@link ChangeEvent#table()} there): its Iceberg table, by which the committer counts it
   * in that table's summaries even where the job met the table only while it ran. A null name, for
   * a table written by a writer of its own, leaves it without one.
   */
  public DeadLetter writtenAs(String name) {
    return new DeadLetter(table, origin, reason, record, name);
  }

  /**
   * The name the changes of this dead letter's table carry to the writer of several tables; null
   * where they go to a writer of their own, or where the record's table is not known.
   */
  public String writtenAs() {
    return writtenAs;
  }

  public String table() {
    return table;
  }

  public String origin() {
    return origin;
  }

  public String reason() {
    return reason;
  }

  public String record() {
    return record;
  }

  @Override
  public boolean equals(Object o) {
    if (!(o instanceof DeadLetter)) {
      return false;
    }
    DeadLetter that = (DeadLetter) o;
    return table.equals(that.table)
        && origin.equals(that.origin)
        && reason.equals(that.reason)
        && record.equals(that.record)
        && Objects.equals(writtenAs, that.writtenAs);
  }

  @Override
  public int hashCode() {
    return Objects.hash(table, origin, reason, record, writtenAs);
  }

  @Override
  public String toString() {
    return table + " " + origin + ": " + reason;
  }
}
