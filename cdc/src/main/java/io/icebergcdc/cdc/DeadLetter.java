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

  /**
   * @param table the table the change was meant for
   * @param origin where the record came from: a file and line, a topic, partition and offset, or a
   *     key and source position
   * @param reason why it was refused
   * @param record the record's text, or a description of the change where the text is gone
   */
  public DeadLetter(String table, String origin, String reason, String record) {
    this.table = Objects.requireNonNull(table, "table");
    this.origin = Objects.requireNonNull(origin, "origin");
    this.reason = Objects.requireNonNull(reason, "reason");
    this.record = record == null ? "" : record;
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
        && record.equals(that.record);
  }

  @Override
  public int hashCode() {
    return Objects.hash(table, origin, reason, record);
  }

  @Override
  public String toString() {
    return table + " " + origin + ": " + reason;
  }
}
