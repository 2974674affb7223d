package io.icebergcdc.cdc.source;

import java.util.Objects;

/**
 * One data change captured by {@link DebeziumSource}: the Debezium topic it belongs to ({@code
 * prefix.schema.table} for PostgreSQL, {@code prefix.database.table} for MySQL and MariaDB) and the
 * change event in Debezium's JSON form, with its schema, as Kafka Connect's JSON converter writes
 * it.
 *
 * <p>A Flink POJO: public fields and a public no-argument constructor.
 */
public final class DebeziumRecord {

  public String topic;
  public String json;

  public DebeziumRecord() {}

  public DebeziumRecord(String topic, String json) {
    this.topic = topic;
    this.json = json;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof DebeziumRecord
        && Objects.equals(topic, ((DebeziumRecord) o).topic)
        && Objects.equals(json, ((DebeziumRecord) o).json);
  }

  @Override
  public int hashCode() {
    return Objects.hash(topic, json);
  }

  @Override
  public String toString() {
    return topic + ": " + json;
  }
}
