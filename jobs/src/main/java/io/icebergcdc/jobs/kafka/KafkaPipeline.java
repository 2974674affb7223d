package io.icebergcdc.jobs.kafka;

import com.fasterxml.jackson.databind.JsonNode;
import io.icebergcdc.cdc.BadRecordPolicy;
import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.ChangeSchema;
import io.icebergcdc.cdc.DeadLetter;
import io.icebergcdc.cdc.debezium.DebeziumJsonParseFunction;
import io.icebergcdc.cdc.debezium.DebeziumJsonParser;
import io.icebergcdc.cdc.debezium.DebeziumSchemas;
import io.icebergcdc.cdc.typeutils.ChangeEventTypeInfo;
import io.icebergcdc.jobs.ApplyPipeline;
import io.icebergcdc.sink.CdcTables;
import io.icebergcdc.sink.IcebergCdcSink;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.regex.Pattern;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.serialization.SimpleStringSchema;
import org.apache.flink.connector.base.DeliveryGuarantee;
import org.apache.flink.connector.kafka.sink.KafkaRecordSerializationSchema;
import org.apache.flink.connector.kafka.sink.KafkaSink;
import org.apache.flink.connector.kafka.source.KafkaSource;
import org.apache.flink.connector.kafka.source.enumerator.initializer.OffsetsInitializer;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.flink.CatalogLoader;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetResetStrategy;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * Composes a Kafka job: a {@link KafkaSource} over the change topics (its offsets live in Flink's
 * checkpoints), a router that parses each record for its topic's table, and one {@link
 * IcebergCdcSink} per topic, with operator uids prefixed by the Iceberg table's name. Topics given
 * by a pattern are listed when the job starts; for Debezium JSON, a table missing in the catalog is
 * created from the Connect schema of the first record of its topic that carries one.
 */
public final class KafkaPipeline {

  private static final Duration SCHEMA_LOOKUP_TIMEOUT = Duration.ofSeconds(30);

  private final KafkaJob job;
  private volatile Map<String, TableIdentifier> targets;

  public KafkaPipeline(KafkaJob job) {
    this.job = job;
  }

  /** Starts the job and returns at once. */
  public JobClient start() throws Exception {
    return build().executeAsync(jobName());
  }

  /** Runs the job until it fails or is cancelled. */
  public void run() throws Exception {
    build().execute(jobName());
  }

  /** The Iceberg table of each topic; known once the job is built. */
  public Map<String, TableIdentifier> targets() {
    if (targets == null) {
      throw new IllegalStateException("the Kafka job is not built yet");
    }
    return targets;
  }

  private String jobName() {
    return "iceberg-cdc kafka " + job.bootstrapServers() + " " + targets().keySet();
  }

  StreamExecutionEnvironment build() throws Exception {
    List<String> topics = topics();
    CatalogLoader catalogLoader = ApplyPipeline.catalogLoader(job.warehouse(), Map.of());
    Catalog catalog = catalogLoader.loadCatalog();
    Map<String, TableIdentifier> targets = new LinkedHashMap<>();
    Map<String, ChangeSchema> schemas = new LinkedHashMap<>();
    Map<String, String> tableNames = new LinkedHashMap<>();
    for (String topic : topics) {
      TableIdentifier identifier = TableIdentifier.parse(job.targetName(topic));
      Table table;
      if (catalog.tableExists(identifier)) {
        table = catalog.loadTable(identifier);
        if (!job.primaryKey().isEmpty()) {
          // Checks that the table's key is the one the user named.
          CdcTables.createOrLoad(
              catalog, identifier, null, null, job.formatVersion(), job.primaryKey());
        }
      } else if (!job.format().equals(KafkaJob.DEBEZIUM_JSON)) {
        throw new IllegalArgumentException(
            "table "
                + identifier
                + " does not exist; "
                + job.format()
                + " records carry no schema to create it from, create it first with the primary"
                + " key as identifier fields");
      } else {
        Schema schema = schemaFromTopic(topic, identifier);
        table =
            CdcTables.createOrLoad(
                catalog,
                identifier,
                schema,
                null,
                job.formatVersion(),
                List.copyOf(schema.identifierFieldNames()));
      }
      targets.put(topic, identifier);
      schemas.put(topic, new ChangeSchema(table.schema()));
      tableNames.put(topic, identifier.toString());
    }
    this.targets = targets;

    StreamExecutionEnvironment env =
        ApplyPipeline.environment(
            job.parallelism(),
            job.checkpointInterval(),
            job.checkpointDirectory(),
            job.stateBackend(),
            job.restartAttempts(),
            job.restoreFrom());
    BadRecordPolicy policy =
        job.deadLetterPath() == null && job.deadLetterTopic() == null
            ? BadRecordPolicy.FAIL
            : BadRecordPolicy.DEAD_LETTER;
    KafkaSource<KafkaRecord> source =
        KafkaSource.<KafkaRecord>builder()
            .setBootstrapServers(job.bootstrapServers())
            .setTopics(topics)
            .setGroupId(job.groupId())
            .setStartingOffsets(startingOffsets(job.startingOffsets()))
            .setDeserializer(new KafkaRecordDeserializer())
            .setProperties(properties())
            .build();
    KafkaRouter router =
        new KafkaRouter(schemas, tableNames, job.sequenceColumn(), job.format(), policy);
    SingleOutputStreamOperator<ChangeEvent> routed =
        env.fromSource(source, WatermarkStrategy.noWatermarks(), "Kafka " + topics)
            .uid("kafka-source")
            .process(router)
            .returns(ChangeEventTypeInfo.of(schemas.values().iterator().next()))
            .name("parse and route Kafka changes")
            .uid("route-kafka");

    Map<TableIdentifier, DataStream<ChangeEvent>> changes = new LinkedHashMap<>();
    targets.forEach(
        (topic, table) -> changes.put(table, routed.getSideOutput(router.outputOf(topic))));
    DataStream<DeadLetter> deadLetters =
        ApplyPipeline.applyToTables(
            changes,
            catalogLoader,
            job.sinkOptions(),
            routed.getSideOutput(DebeziumJsonParseFunction.DEAD_LETTERS));
    if (job.deadLetterPath() != null) {
      ApplyPipeline.writeDeadLetters(deadLetters, job.deadLetterPath());
    }
    if (job.deadLetterTopic() != null) {
      writeDeadLetters(deadLetters, job.deadLetterTopic());
    }
    return env;
  }

  /**
   * Writes dead letters as JSON records into a topic of the job's cluster, in Kafka transactions
   * committed with each checkpoint: a consumer reading committed records sees a dead letter once
   * the checkpoint whose changes it was refused from is complete, and never twice.
   */
  private void writeDeadLetters(DataStream<DeadLetter> deadLetters, String topic) {
    Properties producer = new Properties();
    producer.putAll(job.kafkaProperties());
    producer.remove(ConsumerConfig.ISOLATION_LEVEL_CONFIG);
    // Within the broker's default transaction.max.timeout.ms of 15 minutes.
    producer.putIfAbsent(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, "600000");
    deadLetters
        .map(new ApplyPipeline.DeadLetterToJson())
        .name("dead letters as JSON")
        .sinkTo(
            KafkaSink.<String>builder()
                .setBootstrapServers(job.bootstrapServers())
                .setKafkaProducerConfig(producer)
                .setDeliveryGuarantee(DeliveryGuarantee.EXACTLY_ONCE)
                .setTransactionalIdPrefix("iceberg-cdc-dead-letters-" + job.groupId())
                .setRecordSerializer(
                    KafkaRecordSerializationSchema.<String>builder()
                        .setTopic(topic)
                        .setValueSerializationSchema(new SimpleStringSchema())
                        .build())
                .build())
        .name("dead-letter topic " + topic)
        .uid("dead-letter-topic");
  }

  /** Where a job without state starts reading. */
  public static OffsetsInitializer startingOffsets(String option) {
    switch (option) {
      case "earliest":
        return OffsetsInitializer.earliest();
      case "latest":
        return OffsetsInitializer.latest();
      case "committed":
        return OffsetsInitializer.committedOffsets(OffsetResetStrategy.EARLIEST);
      default:
        if (option.startsWith("timestamp:")) {
          try {
            return OffsetsInitializer.timestamp(Long.parseLong(option.substring(10)));
          } catch (NumberFormatException e) {
            // falls through to the message below
          }
        }
        throw new IllegalArgumentException(
            "starting offsets must be earliest, latest, committed or timestamp:<epoch millis>,"
                + " not '"
                + option
                + "'");
    }
  }

  private Properties properties() {
    Properties properties = new Properties();
    properties.putAll(job.kafkaProperties());
    properties.putIfAbsent(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    return properties;
  }

  /** The topics to read: the given ones, or those matching the pattern now. */
  private List<String> topics() throws Exception {
    if (job.topicPattern() == null) {
      return job.topics();
    }
    Properties properties = properties();
    properties.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, job.bootstrapServers());
    properties.remove(ConsumerConfig.ISOLATION_LEVEL_CONFIG);
    Pattern pattern = Pattern.compile(job.topicPattern());
    List<String> matching = new ArrayList<>();
    try (Admin admin = Admin.create(properties)) {
      for (String topic : admin.listTopics().names().get()) {
        if (pattern.matcher(topic).matches()) {
          matching.add(topic);
        }
      }
    }
    if (matching.isEmpty()) {
      throw new IllegalArgumentException(
          "no topic of " + job.bootstrapServers() + " matches " + job.topicPattern());
    }
    matching.sort(null);
    return matching;
  }

  /**
   * The table schema that the first record of the topic with a Connect schema describes, with the
   * primary key given to the job or else the fields of that record's key.
   */
  private Schema schemaFromTopic(String topic, TableIdentifier identifier) {
    Properties properties = properties();
    properties.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, job.bootstrapServers());
    properties.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    try (KafkaConsumer<byte[], byte[]> consumer =
        new KafkaConsumer<>(properties, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
      List<TopicPartition> partitions = new ArrayList<>();
      for (PartitionInfo info : consumer.partitionsFor(topic, SCHEMA_LOOKUP_TIMEOUT)) {
        partitions.add(new TopicPartition(topic, info.partition()));
      }
      consumer.assign(partitions);
      consumer.seekToBeginning(partitions);
      Map<TopicPartition, Long> ends = consumer.endOffsets(partitions);
      long deadline = System.nanoTime() + SCHEMA_LOOKUP_TIMEOUT.toNanos();
      while (System.nanoTime() < deadline) {
        for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(500))) {
          if (record.value() == null) {
            continue;
          }
          String locator = "topic " + topic + "/" + record.partition() + "@" + record.offset();
          JsonNode value =
              DebeziumJsonParser.readTree(
                  new String(record.value(), StandardCharsets.UTF_8), locator);
          if (value.has("schema") && value.has("payload")) {
            List<String> key =
                job.primaryKey().isEmpty() ? keyFields(record.key(), locator) : job.primaryKey();
            return DebeziumSchemas.toIcebergSchema(value.get("schema"), key);
          }
        }
        if (partitions.stream().allMatch(p -> consumer.position(p) >= ends.get(p))) {
          break;
        }
      }
    }
    throw new IllegalArgumentException(
        "table "
            + identifier
            + " does not exist and topic "
            + topic
            + " holds no event with a schema to create it from; create the table first, or write"
            + " the events with Debezium's schemas enabled");
  }

  /** The primary key as Debezium writes it: the fields of the record's key. */
  private static List<String> keyFields(byte[] key, String locator) {
    if (key == null) {
      throw new IllegalArgumentException(
          locator + " has no key to take the primary key from; give --primary-key");
    }
    JsonNode node = DebeziumJsonParser.readTree(new String(key, StandardCharsets.UTF_8), locator);
    JsonNode fields = node.has("payload") ? node.get("payload") : node;
    List<String> names = new ArrayList<>();
    fields.fieldNames().forEachRemaining(names::add);
    if (!fields.isObject() || names.isEmpty()) {
      throw new IllegalArgumentException(
          locator + ": its key is no JSON object of key columns; give --primary-key");
    }
    return names;
  }
}
