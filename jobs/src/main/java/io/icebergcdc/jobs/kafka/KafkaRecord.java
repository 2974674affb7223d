package io.icebergcdc.jobs.kafka;

import io.icebergcdc.cdc.MalformedChangeException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Objects;

/**
 * One Kafka record of a change topic: where it was ({@code topic}, {@code partition}, {@code
 * offset}) and the bytes of its key and value, UTF-8 text, either null where the record has none (a
 * null value is a tombstone). Bytes that are not UTF-8 are refused as a malformed change when read
 * as text, not replaced.
 *
 * <p>A Flink POJO: public fields and a public no-argument constructor.
 */
public final class KafkaRecord {

  public String topic;
  public int partition;
  public long offset;
  public byte[] key;
  public byte[] value;

  public KafkaRecord() {}

  /** The record's timestamp in milliseconds; negative where it has none. */
  public long timestamp = -1;

  public KafkaRecord(String topic, int partition, long offset, byte[] key, byte[] value) {
    this(topic, partition, offset, -1, key, value);
  }

  public KafkaRecord(
      String topic, int partition, long offset, long timestamp, byte[] key, byte[] value) {
    this.topic = topic;
    this.partition = partition;
    this.offset = offset;
    this.timestamp = timestamp;
    this.key = key;
    this.value = value;
  }

  /** The key as text; null if the record has none. */
  public String keyText() {
    return text(key, "key");
  }

  /** The value as text; null for a tombstone. */
  public String valueText() {
    return text(value, "value");
  }

  private String text(byte[] bytes, String part) {
    if (bytes == null) {
      return null;
    }
    try {
      return StandardCharsets.UTF_8
          .newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .decode(ByteBuffer.wrap(bytes))
          .toString();
    } catch (CharacterCodingException e) {
      throw new MalformedChangeException(
          "topic " + position() + ": the record's " + part + " is not UTF-8 text", e);
    }
  }

  /** The value, or else the key, for messages and dead letters: bytes not UTF-8 show as U+FFFD. */
  public String describe() {
    return value != null
        ? new String(value, StandardCharsets.UTF_8)
        : "key " + (key == null ? null : new String(key, StandardCharsets.UTF_8));
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
        && Arrays.equals(key, other.key)
        && Arrays.equals(value, other.value);
  }

  @Override
  public int hashCode() {
    return Objects.hash(topic, partition, offset);
  }

  @Override
  public String toString() {
    return position() + " " + describe();
  }
}
