package io.icebergcdc.cdc.debezium;

import java.time.Instant;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.regex.Pattern;
import org.apache.flink.table.data.TimestampData;

/**
 * Debezium's temporal values in Flink's internal forms, by the field's semantic type (its unit):
 * {@code io.debezium.time.Time} and Connect's {@code Time} milliseconds, {@code NanoTime} and
 * {@code NanoTimestamp} nanoseconds, {@code Timestamp} and Connect's {@code Timestamp}
 * milliseconds, anything else (Debezium's default {@code MicroTime}, {@code MicroTimestamp})
 * microseconds; ISO-8601 text (also SQL's form with a space) for every temporal type. Shared by the
 * JSON parser and the conversion of Debezium's Connect structs, so that both read a value the same
 * way.
 */
public final class DebeziumTemporal {

  /** A zone offset at the end of ISO-8601 text: {@code +02:00}, {@code -0530}. */
  private static final Pattern TRAILING_OFFSET = Pattern.compile("[+-]\\d\\d:?\\d\\d$");

  private DebeziumTemporal() {}

  private static final long MILLIS_PER_DAY = 86_400_000L;

  /**
   * A time of day in milliseconds, from a number in the unit's scale.
   *
   * @throws IllegalArgumentException for a time outside a day (a MySQL {@code TIME '838:59:59'}, a
   *     negative one, PostgreSQL's {@code '24:00:00'}), which a time of day cannot hold
   */
  public static int timeMillis(long raw, String unit) {
    long millis;
    if ("io.debezium.time.Time".equals(unit) || "org.apache.kafka.connect.data.Time".equals(unit)) {
      millis = raw;
    } else if ("io.debezium.time.NanoTime".equals(unit)) {
      millis = Math.floorDiv(raw, 1_000_000L);
    } else {
      millis = Math.floorDiv(raw, 1_000L);
    }
    if (millis < 0 || millis >= MILLIS_PER_DAY) {
      throw new IllegalArgumentException(
          "a time of day is from 00:00 to 23:59:59.999999, not " + raw + " (" + unit + ")");
    }
    return (int) millis;
  }

  /** A time of day in milliseconds, from ISO-8601 text. */
  public static int timeMillis(String text) {
    return (int) (LocalTime.parse(text).toNanoOfDay() / 1_000_000L);
  }

  /** A timestamp from a number of the unit's scale since the epoch. */
  public static TimestampData fromEpoch(long raw, String unit) {
    if ("io.debezium.time.Timestamp".equals(unit)
        || "org.apache.kafka.connect.data.Timestamp".equals(unit)) {
      return TimestampData.fromEpochMillis(raw);
    }
    if ("io.debezium.time.NanoTimestamp".equals(unit)) {
      return TimestampData.fromEpochMillis(
          Math.floorDiv(raw, 1_000_000L), (int) Math.floorMod(raw, 1_000_000L));
    }
    return TimestampData.fromEpochMillis(
        Math.floorDiv(raw, 1_000L), (int) Math.floorMod(raw, 1_000L) * 1_000);
  }

  /** A timestamp without zone from ISO-8601 text. */
  public static TimestampData timestamp(String text) {
    return TimestampData.fromLocalDateTime(LocalDateTime.parse(isoText(text)));
  }

  /**
   * A timestamp with time zone from ISO-8601 text with an offset or {@code Z}, or without one,
   * which is read as UTC (as Maxwell writes MySQL's {@code timestamp} columns).
   */
  public static TimestampData timestampTz(String raw) {
    String text = isoText(raw);
    Instant instant;
    if (text.endsWith("Z")) {
      instant = Instant.parse(text);
    } else if (text.length() > 19 && TRAILING_OFFSET.matcher(text).find(19)) {
      instant = OffsetDateTime.parse(text).toInstant();
    } else {
      instant = LocalDateTime.parse(text).toInstant(ZoneOffset.UTC);
    }
    return TimestampData.fromInstant(instant);
  }

  /** SQL's {@code 2024-01-02 03:04:05} as ISO-8601's {@code 2024-01-02T03:04:05}. */
  private static String isoText(String text) {
    return text.length() > 10 && text.charAt(10) == ' '
        ? text.substring(0, 10) + 'T' + text.substring(11)
        : text;
  }
}
