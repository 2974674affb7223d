package io.icebergcdc.capture;

import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.Base64;
import java.util.UUID;
import org.apache.flink.table.data.DecimalData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.TimestampData;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/**
 * The values of a snapshot's columns as JDBC reads them and as Flink rows hold them: the same
 * values the connector's records convert to ({@link StructFieldConversion}) for the types the
 * capture maps (the README's type mapping), so that a row read by a chunk equals the row the log
 * would carry. Key values also travel as text in {@link SnapshotChunk}s and bind back as
 * parameters.
 */
final class SnapshotColumns {

  private static final long NANOS_PER_MILLI = 1_000_000L;

  private SnapshotColumns() {}

  /** Reads a column of a result set into the value a Flink row holds. */
  @FunctionalInterface
  interface Read {
    Object read(ResultSet result, int column) throws SQLException;
  }

  /** The read of a column of {@code type}. */
  static Read reader(Type type) {
    switch (type.typeId()) {
      case BOOLEAN:
        return (result, column) -> nullable(result, result.getBoolean(column));
      case INTEGER:
        return (result, column) -> nullable(result, result.getInt(column));
      case LONG:
        return (result, column) -> nullable(result, result.getLong(column));
      case FLOAT:
        return (result, column) -> nullable(result, result.getFloat(column));
      case DOUBLE:
        return (result, column) -> nullable(result, result.getDouble(column));
      case DECIMAL:
        Types.DecimalType decimal = (Types.DecimalType) type;
        return (result, column) -> {
          BigDecimal value = result.getBigDecimal(column);
          return value == null ? null : decimal(value, decimal);
        };
      case STRING:
        return (result, column) -> {
          String value = result.getString(column);
          return value == null ? null : StringData.fromString(value);
        };
      case UUID:
        return (result, column) -> {
          String value = result.getString(column);
          return value == null ? null : StructFieldConversion.uuidBytes(UUID.fromString(value));
        };
      case DATE:
        return (result, column) -> {
          LocalDate value = result.getObject(column, LocalDate.class);
          return value == null ? null : Math.toIntExact(value.toEpochDay());
        };
      case TIME:
        return (result, column) -> {
          LocalTime value = result.getObject(column, LocalTime.class);
          return value == null ? null : (int) (value.toNanoOfDay() / NANOS_PER_MILLI);
        };
      case TIMESTAMP:
        if (((Types.TimestampType) type).shouldAdjustToUTC()) {
          return (result, column) -> {
            OffsetDateTime value = result.getObject(column, OffsetDateTime.class);
            return value == null ? null : TimestampData.fromInstant(value.toInstant());
          };
        }
        return (result, column) -> {
          LocalDateTime value = result.getObject(column, LocalDateTime.class);
          return value == null ? null : TimestampData.fromLocalDateTime(value);
        };
      case BINARY:
      case FIXED:
        return ResultSet::getBytes;
      default:
        throw new IllegalArgumentException("type " + type + " is not read by the snapshot");
    }
  }

  private static Object nullable(ResultSet result, Object value) throws SQLException {
    return result.wasNull() ? null : value;
  }

  private static DecimalData decimal(BigDecimal value, Types.DecimalType type) {
    DecimalData data =
        DecimalData.fromBigDecimal(value.setScale(type.scale()), type.precision(), type.scale());
    if (data == null) {
      throw new IllegalArgumentException(value + " does not fit " + type);
    }
    return data;
  }

  /**
   * Whether keys of {@code type} can bound chunks: their values compare in the database as they
   * travel as text. Floating-point and time keys cannot (their text or the row's value is not
   * exact); a table keyed by one is read as one chunk.
   */
  static boolean boundsChunks(Type type) {
    switch (type.typeId()) {
      case BOOLEAN:
      case INTEGER:
      case LONG:
      case DECIMAL:
      case STRING:
      case UUID:
      case DATE:
      case TIMESTAMP:
      case BINARY:
      case FIXED:
        return true;
      default:
        return false;
    }
  }

  /**
   * The type that a key column of {@code type} is read and bound as where it bounds chunks: the
   * widest type Iceberg widens it to (an int as a long, a decimal at the greatest precision of its
   * scale), so that a key the source widened while its table is read (values past the old type's
   * range) still bounds chunks. Its values travel in the same text as the narrower type's.
   */
  static Type boundType(Type type) {
    switch (type.typeId()) {
      case INTEGER:
        return Types.LongType.get();
      case DECIMAL:
        return Types.DecimalType.of(38, ((Types.DecimalType) type).scale());
      default:
        return type;
    }
  }

  /** A key value, as a Flink row holds it, in text. */
  static String encode(Type type, Object value) {
    switch (type.typeId()) {
      case DECIMAL:
        return ((DecimalData) value).toBigDecimal().toPlainString();
      case UUID:
        ByteBuffer buffer = ByteBuffer.wrap((byte[]) value);
        return new UUID(buffer.getLong(), buffer.getLong()).toString();
      case TIMESTAMP:
        TimestampData timestamp = (TimestampData) value;
        return timestamp.getMillisecond() + "." + timestamp.getNanoOfMillisecond();
      case BINARY:
      case FIXED:
        return Base64.getEncoder().encodeToString((byte[]) value);
      default:
        return value.toString();
    }
  }

  /** Binds a key value written by {@link #encode} as the statement's parameter {@code index}. */
  static void bind(PreparedStatement statement, int index, Type type, String text)
      throws SQLException {
    switch (type.typeId()) {
      case BOOLEAN:
        statement.setBoolean(index, Boolean.parseBoolean(text));
        break;
      case INTEGER:
        statement.setInt(index, Integer.parseInt(text));
        break;
      case LONG:
        statement.setLong(index, Long.parseLong(text));
        break;
      case DECIMAL:
        statement.setBigDecimal(index, new BigDecimal(text));
        break;
      case STRING:
        statement.setString(index, text);
        break;
      case UUID:
        statement.setObject(index, UUID.fromString(text));
        break;
      case DATE:
        statement.setObject(index, LocalDate.ofEpochDay(Long.parseLong(text)));
        break;
      case TIMESTAMP:
        int dot = text.indexOf('.');
        TimestampData timestamp =
            TimestampData.fromEpochMillis(
                Long.parseLong(text.substring(0, dot)), Integer.parseInt(text.substring(dot + 1)));
        if (((Types.TimestampType) type).shouldAdjustToUTC()) {
          statement.setObject(
              index, OffsetDateTime.ofInstant(timestamp.toInstant(), ZoneOffset.UTC));
        } else {
          statement.setObject(index, timestamp.toLocalDateTime());
        }
        break;
      case BINARY:
      case FIXED:
        statement.setBytes(index, Base64.getDecoder().decode(text));
        break;
      default:
        throw new IllegalArgumentException("a key of type " + type + " does not bound chunks");
    }
  }
}
