package io.icebergcdc.capture;

import java.util.Objects;

/**
 * One data change captured by {@link DebeziumSource}: the Debezium topic it belongs to ({@code
 * prefix.schema.table} for PostgreSQL, {@code prefix.database.table} for MySQL and MariaDB), the
 * change event's payload in Debezium's JSON form, as Kafka Connect's JSON converter writes it, and
 * the event's Connect schema as JSON, which only the first record of a topic after the source
 * (re)started and the first after the table's schema changed carry: a record without one has the
 * schema of the topic's previous record. Records of one source reach its router in order (both run
 * at parallelism 1, chained).
 *
 * <p>A Flink POJO: public fields and a public no-argument constructor.
 */
public final class DebeziumRecord {

  public String topic;
  public String json;
  public String schema;

  public DebeziumRecord() {}

  public DebeziumRecord(String topic, String json, String schema) {
    this.topic = topic;
    this.json = json;
    this.schema = schema;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof DebeziumRecord
        && Objects.equals(topic, ((DebeziumRecord) o).topic)
        && Objects.equals(json, ((DebeziumRecord) o).json)
        && Objects.equals(schema, ((DebeziumRecord) o).schema);
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
