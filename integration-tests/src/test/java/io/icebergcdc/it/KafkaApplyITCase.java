package io.icebergcdc.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.icebergcdc.commit.SnapshotSummaryKeys;
import io.icebergcdc.jobs.Checkpoints;
import io.icebergcdc.jobs.definition.DeadLetterOutput;
import io.icebergcdc.jobs.definition.JobDefinition;
import io.icebergcdc.jobs.definition.KafkaTopics;
import io.icebergcdc.jobs.definition.RuntimeDefinition;
import io.icebergcdc.jobs.definition.TableDefinition;
import io.icebergcdc.jobs.demo.ChangelogGenerator;
import io.icebergcdc.jobs.demo.ChangelogGenerator.Changelog;
import io.icebergcdc.jobs.pipeline.JobRunner;
import io.icebergcdc.jobs.pipeline.TableTarget;
import io.icebergcdc.sink.CatalogDefinition;
import io.icebergcdc.sink.TablePosition;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.apache.flink.client.program.ClusterClient;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.test.junit5.InjectClusterClient;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Applies Debezium change topics from a real Kafka broker (KRaft, started by the test) to Iceberg
 * tables: two topics of three partitions each, keyed by primary key, holding generated changelogs
 * with changes out of order and delivered twice, deletes, key changes, and some malformed records.
 * The job is cancelled mid-stream and resumed from its last checkpoint after more records were
 * written; then each table equals its changelog's reference model, the dead-letter output holds
 * exactly the malformed records with their topic, partition and offset, and each checkpoint was
 * committed once.
 */
class KafkaApplyITCase {

  @RegisterExtension static final KafkaBroker KAFKA = new KafkaBroker();

  @RegisterExtension
  static final MiniClusterExtension FLINK =
      new MiniClusterExtension(
          new MiniClusterResourceConfiguration.Builder()
              .setNumberTaskManagers(1)
              .setNumberSlotsPerTaskManager(8)
              .build());

  private static final ObjectMapper MAPPER = new ObjectMapper();

  @TempDir Path dir;

  private JobClient running;

  @AfterEach
  void stop() throws Exception {
    if (running != null && !running.getJobStatus().get().isGloballyTerminalState()) {
      JobClients.cancelAndAwait(running, dir);
    }
  }

  @Test
  void appliesChangeTopicsExactlyOnceThroughACancelAndResume(
      @org.apache.flink.test.junit5.InjectClusterClient
          org.apache.flink.client.program.rest.RestClusterClient<?> flink)
      throws Exception {
    Map<String, Changelog> changelogs = new LinkedHashMap<>();
    changelogs.put(
        "shop.public.items", new ChangelogGenerator(3000, 300, 0.1, 0.05, 11).generate());
    changelogs.put(
        "shop.public.stock", new ChangelogGenerator(2000, 150, 0.1, 0.05, 12).generate());
    List<String> malformed = new ArrayList<>();
    Map<String, List<Map.Entry<String, String>>> records = new LinkedHashMap<>();
    for (Map.Entry<String, Changelog> entry : changelogs.entrySet()) {
      KAFKA.createTopic(entry.getKey(), 3);
      List<Map.Entry<String, String>> topicRecords = new ArrayList<>();
      List<String> lines = entry.getValue().lines();
      for (int i = 0; i < lines.size(); i++) {
        topicRecords.add(Map.entry(ChangelogGenerator.kafkaKeyOf(lines.get(i)), lines.get(i)));
        if (i % 700 == 350) {
          String[] bad = malformedRecords(entry.getKey(), i);
          for (String value : bad) {
            topicRecords.add(Map.entry("{\"id\":-1}", value));
            malformed.add(value);
          }
        }
      }
      records.put(entry.getKey(), topicRecords);
    }

    // The highest offset of a well-formed record in each partition, as the summaries must show.
    Map<String, Map<String, Long>> lastOffsets = new LinkedHashMap<>();
    // The first three fifths of each topic, then the job, cancelled once it has committed.
    for (Map.Entry<String, List<Map.Entry<String, String>>> topic : records.entrySet()) {
      List<Map.Entry<String, String>> list = topic.getValue();
      noteOffsets(lastOffsets, topic.getKey(), list.subList(0, list.size() * 3 / 5), malformed);
    }
    JobDefinition job = job(null);
    JobRunner pipeline = new JobRunner(job);
    running = pipeline.start();
    Catalog catalog = job.catalog().loader().loadCatalog();
    awaitCommitted(catalog, pipeline.targets().stream().map(TableTarget::table).toList());
    // One writer writes the tables and one committer commits them, whatever their number (the
    // pattern may match topics of other tests too).
    List<String> vertices =
        flink.getJobDetails(running.getJobID()).get().getJobVertexInfos().stream()
            .map(vertex -> vertex.getName())
            .toList();
    assertThat(vertices.stream().filter(name -> name.contains("commit to Iceberg")))
        .as("the job's vertices %s", vertices)
        .singleElement()
        .asString()
        .startsWith("commit to Iceberg (" + pipeline.targets().size() + " tables) -> end");
    assertThat(vertices.stream().filter(name -> name.contains("write Parquet files")))
        .as("the job's vertices %s", vertices)
        .singleElement()
        .asString()
        .startsWith(
            "dedup by source sequence, write Parquet files and deletes ("
                + pipeline.targets().size()
                + " tables)");
    JobClients.cancelAndAwait(running);
    running = null;

    // The rest is written while the job is down; it resumes from its last checkpoint.
    for (Map.Entry<String, List<Map.Entry<String, String>>> topic : records.entrySet()) {
      List<Map.Entry<String, String>> list = topic.getValue();
      noteOffsets(
          lastOffsets, topic.getKey(), list.subList(list.size() * 3 / 5, list.size()), malformed);
    }
    String checkpoint =
        Checkpoints.latest(job.runtime().checkpointDirectory()).orElseThrow().toString();
    JobRunner resumed = new JobRunner(job(checkpoint));
    running = resumed.start();

    long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
    for (Map.Entry<String, Changelog> entry : changelogs.entrySet()) {
      Table table = catalog.loadTable(tableOf(resumed, entry.getKey()));
      List<String> differences;
      do {
        assertThat(running.getJobStatus().get().isGloballyTerminalState()).isFalse();
        Thread.sleep(300);
        table.refresh();
        differences = entry.getValue().model().differences(table, 10);
      } while (!differences.isEmpty() && System.nanoTime() < deadline);
      assertThat(differences).as("table %s against its changelog", table.name()).isEmpty();
      assertEachCheckpointCommittedOnce(table);
      String offsets = table.currentSnapshot().summary().get(SnapshotSummaryKeys.KAFKA_OFFSETS);
      StringBuilder expected = new StringBuilder();
      lastOffsets
          .get(entry.getKey())
          .forEach(
              (partition, offset) ->
                  expected
                      .append(expected.length() == 0 ? "" : ",")
                      .append(partition)
                      .append('=')
                      .append(offset));
      assertThat(offsets).as("Kafka offsets of %s", table.name()).isEqualTo(expected.toString());
    }

    List<JsonNode> letters = awaitDeadLetters(malformed.size(), deadline);
    assertThat(letters)
        .extracting(l -> l.get("record").asText())
        .containsExactlyInAnyOrderElementsOf(malformed);
    for (JsonNode letter : letters) {
      assertThat(letter.get("origin").asText())
          .matches("kafka shop\\.public\\.(items|stock)/\\d@\\d+");
      assertThat(letter.get("reason").asText()).isNotBlank();
    }
    // Each counted once, in the summary of the table whose topic it came from.
    long counted = 0;
    for (String topic : changelogs.keySet()) {
      for (org.apache.iceberg.Snapshot snapshot :
          Commits.snapshots(catalog.loadTable(tableOf(resumed, topic)))) {
        counted +=
            Long.parseLong(snapshot.summary().getOrDefault(SnapshotSummaryKeys.DEAD_LETTERED, "0"));
      }
    }
    assertThat(counted).as("dead letters counted in the summaries").isEqualTo(malformed.size());
  }

  /**
   * A topic created while a {@code --topic-pattern} job runs is picked up without ending the job:
   * at the topic's first record the router makes its table ready (in Debezium JSON created from the
   * record's Connect schema; Maxwell's records carry none, so their tables are created first, as
   * the README asks), and the one writer and committer take the table from then on; the new topic
   * is read from its start. The job fails once, just after the first commit to the new table, and
   * Flink restores it as it was built, without the table: the writer and committer take the table
   * back from the restored state. Both tables end equal to their changelogs, each checkpoint
   * committed once, all by one job. A record of each topic that is not JSON goes to the dead-letter
   * output and is counted once in its own table's summaries, the new table's too.
   *
   * <p>With {@code by-partition}, Debezium JSON into tables created first, partitioned by a bucket
   * of their key and distributed by partition ({@code write.distribution-mode = hash}): the stream,
   * keyed before the new topic appeared, hashes its table's keys by their partition from its first
   * change on, in every task that keys it, and the job is not built again for it.
   *
   * <p>With {@code by-key}, Debezium JSON with equality deletes ({@code sink.delete-mode =
   * EQUALITY}): the new table is written by key in the same writer, and both tables have equality
   * delete files, which the other variants' tables have none of (before, such a table had operators
   * of its own, and a topic that appeared ended the job, which was built again with it).
   */
  @ParameterizedTest
  @ValueSource(
      strings = {KafkaTopics.DEBEZIUM_JSON, KafkaTopics.MAXWELL_JSON, "by-partition", "by-key"})
  void readsATopicCreatedWhileAPatternJobRuns(
      String variant, @InjectClusterClient ClusterClient<?> client) throws Exception {
    FailAfterFirstCommitToSecond.FAILED.set(false);
    boolean byPartition = variant.equals("by-partition");
    boolean byKey = variant.equals("by-key");
    String format = byPartition || byKey ? KafkaTopics.DEBEZIUM_JSON : variant;
    boolean maxwell = format.equals(KafkaTopics.MAXWELL_JSON);
    String prefix = maxwell ? "mlate" : byPartition ? "plate" : byKey ? "klate" : "late";
    Changelog first = new ChangelogGenerator(2000, 200, 0.1, 0.05, 21).generate();
    Changelog late = new ChangelogGenerator(1500, 150, 0.1, 0.05, 22).generate();
    List<Map.Entry<String, String>> firstRecords = first.kafkaRecords();
    List<Map.Entry<String, String>> lateRecords = late.kafkaRecords();
    if (maxwell) {
      firstRecords = asMaxwell(firstRecords);
      lateRecords = asMaxwell(lateRecords);
    }
    KAFKA.createTopic(prefix + ".public.first", 2);
    KAFKA.produce(prefix + ".public.first", firstRecords.subList(0, firstRecords.size() / 2));
    JobDefinition job =
        new KafkaJob()
            .topicPattern(prefix + "\\.public\\..*")
            .groupId("iceberg-cdc-it-" + prefix)
            .format(format)
            // New topics looked for every half second rather than every 30 s.
            .kafkaProperties(Map.of("partition.discovery.interval.ms", "500"))
            .tableTemplate("late.{table}")
            .deadLetterPath(dir.resolve("dead-letters").toString())
            .sinkOption("sink.delete-mode", byKey ? "EQUALITY" : "POSITION")
            .restartAttempts(3)
            .build();
    if (maxwell || byPartition) {
      // Maxwell's records carry no schema; tables partitioned and distributed by partition are
      // created by their users (a job creates unpartitioned ones).
      Catalog catalog = job.catalog().loader().loadCatalog();
      org.apache.iceberg.Schema schema =
          io.icebergcdc.cdc.debezium.DebeziumSchemas.toIcebergSchema(
              MAPPER.readTree(first.lines().get(0)).get("schema"), List.of("id"));
      for (String table : List.of("first", "second")) {
        catalog.createTable(
            TableIdentifier.of("late", table),
            schema,
            byPartition
                ? org.apache.iceberg.PartitionSpec.builderFor(schema).bucket("id", 4).build()
                : org.apache.iceberg.PartitionSpec.unpartitioned(),
            byPartition
                ? Map.of("format-version", "3", "write.distribution-mode", "hash")
                : Map.of("format-version", "3"));
      }
    }
    try (BackgroundRun run =
        BackgroundRun.start(new JobRunner(job, new FailAfterFirstCommitToSecond()), client)) {
      Catalog catalog = job.catalog().loader().loadCatalog();
      TableIdentifier firstTable = TableIdentifier.of("late", "first");
      long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
      awaitFirstCommit(run, catalog, firstTable, deadline);

      KAFKA.createTopic(prefix + ".public.second", 2);
      KAFKA.produce(prefix + ".public.second", lateRecords.subList(0, lateRecords.size() / 2));
      TableIdentifier lateTable = TableIdentifier.of("late", "second");
      awaitFirstCommit(run, catalog, lateTable, deadline);
      KAFKA.produce(
          prefix + ".public.first",
          List.of(Map.entry("{\"id\":1}", "not JSON in " + prefix + ".public.first")));
      KAFKA.produce(
          prefix + ".public.second",
          List.of(Map.entry("{\"id\":1}", "not JSON in " + prefix + ".public.second")));
      KAFKA.produce(
          prefix + ".public.first",
          firstRecords.subList(firstRecords.size() / 2, firstRecords.size()));
      KAFKA.produce(
          prefix + ".public.second",
          lateRecords.subList(lateRecords.size() / 2, lateRecords.size()));

      Map<TableIdentifier, Changelog> expected = Map.of(firstTable, first, lateTable, late);
      awaitChangelogs(run, catalog, expected, deadline);
      assertThat(FailAfterFirstCommitToSecond.FAILED).as("the injected failure").isTrue();
      assertThat(catalog.loadTable(lateTable).spec().isPartitioned()).isEqualTo(byPartition);
      for (TableIdentifier table : expected.keySet()) {
        long equalityDeletes = 0;
        for (org.apache.iceberg.Snapshot snapshot : Commits.snapshots(catalog.loadTable(table))) {
          equalityDeletes +=
              Long.parseLong(snapshot.summary().getOrDefault("added-equality-delete-files", "0"));
        }
        assertThat(equalityDeletes > 0).as("equality delete files in %s", table).isEqualTo(byKey);
      }
      assertThat(catalog.loadTable(lateTable).properties().get("iceberg-cdc.keys-hashed-by"))
          .startsWith(byPartition ? "partition-spec:{\"spec-id\":0," : "primary-key");
      assertThat(awaitDeadLetters(2, deadline))
          .extracting(letter -> letter.get("record").asText())
          .containsExactlyInAnyOrder(
              "not JSON in " + prefix + ".public.first",
              "not JSON in " + prefix + ".public.second");
      for (TableIdentifier table : expected.keySet()) {
        long counted = 0;
        for (org.apache.iceberg.Snapshot snapshot : Commits.snapshots(catalog.loadTable(table))) {
          counted +=
              Long.parseLong(
                  snapshot.summary().getOrDefault(SnapshotSummaryKeys.DEAD_LETTERED, "0"));
        }
        assertThat(counted).as("dead letters counted in the summaries of %s", table).isEqualTo(1);
      }
      java.util.Set<String> jobs =
          Commits.jobsThatCommittedEachCheckpointOnce(catalog.loadTable(firstTable));
      assertThat(jobs).as("one job, never ended for the new topic").hasSize(1);
      assertThat(Commits.jobsThatCommittedEachCheckpointOnce(catalog.loadTable(lateTable)))
          .isEqualTo(jobs);
      // The new topic's id is recorded with its offsets, as the job's own topics' ids are, so
      // that a later start tells it from a topic deleted and created again under its name.
      String lateTopic = prefix + ".public.second";
      try (org.apache.kafka.clients.admin.Admin admin = KAFKA.admin()) {
        String id =
            admin
                .describeTopics(List.of(lateTopic))
                .allTopicNames()
                .get()
                .get(lateTopic)
                .topicId()
                .toString();
        assertThat(TablePosition.kafkaTopicIds(catalog.loadTable(lateTable)))
            .containsExactly(Map.entry(lateTopic, id));
      }
    }
  }

  /** Waits until {@code table} exists and has a snapshot, while the job runs. */
  private static void awaitFirstCommit(
      BackgroundRun run, Catalog catalog, TableIdentifier table, long deadline) throws Exception {
    while (!committed(catalog, table)) {
      run.check();
      assertThat(System.nanoTime()).as("a commit to %s", table).isLessThan(deadline);
      Thread.sleep(100);
    }
  }

  /**
   * Whether {@code table} exists and has a snapshot; false while the job creates it (a Hadoop
   * catalog's table read between the writes of its first metadata file and of its version hint).
   */
  private static boolean committed(Catalog catalog, TableIdentifier table) {
    try {
      return catalog.tableExists(table) && catalog.loadTable(table).currentSnapshot() != null;
    } catch (org.apache.iceberg.exceptions.ValidationException e) {
      return false;
    }
  }

  /**
   * Waits until each table equals its changelog, while the job runs; fails with the differences.
   */
  private static void awaitChangelogs(
      BackgroundRun run, Catalog catalog, Map<TableIdentifier, Changelog> expected, long deadline)
      throws Exception {
    for (Map.Entry<TableIdentifier, Changelog> entry : expected.entrySet()) {
      List<String> differences = List.of("not created");
      while (System.nanoTime() < deadline) {
        run.check();
        if (catalog.tableExists(entry.getKey())) {
          differences = entry.getValue().model().differences(catalog.loadTable(entry.getKey()), 10);
          if (differences.isEmpty()) {
            break;
          }
        }
        Thread.sleep(300);
      }
      assertThat(differences).as("table %s against its changelog", entry.getKey()).isEmpty();
    }
  }

  /** Fails the job once, just after the first commit to table {@code late.second}. */
  static final class FailAfterFirstCommitToSecond implements io.icebergcdc.commit.CommitListener {
    private static final long serialVersionUID = 1L;
    static final java.util.concurrent.atomic.AtomicBoolean FAILED =
        new java.util.concurrent.atomic.AtomicBoolean();

    @Override
    public void afterCommit(long checkpointId, org.apache.iceberg.Snapshot snapshot) {
      if (snapshot.manifestListLocation().contains("/late/second/")
          && FAILED.compareAndSet(false, true)) {
        throw new IllegalStateException("injected failure after committing " + checkpointId);
      }
    }
  }

  /**
   * A topic's events change their schema while the job runs (a column added, an int widened to
   * bigint, then a column dropped), among 2,000 changes of the first schema and a few hundred of
   * each later one in one burst: the router evolves the Iceberg table at the first event of the new
   * schema (the dropped column stays in it, null in the rows changed since), and the one writer
   * writes that schema's rows from then on, including events of the old schema that another
   * partition delivers after it. The job fails once, just after its first commit in the new schema,
   * and Flink restarts it: the events after its checkpoint are evolved into the same schema again.
   * The job is never ended for the change: one job committed every checkpoint, once, and the table
   * equals what the events leave. Then it is stopped and resumed from its checkpoint, built from
   * the evolved table, and goes on.
   *
   * <p>Distributed by partition, the table is written by the one writer of the tables too, its keys
   * hashed by their partition; it is partitioned by a bucket of its key, which the change widens
   * from int to bigint as well, and keys beyond the int range come after it. With equality deletes
   * ({@code EQUALITY}) the one writer deletes the table's rows by key; its key is widened as well,
   * and keys beyond the int range deleted.
   */
  @ParameterizedTest
  @ValueSource(strings = {"PRIMARY_KEY", "PARTITION", "EQUALITY"})
  void followsASchemaChangeWhileTheJobRuns(String distribution) throws Exception {
    boolean byPartition = distribution.equals("PARTITION");
    boolean equality = distribution.equals("EQUALITY");
    EvolvingEvents.FailAfterFirstEvolvedCommit.FAILED.set(false);
    // Its own topic, of a table named items too, in the test's own warehouse.
    String topic =
        (byPartition ? "evolve_by_partition" : equality ? "evolve_equality" : "evolve")
            + ".public.items";
    KAFKA.createTopic(topic, 2);
    EvolvingEvents.Changelog changelog =
        new EvolvingEvents.Changelog(1000, byPartition || equality);
    Map<Long, String> model = changelog.model();
    List<Map.Entry<String, String>> before = new ArrayList<>();
    for (long id = 1; id <= 200; id++) {
      before.add(changelog.keyed(false, "c", id, "item " + id, id, null));
    }
    KAFKA.produce(topic, before);
    java.util.function.Function<String, JobDefinition> jobFrom =
        restoreFrom ->
            new KafkaJob()
                .topics(topic)
                .groupId("iceberg-cdc-it-evolve-" + distribution)
                .tableTemplate("evolve.{table}")
                .primaryKey("id")
                .sinkOption(
                    equality ? "sink.delete-mode" : "sink.distribution",
                    equality ? "EQUALITY" : distribution)
                .restoreFrom(restoreFrom)
                .restartAttempts(3)
                .build();
    JobDefinition job = jobFrom.apply(null);
    Catalog catalog = job.catalog().loader().loadCatalog();
    TableIdentifier items = TableIdentifier.of("evolve", "items");
    if (byPartition) {
      // A Kafka job creates unpartitioned tables: this one is created first, as the first events
      // describe it.
      org.apache.iceberg.Schema schema =
          new org.apache.iceberg.Schema(
              List.of(
                  org.apache.iceberg.types.Types.NestedField.required(
                      1, "id", org.apache.iceberg.types.Types.IntegerType.get()),
                  org.apache.iceberg.types.Types.NestedField.optional(
                      2, "name", org.apache.iceberg.types.Types.StringType.get()),
                  org.apache.iceberg.types.Types.NestedField.optional(
                      3, "qty", org.apache.iceberg.types.Types.IntegerType.get())),
              java.util.Set.of(1));
      catalog.createTable(
          items,
          schema,
          org.apache.iceberg.PartitionSpec.builderFor(schema).bucket("id", 4).build(),
          Map.of("format-version", "3"));
    }
    running = new JobRunner(job, new EvolvingEvents.FailAfterFirstEvolvedCommit()).start();
    awaitModel(catalog, items, model);

    // The schema changes come among a run of changes: updates in the first schema, the changes of
    // the evolved one, then of the one without name, all in one burst over both partitions.
    List<Map.Entry<String, String>> after = new ArrayList<>();
    for (int round = 1; round <= 10; round++) {
      for (long id = 1; id <= 200; id++) {
        after.add(changelog.keyed(false, "u", id, "item " + id + " round " + round, id, null));
      }
    }
    for (long id = 1; id <= 100; id++) {
      after.add(changelog.keyed(true, "u", id, "item " + id, 5_000_000_000L + id, "note " + id));
    }
    for (long id = 150; id <= 160; id++) {
      after.add(changelog.keyed(true, "d", id, null, 0, null));
    }
    for (long id = 201; id <= 250; id++) {
      after.add(changelog.keyed(true, "c", id, "new " + id, id, null));
    }
    if (byPartition || equality) {
      for (long id = 5_000_000_000L; id < 5_000_000_050L; id++) {
        after.add(changelog.keyed(true, "c", id, "wide " + id, id, "wide note"));
      }
    }
    if (equality) {
      for (long id = 5_000_000_010L; id < 5_000_000_020L; id++) {
        after.add(changelog.keyed(true, "d", id, null, 0, null));
      }
    }
    // name dropped in the source: rows changed since hold null in it, the others keep theirs.
    for (long id = 1; id <= 30; id++) {
      after.add(changelog.keyedWithoutName("u", id, 7_000_000_000L + id, "no name " + id));
    }
    for (long id = 161; id <= 165; id++) {
      after.add(changelog.keyedWithoutName("d", id, 0, null));
    }
    for (long id = 251; id <= 260; id++) {
      after.add(changelog.keyedWithoutName("c", id, id, "created without name"));
    }
    for (int round = 1; round <= 5; round++) {
      for (long id = 31; id <= 100; id++) {
        after.add(changelog.keyedWithoutName("u", id, id + round, "round " + round));
      }
    }
    KAFKA.produce(topic, after);
    awaitModel(catalog, items, model);

    EvolvingEvents.assertEvolvedByOneJob(catalog.loadTable(items));
    if (equality) {
      long equalityDeletes = 0;
      for (org.apache.iceberg.Snapshot snapshot : catalog.loadTable(items).snapshots()) {
        equalityDeletes +=
            Long.parseLong(snapshot.summary().getOrDefault("added-equality-delete-files", "0"));
      }
      assertThat(equalityDeletes).as("equality delete files written").isPositive();
    }
    if (byPartition || equality) {
      assertThat(catalog.loadTable(items).schema().findField("id").type())
          .isEqualTo(org.apache.iceberg.types.Types.LongType.get());
    }
    assertThat(running.getJobStatus().get().isGloballyTerminalState()).isFalse();

    // Stopped, and resumed by a job built from the evolved table.
    JobClients.cancelAndAwait(running);
    List<Map.Entry<String, String>> later = new ArrayList<>();
    for (long id = 101; id <= 140; id++) {
      later.add(changelog.keyed(true, "u", id, "later " + id, id, "late note"));
    }
    KAFKA.produce(topic, later);
    String checkpoint =
        Checkpoints.latest(job.runtime().checkpointDirectory()).orElseThrow().toString();
    running = new JobRunner(jobFrom.apply(checkpoint)).start();
    awaitModel(catalog, items, model);
    assertThat(Commits.jobsThatCommittedEachCheckpointOnce(catalog.loadTable(items)))
        .as("the job and the one that resumed it")
        .hasSize(2);
  }

  /**
   * A truncate among a topic's events, over two partitions, is applied: the rows of the changes
   * before it are deleted, wherever they were read from, and those after it are kept, whichever
   * partition delivered them first. The table then equals what the events leave. A job started
   * again without state, from the offsets its table holds, still drops a change from before the
   * truncate that a partition delivers late: the table's summaries say where it was truncated.
   */
  @Test
  void appliesATruncate() throws Exception {
    String topic = "truncating.public.items";
    KAFKA.createTopic(topic, 2);
    EvolvingEvents.Changelog changelog = new EvolvingEvents.Changelog(1000);
    List<Map.Entry<String, String>> events = new ArrayList<>();
    for (long id = 1; id <= 300; id++) {
      events.add(changelog.keyed(false, "c", id, "item " + id, id, null));
    }
    for (long id = 1; id <= 50; id++) {
      events.add(changelog.keyed(false, "u", id, "updated " + id, id, null));
    }
    events.add(Map.entry("{\"id\":0}", changelog.truncate()));
    for (long id = 250; id <= 400; id++) {
      events.add(changelog.keyed(false, "c", id, "after " + id, id, null));
    }
    for (long id = 380; id <= 390; id++) {
      events.add(changelog.keyed(false, "d", id, null, 0, null));
    }
    KAFKA.produce(topic, events);
    JobDefinition job =
        new KafkaJob()
            .topics(topic)
            .groupId("iceberg-cdc-it-truncate")
            .tableTemplate("truncating.{table}")
            .primaryKey("id")
            .build();
    running = new JobRunner(job).start();
    Catalog catalog = job.catalog().loader().loadCatalog();
    TableIdentifier items = TableIdentifier.of("truncating", "items");
    awaitModel(catalog, items, changelog.model());
    assertThat(changelog.model()).hasSize(140);
    assertThat(Commits.jobsThatCommittedEachCheckpointOnce(catalog.loadTable(items))).hasSize(1);
    JobClients.cancelAndAwait(running);
    Table table = catalog.loadTable(items);
    assertThat(table.currentSnapshot().summary()).containsKey(SnapshotSummaryKeys.TRUNCATED_AT);
    long lastOfTheFirstJob = table.currentSnapshot().snapshotId();

    // An update from before the truncate (a position below it) of a key the truncate deleted,
    // which a partition behind the others delivers only now; and an insert after it.
    String late = new EvolvingEvents.Changelog(1100).event(false, "u", 10, "late", 10, null);
    KAFKA.produce(
        topic,
        List.of(
            Map.entry("{\"id\":10}", late),
            changelog.keyed(false, "c", 500, "after 500", 500, null)));
    running =
        new JobRunner(
                new KafkaJob()
                    .topics(topic)
                    .groupId("iceberg-cdc-it-truncate-again")
                    .tableTemplate("truncating.{table}")
                    .primaryKey("id")
                    .checkpointDirectory(dir.resolve("checkpoints-again").toString())
                    .build())
            .start();
    awaitModel(catalog, items, changelog.model());
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    Map<String, Long> changes;
    do {
      Thread.sleep(300);
      table.refresh();
      changes = changesSince(table, lastOfTheFirstJob);
    } while (changes.get(SnapshotSummaryKeys.STALE_DROPPED) == 0 && System.nanoTime() < deadline);
    assertThat(changes)
        .as("the second job's snapshots")
        .containsEntry(SnapshotSummaryKeys.ROWS_INSERTED, 1L)
        .containsEntry(SnapshotSummaryKeys.STALE_DROPPED, 1L);
    assertThat(EvolvingEvents.rows(table)).isEqualTo(changelog.model());
  }

  /** Waits until the table holds exactly the model's rows ({@code name qty note} by id). */
  private void awaitModel(Catalog catalog, TableIdentifier identifier, Map<Long, String> model)
      throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
    Map<Long, String> rows = Map.of();
    while (System.nanoTime() < deadline) {
      assertThat(running.getJobStatus().get().isGloballyTerminalState())
          .as("the job ended: %s", running.getJobStatus().get())
          .isFalse();
      if (catalog.tableExists(identifier)) {
        rows = EvolvingEvents.rows(catalog.loadTable(identifier));
        if (rows.equals(model)) {
          return;
        }
      }
      Thread.sleep(300);
    }
    assertThat(rows).as("table %s", identifier).isEqualTo(model);
  }

  /**
   * A job that starts without state (and with a consumer group of its own, so that no committed
   * offsets help it) on a table an earlier job filled reads on after the offsets the table holds:
   * it commits nothing until a new record comes, and then only that record.
   */
  @Test
  void aJobWithoutStateStartsAfterTheOffsetsItsTableHolds() throws Exception {
    String topic = "shop.public.goods";
    Changelog changelog = new ChangelogGenerator(2000, 200, 0.1, 0.05, 21).generate();
    KAFKA.createTopic(topic, 3);
    List<Map.Entry<String, String>> records = new ArrayList<>();
    for (String line : changelog.lines()) {
      records.add(Map.entry(ChangelogGenerator.kafkaKeyOf(line), line));
    }
    KAFKA.produce(topic, records);
    JobDefinition first = goodsJob("first", "earliest");
    JobRunner pipeline = new JobRunner(first);
    running = pipeline.start();
    Catalog catalog = first.catalog().loader().loadCatalog();
    Table table = catalog.loadTable(tableOf(pipeline, topic));
    long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
    while (!changelog.model().differences(table, 1).isEmpty() && System.nanoTime() < deadline) {
      Thread.sleep(300);
      table.refresh();
    }
    assertThat(changelog.model().differences(table, 10)).isEmpty();
    JobClients.cancelAndAwait(running);
    long snapshotsBefore = table.currentSnapshot().snapshotId();

    running = new JobRunner(goodsJob("second", "earliest")).start();
    Thread.sleep(6_000); // twenty checkpoints
    assertThat(running.getJobStatus().get().isGloballyTerminalState()).isFalse();
    table.refresh();
    // The writers may compact what the first job left; no change is applied again.
    assertThat(changesSince(table, snapshotsBefore))
        .as("changes applied again from the topic's start")
        .containsEntry(SnapshotSummaryKeys.ROWS_INSERTED, 0L)
        .containsEntry(SnapshotSummaryKeys.ROWS_UPDATED, 0L)
        .containsEntry(SnapshotSummaryKeys.ROWS_DELETED, 0L)
        .containsEntry(SnapshotSummaryKeys.DUPLICATES_DROPPED, 0L)
        .containsEntry(SnapshotSummaryKeys.STALE_DROPPED, 0L);

    ObjectNode late = (ObjectNode) MAPPER.readTree(changelog.lines().get(1));
    ObjectNode payload = late.has("payload") ? (ObjectNode) late.get("payload") : late;
    ObjectNode row =
        (ObjectNode) (payload.get("after").isNull() ? payload.get("before") : payload.get("after"));
    row.put("id", 999_999L);
    payload.set("after", row);
    payload.putNull("before");
    payload.put("op", "c");
    ((ObjectNode) payload.get("source")).put("lsn", Long.MAX_VALUE / 2);
    KAFKA.produce(topic, List.of(Map.entry("{\"id\":999999}", MAPPER.writeValueAsString(late))));
    deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    Map<String, Long> changes;
    do {
      Thread.sleep(300);
      table.refresh();
      changes = changesSince(table, snapshotsBefore);
    } while (changes.get(SnapshotSummaryKeys.ROWS_INSERTED) == 0 && System.nanoTime() < deadline);
    assertThat(changes)
        .containsEntry(SnapshotSummaryKeys.ROWS_INSERTED, 1L)
        .containsEntry(SnapshotSummaryKeys.ROWS_UPDATED, 0L)
        .containsEntry(SnapshotSummaryKeys.DUPLICATES_DROPPED, 0L);
    JobClients.cancelAndAwait(running);

    // The topic deleted and created again, with as many records as before: the table's offsets are
    // of the old topic. A job without state reads the new topic from its start, not from them.
    recreateTopic(topic, 3);
    List<Map.Entry<String, String>> inserts = new ArrayList<>();
    Set<Long> newKeys = new java.util.TreeSet<>();
    long lsn = Long.MAX_VALUE / 2;
    for (String line : changelog.lines()) {
      ObjectNode event = (ObjectNode) MAPPER.readTree(line);
      ObjectNode insert = event.has("payload") ? (ObjectNode) event.get("payload") : event;
      ObjectNode after =
          (ObjectNode) (insert.get("after").isNull() ? insert.get("before") : insert.get("after"));
      long id = after.get("id").asLong() + 1_000_000L;
      after.put("id", id);
      insert.set("after", after);
      insert.putNull("before");
      insert.put("op", "c");
      ((ObjectNode) insert.get("source")).put("lsn", ++lsn);
      newKeys.add(id);
      inserts.add(Map.entry("{\"id\":" + id + "}", MAPPER.writeValueAsString(event)));
    }
    KAFKA.produce(topic, inserts);
    running = new JobRunner(goodsJob("third", "earliest")).start();
    deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
    long present;
    do {
      Thread.sleep(300);
      table.refresh();
      present = rowsWithIdsAtLeast(table, 1_000_000L);
    } while (present < newKeys.size() && System.nanoTime() < deadline);
    assertThat(present)
        .as("keys of the new topic's records in the table")
        .isEqualTo(newKeys.size());
    String newId;
    try (org.apache.kafka.clients.admin.Admin admin = KAFKA.admin()) {
      newId =
          admin
              .describeTopics(List.of(topic))
              .allTopicNames()
              .get()
              .get(topic)
              .topicId()
              .toString();
    }
    assertThat(table.currentSnapshot().summary())
        .containsEntry(SnapshotSummaryKeys.KAFKA_TOPIC_IDS, topic + "=" + newId);
  }

  /** Deletes a topic and creates it again under its name, once the broker has let it go. */
  private static void recreateTopic(String topic, int partitions) throws Exception {
    try (org.apache.kafka.clients.admin.Admin admin = KAFKA.admin()) {
      admin.deleteTopics(List.of(topic)).all().get();
    }
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    while (true) {
      try {
        KAFKA.createTopic(topic, partitions);
        return;
      } catch (java.util.concurrent.ExecutionException e) {
        if (!(e.getCause() instanceof org.apache.kafka.common.errors.TopicExistsException)
            || System.nanoTime() > deadline) {
          throw e;
        }
        Thread.sleep(200);
      }
    }
  }

  /** How many rows of the table have an id of at least {@code min}. */
  private static long rowsWithIdsAtLeast(Table table, long min) throws Exception {
    long count = 0;
    try (org.apache.iceberg.io.CloseableIterable<org.apache.iceberg.data.Record> rows =
        org.apache.iceberg.data.IcebergGenerics.read(table)
            .where(org.apache.iceberg.expressions.Expressions.greaterThanOrEqual("id", min))
            .build()) {
      for (org.apache.iceberg.data.Record row : rows) {
        if (((Number) row.getField("id")).longValue() >= min) {
          count++;
        }
      }
    }
    return count;
  }

  /** The counts of the snapshots committed after {@code snapshotId}, summed. */
  private static Map<String, Long> changesSince(Table table, long snapshotId) {
    Map<String, Long> sums = new java.util.TreeMap<>();
    List<String> keys =
        List.of(
            SnapshotSummaryKeys.ROWS_INSERTED,
            SnapshotSummaryKeys.ROWS_UPDATED,
            SnapshotSummaryKeys.ROWS_DELETED,
            SnapshotSummaryKeys.DUPLICATES_DROPPED,
            SnapshotSummaryKeys.STALE_DROPPED);
    keys.forEach(k -> sums.put(k, 0L));
    for (Snapshot s :
        org.apache.iceberg.util.SnapshotUtil.ancestorsOf(
            table.currentSnapshot().snapshotId(), table::snapshot)) {
      if (s.snapshotId() == snapshotId) {
        break;
      }
      keys.forEach(k -> sums.merge(k, Long.parseLong(s.summary().getOrDefault(k, "0")), Long::sum));
    }
    return sums;
  }

  private JobDefinition goodsJob(String name, String startingOffsets) {
    return new KafkaJob()
        .topics("shop.public.goods")
        .groupId("iceberg-cdc-it-" + name)
        .startingOffsets(startingOffsets)
        .checkpointDirectory(dir.resolve("checkpoints-" + name).toString())
        .build();
  }

  /**
   * Upsert records (a JSON key, a JSON row or null to delete) on a topic of three partitions keyed
   * by primary key, some delivered twice, some malformed: the table ends as the last record of each
   * key left it, and the malformed records are dead letters.
   */
  @Test
  void appliesUpsertRecordsInPartitionOrder() throws Exception {
    String topic = "upserts.accounts";
    KAFKA.createTopic(topic, 3);
    KAFKA.createTopic("dead-letters.accounts", 1);
    Catalog catalog =
        CatalogDefinition.hadoop(dir.resolve("warehouse").toString()).loader().loadCatalog();
    TableIdentifier identifier = TableIdentifier.of("shop", "accounts");
    catalog.createTable(
        identifier,
        new org.apache.iceberg.Schema(
            List.of(
                org.apache.iceberg.types.Types.NestedField.required(
                    1, "id", org.apache.iceberg.types.Types.LongType.get()),
                org.apache.iceberg.types.Types.NestedField.optional(
                    2, "owner", org.apache.iceberg.types.Types.StringType.get()),
                org.apache.iceberg.types.Types.NestedField.optional(
                    3, "balance", org.apache.iceberg.types.Types.LongType.get())),
            Set.of(1)),
        org.apache.iceberg.PartitionSpec.unpartitioned(),
        Map.of("format-version", "3"));

    java.util.Random random = new java.util.Random(5);
    Map<Long, String> model = new java.util.TreeMap<>();
    List<Map.Entry<String, String>> records = new ArrayList<>();
    List<String> malformed = new ArrayList<>();
    for (int i = 0; i < 4000; i++) {
      long id = random.nextInt(250);
      String key = "{\"id\":" + id + "}";
      if (random.nextInt(10) == 0) {
        records.add(new java.util.AbstractMap.SimpleEntry<>(key, null));
        model.remove(id);
      } else {
        String row = "{\"id\":" + id + ",\"owner\":\"o" + i + "\",\"balance\":" + (i * 3) + "}";
        records.add(Map.entry(key, row));
        if (random.nextInt(20) == 0) {
          records.add(Map.entry(key, row)); // delivered twice
        }
        model.put(id, "id=" + id + " owner=o" + i + " balance=" + (i * 3));
      }
      if (i % 1000 == 500) {
        String wrongKey = "{\"id\":" + (id + 1000) + ",\"owner\":\"x\",\"balance\":1}";
        String notJson = "not json " + i;
        records.add(Map.entry(key, wrongKey));
        records.add(Map.entry(key, notJson));
        malformed.add(wrongKey);
        malformed.add(notJson);
      }
    }
    KAFKA.produce(topic, records);

    running =
        new JobRunner(
                new KafkaJob()
                    .topics(topic)
                    .groupId("iceberg-cdc-upsert-it")
                    .format(KafkaTopics.UPSERT_JSON)
                    .deadLetterTopic("dead-letters.accounts")
                    .build())
            .start();

    List<String> expected = new ArrayList<>(model.values());
    long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
    Table table = catalog.loadTable(identifier);
    List<String> actual = List.of();
    while (!actual.equals(expected) && System.nanoTime() < deadline) {
      assertThat(running.getJobStatus().get().isGloballyTerminalState()).isFalse();
      Thread.sleep(300);
      table.refresh();
      actual = rows(table);
    }
    assertThat(actual).containsExactlyElementsOf(expected);
    // The dead-letter topic, read as committed: each malformed record once.
    assertThat(deadLettersInTopic("dead-letters.accounts", malformed.size(), deadline))
        .extracting(l -> l.get("record").asText())
        .containsExactlyInAnyOrderElementsOf(malformed);
  }

  /**
   * A topic of {@code --topics} that the cluster does not have: the job ends before it runs naming
   * the topic, not with the consumer's "not subscribed to any topics" or the source's failure.
   */
  @Test
  void aTopicThatIsNotThereIsNamedBeforeTheJobRuns() throws Exception {
    assertThatThrownBy(
            () ->
                new JobRunner(
                        new KafkaJob()
                            .topics("no.such.topic")
                            .groupId("iceberg-cdc-missing-it")
                            .build())
                    .start())
        .hasMessageContaining("topic no.such.topic is not on " + KAFKA.bootstrapServers());
    // Beside a topic that is there (whose table the job would make or take), before either.
    KAFKA.createTopic("present.items", 1);
    assertThatThrownBy(
            () ->
                new JobRunner(
                        new KafkaJob()
                            .topics("present.items", "no.such.topic")
                            .groupId("iceberg-cdc-missing-it")
                            .build())
                    .start())
        .hasMessageContaining("topic no.such.topic is not on " + KAFKA.bootstrapServers());
    // A dead-letter topic the cluster lacks, which the job would wait for at its first dead
    // letter, committing nothing meanwhile.
    assertThatThrownBy(
            () ->
                new JobRunner(
                        new KafkaJob()
                            .topics("present.items")
                            .deadLetterTopic("no.such.dead-letters")
                            .groupId("iceberg-cdc-missing-it")
                            .build())
                    .start())
        .hasMessageContaining(
            "--dead-letter-topic no.such.dead-letters is not on " + KAFKA.bootstrapServers());
  }

  /**
   * The changelog of the first test written as Maxwell would have written it (binlog positions from
   * the generated source positions), out of order and with duplicates, into a topic of three
   * partitions: the table ends equal to the changelog's model.
   */
  @Test
  void appliesMaxwellRecordsByBinlogPosition() throws Exception {
    String topic = "maxwell.shop.items";
    KAFKA.createTopic(topic, 3);
    Changelog changelog = new ChangelogGenerator(2000, 200, 0.1, 0.05, 21).generate();
    Catalog catalog =
        CatalogDefinition.hadoop(dir.resolve("warehouse").toString()).loader().loadCatalog();
    TableIdentifier identifier = TableIdentifier.of("shop", "items");
    JsonNode first = MAPPER.readTree(changelog.lines().get(0));
    catalog.createTable(
        identifier,
        io.icebergcdc.cdc.debezium.DebeziumSchemas.toIcebergSchema(
            first.get("schema"), List.of("id")),
        org.apache.iceberg.PartitionSpec.unpartitioned(),
        Map.of("format-version", "2"));
    List<Map.Entry<String, String>> records = new ArrayList<>();
    for (String line : changelog.lines()) {
      records.add(Map.entry(ChangelogGenerator.kafkaKeyOf(line), maxwell(line)));
    }
    KAFKA.produce(topic, records);

    running =
        new JobRunner(
                new KafkaJob()
                    .topics(topic)
                    .groupId("iceberg-cdc-maxwell-it")
                    .format(KafkaTopics.MAXWELL_JSON)
                    .formatVersion(2)
                    .build())
            .start();
    Table table = catalog.loadTable(identifier);
    long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
    List<String> differences;
    do {
      assertThat(running.getJobStatus().get().isGloballyTerminalState()).isFalse();
      Thread.sleep(300);
      table.refresh();
      differences = changelog.model().differences(table, 10);
    } while (!differences.isEmpty() && System.nanoTime() < deadline);
    assertThat(differences).isEmpty();
  }

  /**
   * A Debezium topic applied through a JDBC catalog on the machine's PostgreSQL: the job creates
   * the namespace and the table from the topic's first schema, and the table ends equal to the
   * changelog's model.
   */
  @Test
  void appliesATopicThroughAJdbcCatalog() throws Exception {
    String topic = "jdbc.public.items";
    KAFKA.createTopic(topic, 2);
    Changelog changelog = new ChangelogGenerator(2000, 200, 0.1, 0.05, 23).generate();
    List<Map.Entry<String, String>> records = new ArrayList<>();
    for (String line : changelog.lines()) {
      records.add(Map.entry(ChangelogGenerator.kafkaKeyOf(line), line));
    }
    KAFKA.produce(topic, records);
    CatalogDefinition jdbc =
        JdbcCatalogs.fresh("icebergcdc_kafka_catalog", dir.resolve("jdbc-warehouse").toString());
    JobDefinition hadoopJob =
        new KafkaJob()
            .topics(topic)
            .groupId("iceberg-cdc-jdbc-it")
            .tableTemplate("jdbc_shop.{table}")
            .warehouse(dir.resolve("unused").toString())
            .formatVersion(2)
            .build();
    JobDefinition job =
        new JobDefinition(
            hadoopJob.source(),
            jdbc,
            hadoopJob.tables(),
            hadoopJob.sinkOptions(),
            hadoopJob.deadLetters(),
            hadoopJob.runtime());
    running = new JobRunner(job).start();
    Catalog catalog = jdbc.connect();
    TableIdentifier identifier = TableIdentifier.of("jdbc_shop", "items");
    assertThat(catalog.tableExists(identifier)).as("created before the job runs").isTrue();
    Table table = catalog.loadTable(identifier);
    long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
    List<String> differences;
    do {
      assertThat(running.getJobStatus().get().isGloballyTerminalState()).isFalse();
      Thread.sleep(300);
      table.refresh();
      differences = changelog.model().differences(table, 10);
    } while (!differences.isEmpty() && System.nanoTime() < deadline);
    assertThat(differences).isEmpty();
    Commits.jobsThatCommittedEachCheckpointOnce(table);
    CatalogDefinition.close(catalog);
  }

  /** Debezium records as Maxwell would have written their changes, with the same keys. */
  private static List<Map.Entry<String, String>> asMaxwell(List<Map.Entry<String, String>> records)
      throws Exception {
    List<Map.Entry<String, String>> converted = new ArrayList<>(records.size());
    for (Map.Entry<String, String> record : records) {
      converted.add(Map.entry(record.getKey(), maxwell(record.getValue())));
    }
    return converted;
  }

  /** A generated Debezium event as Maxwell's record of the same change. */
  private static String maxwell(String line) throws Exception {
    JsonNode root = MAPPER.readTree(line);
    boolean withSchema = root.has("payload");
    JsonNode payload = withSchema ? root.get("payload") : root;
    String op = payload.get("op").asText();
    com.fasterxml.jackson.databind.node.ObjectNode record = MAPPER.createObjectNode();
    record.put("database", "shop");
    record.put("table", "items");
    record.put(
        "type",
        switch (op) {
          case "c" -> "insert";
          case "u" -> "update";
          case "d" -> "delete";
          default -> "bootstrap-insert";
        });
    record.put("ts", payload.get("ts_ms").asLong() / 1000);
    record.put("xoffset", 0);
    record.put("position", "mysql-bin.000001:" + payload.get("source").get("lsn").asLong());
    JsonNode before = payload.get("before");
    JsonNode after = payload.get("after");
    record.set("data", maxwellRow(op.equals("d") ? before : after, withSchema));
    if (op.equals("u") && !before.isNull()) {
      com.fasterxml.jackson.databind.node.ObjectNode old = MAPPER.createObjectNode();
      JsonNode beforeRow = maxwellRow(before, withSchema);
      JsonNode afterRow = maxwellRow(after, withSchema);
      beforeRow
          .fields()
          .forEachRemaining(
              f -> {
                if (!f.getValue().equals(afterRow.get(f.getKey()))) {
                  old.set(f.getKey(), f.getValue());
                }
              });
      record.set("old", old);
    }
    return MAPPER.writeValueAsString(record);
  }

  /** A row with the decimal as a number, as Maxwell writes it. */
  private static JsonNode maxwellRow(JsonNode row, boolean base64Decimal) {
    com.fasterxml.jackson.databind.node.ObjectNode copy = row.deepCopy();
    JsonNode price = row.get("price");
    if (price != null && !price.isNull()) {
      java.math.BigDecimal value =
          base64Decimal
              ? new java.math.BigDecimal(
                  new java.math.BigInteger(java.util.Base64.getDecoder().decode(price.asText())), 2)
              : new java.math.BigDecimal(price.asText());
      copy.put("price", value);
    }
    return copy;
  }

  /** The rows of the upsert test's table, by id, as text. */
  private static List<String> rows(Table table) throws Exception {
    Map<Long, String> rows = new java.util.TreeMap<>();
    try (org.apache.iceberg.io.CloseableIterable<org.apache.iceberg.data.Record> records =
        org.apache.iceberg.data.IcebergGenerics.read(table).build()) {
      for (org.apache.iceberg.data.Record r : records) {
        rows.put(
            (Long) r.getField("id"),
            "id="
                + r.getField("id")
                + " owner="
                + r.getField("owner")
                + " balance="
                + r.getField("balance"));
      }
    }
    return new ArrayList<>(rows.values());
  }

  /** Produces records and notes the highest offset of a well-formed one per partition. */
  private static void noteOffsets(
      Map<String, Map<String, Long>> lastOffsets,
      String topic,
      List<Map.Entry<String, String>> records,
      List<String> malformed)
      throws Exception {
    List<RecordMetadata> sent = KAFKA.produce(topic, records);
    Map<String, Long> offsets = lastOffsets.computeIfAbsent(topic, t -> new java.util.TreeMap<>());
    for (int i = 0; i < records.size(); i++) {
      if (!malformed.contains(records.get(i).getValue())) {
        offsets.merge(topic + "/" + sent.get(i).partition(), sent.get(i).offset(), Math::max);
      }
    }
  }

  private JobDefinition job(String restoreFrom) {
    return new KafkaJob()
        .topicPattern("shop\\.public\\..*")
        .deadLetterPath(dir.resolve("dead-letters").toString())
        .restoreFrom(restoreFrom)
        .build();
  }

  private static TableIdentifier tableOf(JobRunner runner, String topic) {
    return runner.targets().stream()
        .filter(t -> t.source().equals(topic))
        .findFirst()
        .orElseThrow()
        .table();
  }

  /** A Kafka job of the test, in the order of the fields the tests set. */
  /**
   * A Kafka job of these tests: Debezium JSON from the earliest offsets into {@code shop.{table}}
   * of the test's Hadoop warehouse, format version 3, parallelism 2, checkpoints every 300 ms on
   * the heap, no restarts; each test sets what it needs otherwise.
   */
  private final class KafkaJob {
    private List<String> topics = List.of();
    private String topicPattern;
    private String groupId = "iceberg-cdc-it";
    private String startingOffsets = "earliest";
    private String format = KafkaTopics.DEBEZIUM_JSON;
    private Map<String, String> kafkaProperties = Map.of();
    private String tableTemplate = "shop.{table}";
    private List<String> primaryKey = List.of();
    private String warehouse = dir.resolve("warehouse").toString();
    private int formatVersion = 3;
    private String checkpointDirectory = dir.resolve("checkpoints").toString();
    private String deadLetterPath;
    private String deadLetterTopic;
    private String restoreFrom;
    private int restartAttempts;
    private String partitionBy;
    private final Configuration sinkOptions = new Configuration();

    KafkaJob topics(String... names) {
      this.topics = List.of(names);
      return this;
    }

    KafkaJob topics(List<String> names) {
      this.topics = names;
      return this;
    }

    KafkaJob topicPattern(String pattern) {
      this.topicPattern = pattern;
      return this;
    }

    KafkaJob groupId(String id) {
      this.groupId = id;
      return this;
    }

    KafkaJob startingOffsets(String offsets) {
      this.startingOffsets = offsets;
      return this;
    }

    KafkaJob format(String name) {
      this.format = name;
      return this;
    }

    KafkaJob kafkaProperties(Map<String, String> properties) {
      this.kafkaProperties = properties;
      return this;
    }

    KafkaJob tableTemplate(String template) {
      this.tableTemplate = template;
      return this;
    }

    KafkaJob primaryKey(String... columns) {
      this.primaryKey = List.of(columns);
      return this;
    }

    KafkaJob warehouse(String directory) {
      this.warehouse = directory;
      return this;
    }

    KafkaJob formatVersion(int version) {
      this.formatVersion = version;
      return this;
    }

    KafkaJob checkpointDirectory(String directory) {
      this.checkpointDirectory = directory;
      return this;
    }

    KafkaJob deadLetterPath(String path) {
      this.deadLetterPath = path;
      return this;
    }

    KafkaJob deadLetterTopic(String topic) {
      this.deadLetterTopic = topic;
      return this;
    }

    KafkaJob restoreFrom(String checkpoint) {
      this.restoreFrom = checkpoint;
      return this;
    }

    KafkaJob restartAttempts(int attempts) {
      this.restartAttempts = attempts;
      return this;
    }

    KafkaJob partitionBy(String spec) {
      this.partitionBy = spec;
      return this;
    }

    KafkaJob sinkOption(String key, String value) {
      sinkOptions.setString(key, value);
      return this;
    }

    JobDefinition build() {
      return new JobDefinition(
          new KafkaTopics(
              KAFKA.bootstrapServers(),
              topics,
              topicPattern,
              groupId,
              startingOffsets,
              format,
              kafkaProperties,
              null),
          CatalogDefinition.hadoop(warehouse),
          new TableDefinition(tableTemplate, primaryKey, partitionBy, formatVersion),
          sinkOptions,
          new DeadLetterOutput(deadLetterPath, deadLetterTopic),
          new RuntimeDefinition(
              2,
              Duration.ofMillis(300),
              checkpointDirectory,
              "hashmap",
              restoreFrom,
              restartAttempts));
    }
  }

  /** Records no table can take: not JSON, an unknown operation, a row without its key. */
  private static String[] malformedRecords(String topic, int at) {
    String where = topic + " " + at;
    return new String[] {
      "not json at " + where,
      "{\"before\":null,\"after\":{\"id\":"
          + at
          + ",\"name\":\""
          + where
          + "\"},"
          + "\"source\":{\"lsn\":"
          + at
          + "},\"op\":\"x\"}",
      "{\"before\":null,\"after\":{\"name\":\"no key at "
          + where
          + "\"},"
          + "\"source\":{\"lsn\":1},\"op\":\"c\"}"
    };
  }

  private void awaitCommitted(Catalog catalog, Iterable<TableIdentifier> tables) throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
    for (TableIdentifier identifier : tables) {
      Table table = catalog.loadTable(identifier);
      while (table.currentSnapshot() == null) {
        assertThat(System.nanoTime()).as("a commit to %s", identifier).isLessThan(deadline);
        assertThat(running.getJobStatus().get().isGloballyTerminalState()).isFalse();
        Thread.sleep(100);
        table.refresh();
      }
    }
  }

  /** The committed records of a dead-letter topic, once there are as many as expected. */
  private static List<JsonNode> deadLettersInTopic(String topic, int expected, long deadline)
      throws Exception {
    java.util.Properties properties = new java.util.Properties();
    properties.put("bootstrap.servers", KAFKA.bootstrapServers());
    properties.put("isolation.level", "read_committed");
    properties.put("auto.offset.reset", "earliest");
    properties.put("group.id", "dead-letter-reader");
    List<JsonNode> letters = new ArrayList<>();
    try (org.apache.kafka.clients.consumer.KafkaConsumer<String, String> consumer =
        new org.apache.kafka.clients.consumer.KafkaConsumer<>(
            properties,
            new org.apache.kafka.common.serialization.StringDeserializer(),
            new org.apache.kafka.common.serialization.StringDeserializer())) {
      consumer.subscribe(List.of(topic));
      while (letters.size() < expected && System.nanoTime() < deadline) {
        for (org.apache.kafka.clients.consumer.ConsumerRecord<String, String> record :
            consumer.poll(Duration.ofMillis(500))) {
          letters.add(MAPPER.readTree(record.value()));
        }
      }
      // Nothing more than expected arrives.
      consumer.poll(Duration.ofSeconds(2)).forEach(r -> letters.add(MAPPER.createObjectNode()));
    }
    return letters;
  }

  /** The dead letters in finished files, once there are as many as expected. */
  private List<JsonNode> awaitDeadLetters(int expected, long deadline) throws Exception {
    while (true) {
      List<JsonNode> letters = new ArrayList<>();
      Path root = dir.resolve("dead-letters");
      if (Files.isDirectory(root)) {
        try (Stream<Path> files = Files.walk(root)) {
          for (Path file : files.filter(Files::isRegularFile).toList()) {
            if (file.getFileName().toString().startsWith(".")) {
              continue; // in progress: not committed yet
            }
            for (String line : Files.readAllLines(file)) {
              letters.add(MAPPER.readTree(line));
            }
          }
        }
      }
      if (letters.size() >= expected || System.nanoTime() > deadline) {
        return letters;
      }
      Thread.sleep(300);
    }
  }

  private static void assertEachCheckpointCommittedOnce(Table table) {
    assertThat(Commits.jobsThatCommittedEachCheckpointOnce(table))
        .as("the job before and after the cancel")
        .hasSize(2);
  }
}
