package io.icebergcdc.sink.internal;

import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.util.UUID;
import org.apache.flink.table.data.DecimalData;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.TimestampData;
import org.apache.iceberg.Schema;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/**
 * Builds Flink rows of a table's schema holding only the primary-key columns of records read with
 * Iceberg's generic reader, as the key index's bootstrap needs them.
 */
final class KeyRows {

  private KeyRows() {}

  /**
   * A row of {@code schema} holding the key columns at {@code keyPositions}, read from a record of
   * {@code read}, the table's schema: each by its field id, under the name the table gives it now
   * (renamed since, say).
   */
  static GenericRowData fromRecord(Schema schema, Schema read, int[] keyPositions, Record record) {
    GenericRowData row = new GenericRowData(schema.columns().size());
    for (int pos : keyPositions) {
      Types.NestedField field = schema.columns().get(pos);
      Types.NestedField inTable = read.findField(field.fieldId());
      String name = inTable == null ? field.name() : inTable.name();
      row.setField(pos, toInternal(record.getField(name), field.type()));
    }
    return row;
  }

  private static Object toInternal(Object value, Type type) {
    if (value == null) {
      return null;
    }
    switch (type.typeId()) {
      case STRING:
        return StringData.fromString(value.toString());
      case DECIMAL:
        Types.DecimalType decimal = (Types.DecimalType) type;
        return DecimalData.fromBigDecimal((BigDecimal) value, decimal.precision(), decimal.scale());
      case DATE:
        return (int) ((LocalDate) value).toEpochDay();
      case TIME:
        return (int) (((LocalTime) value).toNanoOfDay() / 1_000_000L);
      case TIMESTAMP:
        return value instanceof OffsetDateTime
            ? TimestampData.fromInstant(((OffsetDateTime) value).toInstant())
            : TimestampData.fromLocalDateTime((LocalDateTime) value);
      case UUID:
        UUID uuid = (UUID) value;
        return ByteBuffer.allocate(16)
            .putLong(uuid.getMostSignificantBits())
            .putLong(uuid.getLeastSignificantBits())
            .array();
      case BINARY:
      case FIXED:
        if (value instanceof ByteBuffer) {
          ByteBuffer buffer = ((ByteBuffer) value).duplicate();
          byte[] bytes = new byte[buffer.remaining()];
          buffer.get(bytes);
          return bytes;
        }
        return value;
      default:
        return value;
    }
  }
}
