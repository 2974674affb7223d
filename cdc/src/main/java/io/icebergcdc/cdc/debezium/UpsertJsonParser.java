package io.icebergcdc.cdc.debezium;

import com.fasterxml.jackson.databind.JsonNode;
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
 * Parses upsert records, as compacted Kafka topics hold them: the key is a JSON object of the
 * primary-key columns (or Debezium's form of it, with {@code schema} and {@code payload}), the
 * value a JSON object of the whole row after the change, and a null value deletes the key.
 *
 * <p>The sequence is the record's position ({@link SourceSequence#kafkaOffset}); a delete, a null
 * value, has nothing else to be ordered by. That orders the changes of a key correctly only if all
 * of them are in one partition, as when the producer partitions by primary key (Kafka's default
 * partitioner does, by the key's bytes).
 *
 * <p>Values are read as {@link JsonRowConverter} reads rows without a schema. Not thread-safe.
 */
public final class UpsertJsonParser {

  private final ChangeSchema changeSchema;
  private final String tableName;
  private final JsonRowConverter converter;

  public UpsertJsonParser(ChangeSchema changeSchema, String tableName) {
    this.changeSchema = changeSchema;
    this.tableName = tableName;
    this.converter = new JsonRowConverter(changeSchema.schema());
  }

  /**
   * Parses one record.
   *
   * @param key the record's key text
   * @param value the record's value text, or null for a delete
   * @param partition the record's partition, for its sequence
   * @param offset the record's offset, for its sequence
   * @param locator where the record is, for messages
   */
  public List<ChangeEvent> parse(
      String key, String value, int partition, long offset, String locator) {
    return parse(key, value, partition, offset, -1, locator);
  }

  /**
   * Parses one record, its timestamp ordering it against records of its key in other partitions.
   *
   * @param timestamp the record's timestamp in milliseconds; negative where it has none
   */
  public List<ChangeEvent> parse(
      String key, String value, int partition, long offset, long timestamp, String locator) {
    try {
      if (key == null) {
        throw new MalformedChangeException(locator + ": the record has no key");
      }
      JsonNode keyNode = DebeziumJsonParser.readTree(key, locator);
      if (keyNode.has("payload") && keyNode.has("schema")) {
        keyNode = keyNode.get("payload");
      }
      RowData keyRow = converter.convert(keyNode, Collections.emptyMap(), false);
      RowKey rowKey = changeSchema.keyOf(keyRow);
      SourceSequence sequence = SourceSequence.kafkaOffset(partition, offset, timestamp);
      if (value == null) {
        return List.of(
            new ChangeEvent(tableName, Operation.DELETE, rowKey, keyRow, null, sequence, 0L));
      }
      RowData row =
          converter.convert(
              DebeziumJsonParser.readTree(value, locator), Collections.emptyMap(), true);
      RowKey rowKeyOfValue = changeSchema.keyOf(row);
      if (!rowKeyOfValue.equals(rowKey)) {
        throw new MalformedChangeException(
            locator
                + ": the value's key ("
                + changeSchema.describeKey(row)
                + ") is not the record's key ("
                + changeSchema.describeKey(keyRow)
                + ")");
      }
      return List.of(new ChangeEvent(tableName, Operation.UPDATE, rowKey, null, row, sequence, 0L));
    } catch (MalformedChangeException e) {
      throw e;
    } catch (RuntimeException e) {
      throw new MalformedChangeException(locator + ": " + e.getMessage(), e);
    }
  }
}
