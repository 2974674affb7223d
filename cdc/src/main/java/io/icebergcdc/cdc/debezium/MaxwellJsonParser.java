package io.icebergcdc.cdc.debezium;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.ChangeSchema;
import io.icebergcdc.cdc.MalformedChangeException;
import io.icebergcdc.cdc.Operation;
import io.icebergcdc.cdc.RowKey;
import io.icebergcdc.cdc.SourceSequence;
import java.util.Collections;
import java.util.List;
import org.apache.flink.table.data.RowData;

/**
 * Parses Maxwell's JSON change records ({@code {"database", "table", "type", "ts", "xid",
 * "xoffset", "position", "data", "old"}}) into {@link ChangeEvent}s of one table.
 *
 * <p>{@code type} is {@code insert}, {@code bootstrap-insert}, {@code update} or {@code delete};
 * {@code bootstrap-start} and {@code bootstrap-complete} mark a bootstrap and yield nothing. {@code
 * data} is the row after an insert or update and the deleted row of a delete; {@code old} holds the
 * previous values of the columns an update changed, so an update whose key columns are in it is a
 * key change: a delete of the old key and an insert of the new one.
 *
 * <p>The sequence is the binlog position, which Maxwell writes with {@code
 * output_binlog_position=true} ({@code "position": "mysql-bin.000003:4015"}), with {@code xoffset}
 * ordering the rows of one event; or a named sequence column. Values are read as {@link
 * JsonRowConverter} reads rows without a schema: Maxwell's {@code 2024-01-02 03:04:05} text for
 * dates and times, numbers for numbers.
 *
 * <p>Not thread-safe.
 */
public final class MaxwellJsonParser {

  private final ChangeSchema changeSchema;
  private final String tableName;
  private final String sequenceColumn;
  private final int sequencePosition;
  private final JsonRowConverter converter;

  /**
   * @param sequenceColumn a column whose value orders the changes of a key, or null to use the
   *     binlog position
   */
  public MaxwellJsonParser(ChangeSchema changeSchema, String tableName, String sequenceColumn) {
    this.changeSchema = changeSchema;
    this.tableName = tableName;
    this.sequenceColumn = sequenceColumn;
    this.sequencePosition =
        sequenceColumn == null
            ? -1
            : DebeziumJsonParser.position(changeSchema, sequenceColumn, tableName);
    this.converter = new JsonRowConverter(changeSchema.schema());
  }

  /**
   * Parses one record.
   *
   * @param json the record's text
   * @param locator where the record is, for messages
   * @return the changes: none for a bootstrap marker, two for a key change, else one
   */
  public List<ChangeEvent> parse(String json, String locator) {
    try {
      JsonNode root = DebeziumJsonParser.readTree(json, locator);
      if (!root.isObject()) {
        throw new MalformedChangeException(locator + ": a Maxwell record must be a JSON object");
      }
      String type = root.path("type").asText("");
      Operation operation;
      switch (type) {
        case "insert":
        case "bootstrap-insert":
          operation = Operation.INSERT;
          break;
        case "update":
          operation = Operation.UPDATE;
          break;
        case "delete":
          operation = Operation.DELETE;
          break;
        case "bootstrap-start":
        case "bootstrap-complete":
          return List.of();
        default:
          throw new MalformedChangeException(
              locator + ": unknown Maxwell record type '" + type + "'");
      }
      JsonNode data = root.get("data");
      if (data == null || !data.isObject()) {
        throw new MalformedChangeException(locator + ": the record has no 'data' row");
      }
      RowData row = converter.convert(data, Collections.emptyMap(), operation.isUpsert());
      RowKey key = key(row, locator);
      SourceSequence sequence = sequence(root, row, locator);
      String table = table(root);
      long ts = root.path("ts").asLong(0L) * 1000L;
      if (operation == Operation.DELETE) {
        return List.of(
            new ChangeEvent(table, operation, key, row, null, sequence.ofDeletedRow(), ts));
      }
      JsonNode old = root.get("old");
      if (operation == Operation.UPDATE && old != null && old.isObject()) {
        ObjectNode before = ((ObjectNode) data).deepCopy();
        old.fields().forEachRemaining(field -> before.set(field.getKey(), field.getValue()));
        RowData beforeRow = converter.convert(before, Collections.emptyMap(), false);
        RowKey oldKey = key(beforeRow, locator);
        if (!oldKey.equals(key)) {
          return List.of(
              new ChangeEvent(table, Operation.DELETE, oldKey, beforeRow, null, sequence, ts),
              new ChangeEvent(table, Operation.INSERT, key, null, row, sequence, ts));
        }
        return List.of(new ChangeEvent(table, operation, key, beforeRow, row, sequence, ts));
      }
      return List.of(new ChangeEvent(table, operation, key, null, row, sequence, ts));
    } catch (MalformedChangeException e) {
      throw e;
    } catch (RuntimeException e) {
      throw new MalformedChangeException(locator + ": " + e.getMessage(), e);
    }
  }

  private RowKey key(RowData row, String locator) {
    try {
      return changeSchema.keyOf(row);
    } catch (IllegalArgumentException e) {
      throw new MalformedChangeException(
          locator + ": the record has no primary key: " + e.getMessage(), e);
    }
  }

  private SourceSequence sequence(JsonNode root, RowData row, String locator) {
    if (sequenceColumn != null) {
      return DebeziumJsonParser.columnSequence(
          changeSchema, row, sequenceColumn, sequencePosition, locator);
    }
    String position = root.path("position").asText("");
    int colon = position.lastIndexOf(':');
    if (colon <= 0) {
      throw new MalformedChangeException(
          locator
              + ": the record has no binlog 'position' (run Maxwell with"
              + " output_binlog_position=true), or name a sequence column");
    }
    try {
      return SourceSequence.mysqlBinlog(
          position.substring(0, colon),
          Long.parseLong(position.substring(colon + 1)),
          root.path("xoffset").asLong(0L));
    } catch (NumberFormatException e) {
      throw new MalformedChangeException(
          locator + ": cannot read the binlog position '" + position + "'", e);
    }
  }

  private String table(JsonNode root) {
    String database = root.path("database").asText(null);
    String table = root.path("table").asText(null);
    if (table == null) {
      return tableName;
    }
    return database == null ? table : database + "." + table;
  }
}
