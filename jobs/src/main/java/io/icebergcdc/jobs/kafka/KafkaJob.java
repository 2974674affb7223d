package io.icebergcdc.jobs.kafka;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.flink.configuration.Configuration;

/**
 * What an {@code apply --source kafka} job does: which change topics it reads, how, and where the
 * Iceberg tables go.
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
 * @param kafkaProperties further consumer properties (security, say)
 * @param tableTemplate the Iceberg table of each topic: {@code {topic}} (its dots made underscores)
 *     and {@code {table}} (the part of its name after the last dot); the part before the template's
 *     last dot is the namespace
 * @param primaryKey the key of tables the job creates; empty to take it from the records' key
 *     schema
 * @param sequenceColumn a column that orders changes of a key, or null for the source position the
 *     events carry
 * @param warehouse the Hadoop catalog's warehouse directory
 * @param formatVersion the format version of tables the job creates
 * @param parallelism the parallelism of source, dedup and writers
 * @param checkpointInterval how often to checkpoint, and so to commit
 * @param checkpointDirectory where checkpoints are kept
 * @param stateBackend {@code hashmap} or {@code rocksdb}
 * @param sinkOptions sink and dedup options
 * @param deadLetterPath a directory for records that cannot be applied, or null
 * @param deadLetterTopic a Kafka topic of the same cluster for records that cannot be applied, or
 *     null; with neither, such a record fails the job
 * @param restoreFrom a checkpoint or savepoint to resume from, or null
 * @param restartAttempts how often the job restarts after a failure before it gives up
 */
public record KafkaJob(
    String bootstrapServers,
    List<String> topics,
    String topicPattern,
    String groupId,
    String startingOffsets,
    String format,
    Map<String, String> kafkaProperties,
    String tableTemplate,
    List<String> primaryKey,
    String sequenceColumn,
    String warehouse,
    int formatVersion,
    int parallelism,
    Duration checkpointInterval,
    String checkpointDirectory,
    String stateBackend,
    Configuration sinkOptions,
    String deadLetterPath,
    String deadLetterTopic,
    String restoreFrom,
    int restartAttempts) {

  public static final String DEBEZIUM_JSON = "debezium-json";
  public static final String UPSERT_JSON = "upsert-json";
  public static final String MAXWELL_JSON = "maxwell-json";

  public KafkaJob {
    if (!format.equals(DEBEZIUM_JSON)
        && !format.equals(UPSERT_JSON)
        && !format.equals(MAXWELL_JSON)) {
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
          "upsert-json records are ordered by partition and offset: a delete (a null value)"
              + " carries no sequence column");
    }
  }

  /** The Iceberg table name of a topic. */
  public String targetName(String topic) {
    return tableTemplate
        .replace("{topic}", topic.replace('.', '_'))
        .replace("{table}", topic.substring(topic.lastIndexOf('.') + 1));
  }

  /** The same job, resuming from a checkpoint (or from its starting offsets if null). */
  public KafkaJob restoringFrom(String checkpoint) {
    return new KafkaJob(
        bootstrapServers,
        topics,
        topicPattern,
        groupId,
        startingOffsets,
        format,
        kafkaProperties,
        tableTemplate,
        primaryKey,
        sequenceColumn,
        warehouse,
        formatVersion,
        parallelism,
        checkpointInterval,
        checkpointDirectory,
        stateBackend,
        sinkOptions,
        deadLetterPath,
        deadLetterTopic,
        checkpoint,
        restartAttempts);
  }
}
