package io.icebergcdc.jobs.pipeline;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.icebergcdc.cdc.DeadLetter;
import io.icebergcdc.jobs.definition.DeadLetterOutput;
import io.icebergcdc.jobs.definition.KafkaTopics;
import io.icebergcdc.jobs.definition.SourceDefinition;
import java.nio.file.Paths;
import java.util.Properties;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.serialization.SimpleStringEncoder;
import org.apache.flink.api.common.serialization.SimpleStringSchema;
import org.apache.flink.connector.base.DeliveryGuarantee;
import org.apache.flink.connector.file.sink.FileSink;
import org.apache.flink.connector.kafka.sink.KafkaRecordSerializationSchema;
import org.apache.flink.connector.kafka.sink.KafkaSink;
import org.apache.flink.core.fs.Path;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.functions.sink.filesystem.rollingpolicies.OnCheckpointRollingPolicy;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;

/**
 * The last stage: records that could not be applied, as lines of JSON (table, origin, reason,
 * record), into files under a directory and/or into a Kafka topic of the source's cluster. Both are
 * finished with each checkpoint: a dead letter is visible once the checkpoint whose changes it was
 * refused from is complete, as the table's changes are, and never twice.
 */
final class DeadLetterTranslator {

  private DeadLetterTranslator() {}

  static void write(
      DataStream<DeadLetter> deadLetters, DeadLetterOutput output, SourceDefinition source) {
    if (output.path() == null && output.topic() == null) {
      return;
    }
    DataStream<String> json =
        deadLetters.map(new DeadLetterToJson()).name(OperatorUids.DEAD_LETTERS_AS_JSON_NAME);
    if (output.path() != null) {
      json.sinkTo(
              FileSink.forRowFormat(
                      new Path(directoryUri(output.path())), new SimpleStringEncoder<String>())
                  .withRollingPolicy(OnCheckpointRollingPolicy.build())
                  .build())
          .name(OperatorUids.DEAD_LETTER_FILES_NAME)
          .uid(OperatorUids.DEAD_LETTER_FILES);
    }
    if (output.topic() != null) {
      KafkaTopics kafka = (KafkaTopics) source;
      json.sinkTo(topicSink(kafka, output.topic()))
          .name("dead-letter topic " + output.topic())
          .uid(OperatorUids.DEAD_LETTER_TOPIC);
    }
  }

  /** Kafka transactions committed with each checkpoint. */
  private static KafkaSink<String> topicSink(KafkaTopics kafka, String topic) {
    Properties producer = new Properties();
    producer.putAll(kafka.kafkaProperties());
    producer.remove(ConsumerConfig.ISOLATION_LEVEL_CONFIG);
    // Within the broker's default transaction.max.timeout.ms of 15 minutes.
    producer.putIfAbsent(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, "600000");
    return KafkaSink.<String>builder()
        .setBootstrapServers(kafka.bootstrapServers())
        .setKafkaProducerConfig(producer)
        .setDeliveryGuarantee(DeliveryGuarantee.EXACTLY_ONCE)
        .setTransactionalIdPrefix(transactionalIdPrefix(kafka, topic))
        .setRecordSerializer(
            KafkaRecordSerializationSchema.<String>builder()
                .setTopic(topic)
                .setValueSerializationSchema(new SimpleStringSchema())
                .build())
        .build();
  }

  /**
   * The prefix of the dead-letter producers' transactional ids: the same for every run of a job, so
   * that a restored job aborts the transactions its earlier run left open, and apart for jobs that
   * read other topics or write other dead-letter topics, which would otherwise fence each other's
   * producers where they share a consumer group (the default one, say).
   */
  static String transactionalIdPrefix(KafkaTopics kafka, String deadLetterTopic) {
    // Topics in name order, without the brokers: a job given them in another order, or the
    // cluster by other brokers, is the same job.
    String job =
        new java.util.TreeSet<>(kafka.topics())
            + "|"
            + kafka.topicPattern()
            + "|"
            + deadLetterTopic;
    String digest =
        java.util
            .UUID
            .nameUUIDFromBytes(job.getBytes(java.nio.charset.StandardCharsets.UTF_8))
            .toString()
            .substring(0, 8);
    return "iceberg-cdc-dead-letters-" + kafka.groupId() + "-" + digest;
  }

  /** A directory given as a path or a URI ({@code s3://...}), as a URI. */
  static String directoryUri(String directory) {
    return directory.contains("://") || directory.startsWith("file:")
        ? directory
        : Paths.get(directory).toAbsolutePath().toUri().toString();
  }

  /** Writes a dead letter as one line of JSON: its table, origin, reason and record. */
  static final class DeadLetterToJson implements MapFunction<DeadLetter, String> {
    private static final long serialVersionUID = 1L;
    private static final ObjectMapper MAPPER = new ObjectMapper();

    @Override
    public String map(DeadLetter letter) throws Exception {
      ObjectNode node = MAPPER.createObjectNode();
      node.put("table", letter.table());
      node.put("origin", letter.origin());
      node.put("reason", letter.reason());
      node.put("record", letter.record());
      return MAPPER.writeValueAsString(node);
    }
  }
}
