package io.icebergcdc.jobs.pipeline;

import com.fasterxml.jackson.databind.JsonNode;
import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.ChangeSchema;
import io.icebergcdc.cdc.debezium.DebeziumJsonParser;
import io.icebergcdc.cdc.debezium.DebeziumSchemas;
import io.icebergcdc.dedup.DedupOptions;
import io.icebergcdc.jobs.definition.JobDefinition;
import io.icebergcdc.jobs.definition.JobDefinitionException;
import io.icebergcdc.jobs.definition.KafkaTopics;
import io.icebergcdc.jobs.definition.TableDefinition;
import io.icebergcdc.jobs.kafka.KafkaRecord;
import io.icebergcdc.jobs.kafka.KafkaRecordDeserializer;
import io.icebergcdc.jobs.kafka.KafkaRouter;
import io.icebergcdc.sink.TablePosition;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.regex.Pattern;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.connector.kafka.source.KafkaSource;
import org.apache.flink.connector.kafka.source.KafkaSourceBuilder;
import org.apache.flink.connector.kafka.source.KafkaSourceOptions;
import org.apache.flink.connector.kafka.source.enumerator.initializer.OffsetsInitializer;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetResetStrategy;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * Kafka topics of change events: a {@link KafkaSource} (its offsets live in Flink's checkpoints)
 * and a router that parses each record for its topic's table. Topics given by a pattern are listed
 * when the job starts, and looked for while it runs, and a new one is read from its start: into the
 * tables one writer takes, the router makes its table ready at its first record and the writer and
 * committer take it too ({@link #takesNewTables}, {@link TopicTables}); otherwise it ends the job,
 * which {@link JobRunner#run()} builds again with it. For Debezium JSON, a table missing in the
 * catalog is created from the Connect schema of the first record of its topic that carries one.
 */
final class KafkaSourceTranslator implements SourceTranslator {

  private static final org.slf4j.Logger LOG =
      org.slf4j.LoggerFactory.getLogger(KafkaSourceTranslator.class);

  private static final Duration SCHEMA_LOOKUP_TIMEOUT = Duration.ofSeconds(30);

  /** How often a job whose topics a pattern chose looks for new ones, unless told otherwise. */
  static final Duration TOPIC_DISCOVERY_INTERVAL = Duration.ofSeconds(30);

  /** How long a start waits for the ids of its topics before it goes on without them. */
  private final JobDefinition job;

  private final KafkaTopics kafka;

  /** Where each partition's table stands: the next offset to read, for a job without state. */
  private final Map<TopicPartition, Long> tableOffsets = new LinkedHashMap<>();

  KafkaSourceTranslator(JobDefinition job, KafkaTopics kafka) {
    this.job = job;
    this.kafka = kafka;
  }

  @Override
  public List<TableTarget> prepareTables(TablePreparation preparation) throws Exception {
    List<TableTarget> targets = new ArrayList<>();
    List<String> topics = topics();
    Map<String, TableIdentifier> tableOf = new LinkedHashMap<>();
    topics.forEach(
        topic -> tableOf.put(topic, TableIdentifier.parse(job.tables().nameOfTopic(topic))));
    SinkTranslator.refuseSourcesSharingATable(tableOf);
    Map<String, String> topicIds =
        KafkaTopicIds.describe(adminProperties(), topics, kafka.bootstrapServers());
    if (job.deadLetters().topic() != null) {
      KafkaTopicIds.checkDeadLetterTopic(
          adminProperties(), job.deadLetters().topic(), kafka.bootstrapServers());
    }
    for (String topic : topics) {
      TableIdentifier identifier = tableOf.get(topic);
      Table table =
          tableOfTopic(
              preparation,
              job.tables(),
              job.sinkOptions(),
              kafka.format(),
              identifier,
              () -> schemaFromTopic(kafka, job.tables().primaryKey(), topic, identifier));
      TableChecks.checkSequenceColumn(null, identifier, table.schema(), kafka.sequenceColumn());
      String topicId = topicIds.get(topic);
      targets.add(
          new TableTarget(topic, topic, identifier, new ChangeSchema(table.schema()), topicId));
      String recordedId = TablePosition.kafkaTopicIds(table).get(topic);
      if (recordedId != null && topicId != null && !recordedId.equals(topicId)) {
        if (job.runtime().restoreFrom() != null) {
          // The checkpoint may hold offsets of either topic; the table's cannot tell which.
          LOG.warn(
              "Topic {} was deleted and created again since table {} recorded its offsets (topic"
                  + " id {}, now {}): if the checkpoint to restore from, {}, was taken before"
                  + " that, its offsets are of the old topic and the new topic's records up to"
                  + " them are skipped; start such a job without state instead, which reads the"
                  + " new topic as --starting-offsets says",
              topic,
              identifier,
              recordedId,
              topicId,
              job.runtime().restoreFrom());
          continue;
        }
        LOG.warn(
            "Topic {} was deleted and created again since table {} recorded its offsets (topic"
                + " id {}, now {}): they are not used, and the topic is read as"
                + " --starting-offsets says ({})",
            topic,
            identifier,
            recordedId,
            topicId,
            kafka.startingOffsets());
        continue;
      }
      if (!job.sinkOptions().get(DedupOptions.IGNORE_TABLE_POSITION)) {
        TablePosition.kafkaOffsets(table)
            .forEach(
                (partition, offset) -> {
                  int slash = partition.lastIndexOf('/');
                  if (partition.substring(0, slash).equals(topic)) {
                    tableOffsets.put(
                        new TopicPartition(topic, Integer.parseInt(partition.substring(slash + 1))),
                        offset + 1);
                  }
                });
      }
    }
    if (!tableOffsets.isEmpty()) {
      LOG.info(
          "Without state, the job reads on from the offsets its tables hold: {} (partitions not"
              + " among them start as --starting-offsets says: {})",
          tableOffsets,
          kafka.startingOffsets());
    }
    return targets;
  }

  /**
   * The table of a topic: the existing one, checked against the job's definition, or one created
   * from the schema of the topic's events, which {@code schemaOfTopic} finds (Debezium JSON only).
   */
  static Table tableOfTopic(
      TablePreparation preparation,
      TableDefinition tables,
      org.apache.flink.configuration.Configuration sinkOptions,
      String format,
      TableIdentifier identifier,
      java.util.function.Supplier<Schema> schemaOfTopic) {
    Catalog catalog = preparation.catalog();
    List<String> primaryKey = tables.primaryKey();
    int formatVersion = tables.formatVersionToCreate();
    if (catalog.tableExists(identifier)) {
      TableChecks.check(catalog, identifier, null, tables, sinkOptions);
      Table table = catalog.loadTable(identifier);
      if (!primaryKey.isEmpty()) {
        // Checks that the table's key is the one the user named.
        preparation.createOrLoad(identifier, null, null, formatVersion, primaryKey);
      }
      return table;
    }
    if (!format.equals(KafkaTopics.DEBEZIUM_JSON)) {
      throw new JobDefinitionException(
          "table "
              + identifier
              + " does not exist; "
              + format
              + " records carry no schema to create it from, create it first with the primary"
              + " key as identifier fields");
    }
    Schema schema = schemaOfTopic.get();
    TableChecks.check(catalog, identifier, schema, tables, sinkOptions);
    return preparation.createOrLoad(
        identifier, schema, null, formatVersion, List.copyOf(schema.identifierFieldNames()));
  }

  /**
   * Whether the job takes the topics that appear while it runs without ending: topics chosen by a
   * pattern, into tables that one writer takes with the others. In Debezium JSON a missing table is
   * created from the events' schema; Maxwell's and upsert records carry none, so their tables must
   * exist ({@link TopicTables}).
   */
  @Override
  public boolean takesNewTables(java.util.Set<String> writtenTogether) {
    return kafka.topicPattern() != null && !writtenTogether.isEmpty();
  }

  @Override
  public RoutedChanges translate(
      StreamExecutionEnvironment env,
      List<TableTarget> targets,
      java.util.Set<String> writtenTogether,
      java.util.Set<String> followingSchemaChanges,
      java.util.Set<String> applyingTruncates) {
    Map<String, ChangeSchema> schemas = new LinkedHashMap<>();
    Map<String, String> tableNames = new LinkedHashMap<>();
    List<String> topics = new ArrayList<>();
    for (TableTarget target : targets) {
      schemas.put(target.route(), target.schema());
      tableNames.put(target.route(), target.table().toString());
      topics.add(target.route());
    }
    Pattern pattern = kafka.topicPattern() == null ? null : Pattern.compile(kafka.topicPattern());
    KafkaSourceBuilder<KafkaRecord> builder =
        KafkaSource.<KafkaRecord>builder()
            .setBootstrapServers(kafka.bootstrapServers())
            .setGroupId(kafka.groupId())
            .setStartingOffsets(startingOffsets(kafka.startingOffsets(), tableOffsets))
            .setDeserializer(new KafkaRecordDeserializer())
            .setProperties(sourceProperties(kafka));
    // By pattern, the source finds topics created while the job runs; the router takes a new one
    // in flight (takesNewTables), or ends the job at its first record, and it is built again with
    // that topic's table.
    KafkaSource<KafkaRecord> source =
        (pattern == null ? builder.setTopics(topics) : builder.setTopicPattern(pattern)).build();
    KafkaRouter router =
        new KafkaRouter(
            schemas,
            tableNames,
            RoutedChanges.namesOnMainOutput(targets, writtenTogether),
            kafka.sequenceColumn(),
            kafka.format(),
            job.deadLetters().policy(),
            pattern);
    if (!followingSchemaChanges.isEmpty()) {
      Map<String, TableIdentifier> tables = new LinkedHashMap<>();
      for (TableTarget target : targets) {
        tables.put(target.table().toString(), target.table());
      }
      router.followingSchemaChanges(
          new CatalogSchemaEvolution(job.catalog().loader(), tables), followingSchemaChanges);
    }
    router.applyingTruncates(applyingTruncates);
    if (takesNewTables(writtenTogether)) {
      router.takingNewTopics(
          new TopicTables(
              job,
              kafka,
              new io.icebergcdc.sink.NewTables(
                  new io.icebergcdc.sink.SharedCatalog(job.catalog().loader()),
                  job.sinkOptions(),
                  null,
                  readsInSourceOrder())));
    }
    SingleOutputStreamOperator<ChangeEvent> routed =
        env.fromSource(source, WatermarkStrategy.noWatermarks(), "Kafka " + topics)
            .uid(OperatorUids.KAFKA_SOURCE)
            .process(router)
            .returns(RoutedChanges.mainOutputType(targets, writtenTogether))
            .name(OperatorUids.ROUTE_KAFKA_NAME)
            .uid(OperatorUids.ROUTE_KAFKA);
    return RoutedChanges.ofRouter(
        routed, targets, router::outputOf, target -> target.table().toString(), writtenTogether);
  }

  @Override
  public boolean prefixesSinkUids() {
    return true;
  }

  /** The ids of the topics of the tables that appear while a pattern job runs. */
  @Override
  public io.icebergcdc.sink.NewTables.KafkaTopicIds topicIdsOfNewTables() {
    return kafka.topicPattern() == null
        ? null
        : new KafkaTopicIds(
            adminProperties(), kafka.bootstrapServers(), kafka.topicPattern(), job.tables());
  }

  @Override
  public boolean readsInSourceOrder() {
    return false;
  }

  @Override
  public String jobName(List<TableTarget> targets) {
    return "iceberg-cdc kafka "
        + kafka.bootstrapServers()
        + " "
        + targets.stream().map(TableTarget::route).toList();
  }

  /**
   * Where a job without state starts reading: after the offsets its tables hold where they hold
   * any, else as {@code option} says.
   */
  static OffsetsInitializer startingOffsets(String option, Map<TopicPartition, Long> tableOffsets) {
    OffsetsInitializer configured = startingOffsets(option);
    if (tableOffsets.isEmpty()) {
      return configured;
    }
    return new io.icebergcdc.jobs.kafka.TableOffsetsFirst(
        tableOffsets,
        configured,
        option.equals("latest") ? OffsetResetStrategy.LATEST : OffsetResetStrategy.EARLIEST,
        option.equals("committed"));
  }

  /** Where a job without state starts reading. */
  static OffsetsInitializer startingOffsets(String option) {
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

  /** The consumer's properties: the user's, reading only committed records by default. */
  static Properties consumerProperties(KafkaTopics kafka) {
    Properties properties = new Properties();
    properties.putAll(kafka.kafkaProperties());
    properties.putIfAbsent(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    return properties;
  }

  /**
   * The source's properties: the consumer's, and new topics of a pattern and partitions added to a
   * topic looked for every {@link #TOPIC_DISCOVERY_INTERVAL} (not Flink's five minutes, during
   * which a key that moved to a new partition would stay stale) unless the user's {@code
   * partition.discovery.interval.ms} says otherwise.
   */
  static Properties sourceProperties(KafkaTopics kafka) {
    Properties properties = consumerProperties(kafka);
    properties.putIfAbsent(
        KafkaSourceOptions.PARTITION_DISCOVERY_INTERVAL_MS.key(),
        String.valueOf(TOPIC_DISCOVERY_INTERVAL.toMillis()));
    return properties;
  }

  /** The properties of an admin client of the job's cluster: the consumer's where they apply. */
  private Properties adminProperties() {
    Properties properties = consumerProperties(kafka);
    properties.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
    properties.remove(ConsumerConfig.ISOLATION_LEVEL_CONFIG);
    return properties;
  }

  /** The topics to read: the given ones, or those matching the pattern now. */
  private List<String> topics() throws Exception {
    if (kafka.topicPattern() == null) {
      return kafka.topics();
    }
    Pattern pattern = Pattern.compile(kafka.topicPattern());
    List<String> matching = new ArrayList<>();
    try (Admin admin = Admin.create(adminProperties())) {
      for (String topic : admin.listTopics().names().get()) {
        if (pattern.matcher(topic).matches()) {
          matching.add(topic);
        }
      }
    }
    if (matching.isEmpty()) {
      throw new IllegalArgumentException(
          "no topic of " + kafka.bootstrapServers() + " matches " + kafka.topicPattern());
    }
    matching.sort(null);
    return matching;
  }

  /**
   * The table schema that the first record of the topic with a Connect schema describes, with the
   * primary key given to the job or else the fields of that record's key.
   */
  static Schema schemaFromTopic(
      KafkaTopics kafka, List<String> primaryKey, String topic, TableIdentifier identifier) {
    Properties properties = consumerProperties(kafka);
    properties.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
    properties.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    // A mistyped topic is named below, not created by a broker that creates topics on lookup.
    properties.put(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, "false");
    try (KafkaConsumer<byte[], byte[]> consumer =
        new KafkaConsumer<>(properties, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
      List<TopicPartition> partitions = new ArrayList<>();
      List<PartitionInfo> infos = consumer.partitionsFor(topic, SCHEMA_LOOKUP_TIMEOUT);
      if (infos == null || infos.isEmpty()) {
        // Assigned no partition, the consumer's poll fails with a message that names none.
        throw new IllegalArgumentException(
            "topic "
                + topic
                + " is not on "
                + kafka.bootstrapServers()
                + " (or this consumer may not describe it): its table "
                + identifier
                + " does not exist either, so there is no schema to create it from; create the"
                + " topic, or name the existing ones in --topics");
      }
      for (PartitionInfo info : infos) {
        partitions.add(new TopicPartition(topic, info.partition()));
      }
      consumer.assign(partitions);
      consumer.seekToBeginning(partitions);
      Map<TopicPartition, Long> ends = consumer.endOffsets(partitions);
      long deadline = System.nanoTime() + SCHEMA_LOOKUP_TIMEOUT.toNanos();
      SchemaSearch search = new SchemaSearch(primaryKey);
      while (System.nanoTime() < deadline) {
        for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(500))) {
          Schema schema = search.offer(record);
          if (schema != null) {
            return schema;
          }
        }
        if (partitions.stream().allMatch(p -> consumer.position(p) >= ends.get(p))) {
          break;
        }
      }
      throw search.failure(topic, identifier);
    }
  }

  /**
   * The search of a topic's records, from its start, for the first that tells its table's schema: a
   * Debezium JSON event with its Connect schema and a key (or the job's primary key).
   */
  static final class SchemaSearch {

    private final List<String> primaryKey;

    /** Why the first record with a schema could not tell the table; null if none was met. */
    private IllegalArgumentException untold;

    SchemaSearch(List<String> primaryKey) {
      this.primaryKey = primaryKey;
    }

    /** The schema {@code record} tells; null if it tells none, and the search goes on. */
    Schema offer(ConsumerRecord<byte[], byte[]> record) {
      if (record.value() == null) {
        return null;
      }
      String locator = "topic " + record.topic() + "/" + record.partition() + "@" + record.offset();
      try {
        return schemaOfRecord(record.key(), record.value(), primaryKey, locator);
      } catch (IllegalArgumentException e) {
        // A record that cannot tell the table's key (a truncate has none): a later one may.
        untold = untold == null ? e : untold;
        return null;
      }
    }

    /** Why the search found no schema, once the topic's records are read. */
    IllegalArgumentException failure(String topic, TableIdentifier identifier) {
      return untold != null
          ? untold
          : new IllegalArgumentException(
              "table "
                  + identifier
                  + " does not exist and topic "
                  + topic
                  + " holds no event with a schema to create it from; create the table first, or"
                  + " write the events with Debezium's schemas enabled");
    }
  }

  /**
   * The table schema that a Debezium JSON record's Connect schema describes, with {@code
   * primaryKey}, or if that is empty the fields of the record's key; null if the record has no
   * Connect schema.
   */
  static Schema schemaOfRecord(byte[] key, byte[] value, List<String> primaryKey, String locator) {
    JsonNode tree = DebeziumJsonParser.readTree(new String(value, StandardCharsets.UTF_8), locator);
    if (!tree.has("schema") || !tree.has("payload")) {
      return null;
    }
    if (!primaryKey.isEmpty()) {
      return TableChecks.schemaWithPrimaryKey(
          tree.get("schema"), primaryKey, "the first event with a schema, " + locator);
    }
    return DebeziumSchemas.toIcebergSchema(tree.get("schema"), keyFields(key, locator));
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
