package io.icebergcdc.cdc.debezium;

import org.apache.flink.table.data.DecimalData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.TimestampData;

/** Turns the value of a user-named sequence column into the number that orders changes. */
final class SequenceValues {

  private SequenceValues() {}

  static long toLong(Object value, String column) {
    if (value instanceof Integer || value instanceof Long) {
      return ((Number) value).longValue();
    }
    if (value instanceof TimestampData) {
      TimestampData ts = (TimestampData) value;
      return ts.getMillisecond() * 1_000L + ts.getNanoOfMillisecond() / 1_000;
    }
    if (value instanceof DecimalData && ((DecimalData) value).scale() == 0) {
      return ((DecimalData) value).toBigDecimal().longValueExact();
    }
    if (value instanceof StringData) {
      try {
        return Long.parseLong(value.toString());
      } catch (NumberFormatException e) {
        // fall through to the error below
      }
    }
    throw new IllegalArgumentException(
        "sequence column '"
            + column
            + "' must hold an integer or a timestamp, not "
            + value.getClass().getSimpleName()
            + " "
            + value);
  }
}
