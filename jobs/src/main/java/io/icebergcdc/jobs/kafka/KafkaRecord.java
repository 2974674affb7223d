package io.icebergcdc.jobs.kafka;

import java.util.Objects;

/**
 * One Kafka record of a change topic: where it was ({@code topic}, {@code partition}, {@code
 * offset}) and its key and value as UTF-8 text, either null where the record has none (a null value
 * is a tombstone).
 *
 * <p>A Flink POJO: public fields and a public no-argument constructor.
 */
public final class KafkaRecord {

  public String topic;
  public int partition;
  public long offset;
  public String key;
  public String value;

  public KafkaRecord() {}

  public KafkaRecord(String topic, int partition, long offset, String key, String value) {
    this.topic = topic;
    this.partition = partition;
    this.offset = offset;
    this.key = key;
    this.value = value;
  }

  /** Where the record is, for messages: {@code topic/partition@offset}. */
  public String position() {
    return topic + "/" + partition + "@" + offset;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof KafkaRecord other
        && topic.equals(other.topic)
        && partition == other.partition
        && offset == other.offset
        && Objects.equals(key, other.key)
        && Objects.equals(value, other.value);
  }

  @Override
  public int hashCode() {
    return Objects.hash(topic, partition, offset);
  }

  @Override
  public String toString() {
    return position() + " " + key + " " + value;
  }
}
