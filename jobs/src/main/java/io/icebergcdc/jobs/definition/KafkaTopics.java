package io.icebergcdc.jobs.definition;

import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Kafka topics of change events ({@code apply --source kafka}), each applied to a table of its own.
 *
 * @param bootstrapServers the Kafka cluster
 * @param topics the topics to read, or empty when {@code topicPattern} chooses them
 * @param topicPattern a regular expression over topic names, matched when the job starts, or null
 * @param groupId the consumer group: offsets are committed to it after each checkpoint, for
 *     monitoring and for {@code committed} starting offsets; the job's own position is its
 *     checkpoint
 * @param startingOffsets where a job without state starts: {@code earliest}, {@code latest}, {@code
 *     committed} (the group's, else earliest) or {@code timestamp:<epoch millis>}
 * @param format how records are written: {@code debezium-json} (Debezium's JSON, with or without
 *     schemas), {@code maxwell-json} (Maxwell's JSON) or {@code upsert-json} (a JSON key of key
 *     columns, a JSON row or null to delete)
 * @param kafkaProperties further consumer properties (security, say); never printed
 * @param sequenceColumn a column that orders changes of a key, or null for the source position the
 *     events carry
 */
public record KafkaTopics(
    String bootstrapServers,
    List<String> topics,
    String topicPattern,
    String groupId,
    String startingOffsets,
    String format,
    Map<String, String> kafkaProperties,
    String sequenceColumn)
    implements SourceDefinition, java.io.Serializable {

  public static final String DEBEZIUM_JSON = "debezium-json";
  public static final String UPSERT_JSON = "upsert-json";
  public static final String MAXWELL_JSON = "maxwell-json";

  /** One topic read from its earliest offsets, without Kafka properties or a sequence column. */
  public static KafkaTopics ofTopic(
      String bootstrapServers, String topic, String groupId, String format) {
    return new KafkaTopics(
        bootstrapServers, List.of(topic), null, groupId, "earliest", format, Map.of(), null);
  }

  /** The formats, in the order messages list them. */
  public static final List<String> FORMATS = List.of(DEBEZIUM_JSON, MAXWELL_JSON, UPSERT_JSON);

  public KafkaTopics {
    topics = List.copyOf(topics);
    kafkaProperties = Map.copyOf(kafkaProperties);
    if (!Set.copyOf(FORMATS).contains(format)) {
      throw new IllegalArgumentException(
          "format "
              + format
              + " is not supported; use "
              + DEBEZIUM_JSON
              + ", "
              + MAXWELL_JSON
              + " or "
              + UPSERT_JSON);
    }
    if (format.equals(UPSERT_JSON) && sequenceColumn != null) {
      throw new IllegalArgumentException(
          "--sequence-column does not apply to --format upsert-json, whose records are ordered"
              + " by partition and offset: a delete (a null value) carries no sequence column");
    }
  }

  @Override
  public String origin() {
    return "kafka://" + bootstrapServers + "/" + (topicPattern != null ? topicPattern : topics);
  }

  @Override
  public String toString() {
    return "KafkaTopics["
        + origin()
        + ", group "
        + groupId
        + ", format "
        + format
        + ", properties "
        + kafkaProperties.keySet()
        + "]";
  }
}
