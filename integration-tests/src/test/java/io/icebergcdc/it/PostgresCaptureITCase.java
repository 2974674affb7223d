package io.icebergcdc.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.icebergcdc.jobs.Checkpoints;
import io.icebergcdc.jobs.definition.DatabaseSource;
import io.icebergcdc.jobs.definition.JobDefinition;
import io.icebergcdc.jobs.pipeline.JobRunner;
import io.icebergcdc.jobs.pipeline.PipelineComposer;
import io.icebergcdc.jobs.pipeline.ReadAgain;
import java.nio.file.Path;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.flink.client.program.ClusterClient;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.test.junit5.InjectClusterClient;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Captures a live PostgreSQL database (logical decoding through {@code pgoutput}, set up by the
 * build's {@code setup-databases.sh}) into Iceberg tables, and compares them with the source tables
 * row for row after the initial snapshot, after streamed changes, and after the job was cancelled,
 * changes were made while it was down, and it resumed from its last checkpoint.
 */
class PostgresCaptureITCase extends CaptureScenario {

  private static final String DATABASE = "icebergcdc_it";
  private static final String SLOT = "icebergcdc_it";

  @org.junit.jupiter.api.AfterAll
  static void dropDatabase() throws SQLException {
    PostgresDatabases.drop(DATABASE, SLOT);
  }

  @BeforeEach
  void createDatabase() throws SQLException {
    PostgresDatabases.recreate(DATABASE, SLOT);
    connection =
        DriverManager.getConnection("jdbc:postgresql://127.0.0.1:5432/" + DATABASE, "postgres", "");
    execute(
        "CREATE SCHEMA inventory",
        "CREATE TABLE inventory.customers (id serial PRIMARY KEY, name text NOT NULL,"
            + " email varchar(100), balance numeric(12,2), born date, seen timestamptz,"
            + " created timestamp(6), active boolean, profile jsonb,"
            + " token uuid NOT NULL DEFAULT gen_random_uuid(), photo bytea,"
            + " score double precision, rating real, visits smallint, total bigint, opens time)",
        "CREATE TABLE inventory.order_lines (order_id int, line int, qty int NOT NULL, note text,"
            + " PRIMARY KEY (order_id, line))",
        "CREATE TABLE public.not_captured (id int PRIMARY KEY)");
    for (int i = 1; i <= 200; i++) {
      insertCustomer(i);
    }
    execute(
        "INSERT INTO inventory.order_lines SELECT o, l, o * l, 'note ' || o"
            + " FROM generate_series(1, 20) o, generate_series(1, 3) l");
  }

  @Test
  void snapshotThenStreamThenResumeFromCheckpoint() throws Exception {
    assertThat(snapshotThenStreamThenResume())
        .extracting(target -> target.table().toString())
        .containsExactlyInAnyOrder("cdc.inventory_customers", "cdc.inventory_order_lines");
  }

  @Test
  void snapshotThenStreamThenResumeOnARestCatalogWithTablesOnS3() throws Exception {
    onARestCatalogWithTablesOnS3();
  }

  /**
   * On a REST catalog, the tables of each checkpoint committed in one transaction of the catalog
   * (its multi-table commit): the same tables, each checkpoint committed once to each table.
   */
  @Test
  void snapshotThenStreamThenResumeOnARestCatalogWithTablesOnS3InOneTransaction() throws Exception {
    sinkOptions.set(io.icebergcdc.sink.SinkOptions.COMMIT_ATOMIC_ACROSS_TABLES, true);
    onARestCatalogWithTablesOnS3();
  }

  private void onARestCatalogWithTablesOnS3() throws Exception {
    try (LakeServers lake = LakeServers.start("capture-lake")) {
      catalog = lake.restCatalog();
      assertThat(snapshotThenStreamThenResume())
          .extracting(target -> target.table().toString())
          .containsExactlyInAnyOrder("cdc.inventory_customers", "cdc.inventory_order_lines");
      try (var files = java.nio.file.Files.walk(lake.s3.bucketDirectory(lake.bucket))) {
        assertThat(files.filter(p -> p.toString().endsWith(".parquet")).count()).isPositive();
      }
    } finally {
      if (running != null) {
        JobClients.cancelAndAwait(running);
        running = null;
      }
    }
  }

  /**
   * Tables written by key ({@code sink.delete-mode = EQUALITY}) share the writer of the tables
   * deleting by position, so a job switched from one mode to the other resumes from its checkpoint
   * as it is, no state left unclaimed: the source goes on from its offsets, and the keys the state
   * knows without a row's location (all of them, written by key) are deleted by key once more,
   * counted as fallbacks, until each is written again. Rows written since are deleted by position.
   * Every table equals its source, each checkpoint committed once.
   */
  @Test
  void resumesTablesWrittenByKeyWithPositionDeletesFromTheirState() throws Exception {
    sinkOptions.set(
        io.icebergcdc.sink.SinkOptions.DELETE_MODE, io.icebergcdc.sink.DeleteMode.EQUALITY);
    JobDefinition byKey = job(null);
    JobRunner pipeline = new JobRunner(byKey);
    running = pipeline.start();
    awaitEqual(byKey, pipeline, Duration.ofSeconds(90));
    execute("UPDATE inventory.customers SET visits = 5 WHERE id <= 20");
    awaitEqual(byKey, pipeline, Duration.ofSeconds(60));
    JobClients.cancelAndAwait(running);
    running = null;
    execute("UPDATE inventory.customers SET visits = 6 WHERE id BETWEEN 21 AND 30");
    String checkpoint =
        Checkpoints.latest(byKey.runtime().checkpointDirectory()).orElseThrow().toString();

    sinkOptions.set(
        io.icebergcdc.sink.SinkOptions.DELETE_MODE, io.icebergcdc.sink.DeleteMode.POSITION);
    JobDefinition byPosition = job(checkpoint);
    running = new JobRunner(byPosition).start();
    execute("UPDATE inventory.customers SET visits = 7 WHERE id BETWEEN 31 AND 40");
    execute("DELETE FROM inventory.order_lines WHERE order_id = 2");
    awaitEqual(byPosition, pipeline, Duration.ofSeconds(90));
    Catalog catalog = catalog(byPosition);
    Table customers = catalog.loadTable(TableIdentifier.parse("cdc.inventory_customers"));
    long before = customers.currentSnapshot().snapshotId();
    execute("UPDATE inventory.customers SET visits = 8 WHERE id BETWEEN 31 AND 40");
    awaitEqual(byPosition, pipeline, Duration.ofSeconds(90));

    for (String name : List.of("cdc.inventory_customers", "cdc.inventory_order_lines")) {
      assertEachCheckpointCommittedOnce(catalog.loadTable(TableIdentifier.parse(name)));
    }
    customers.refresh();
    long fellBack = 0;
    long fellBackAtTheLastUpdate = 0;
    long equalityDeletesAtTheLastUpdate = 0;
    boolean afterBefore = false;
    for (org.apache.iceberg.Snapshot snapshot : Commits.snapshots(customers)) {
      java.util.Map<String, String> summary = snapshot.summary();
      long fell = Long.parseLong(summary.getOrDefault(DELETES_FELL_BACK, "0"));
      if (afterBefore) {
        fellBackAtTheLastUpdate += fell;
        equalityDeletesAtTheLastUpdate +=
            Long.parseLong(summary.getOrDefault("added-equality-delete-files", "0"));
      } else if (lastJob(customers).equals(summary.get(JOB_ID))) {
        fellBack += fell;
      }
      afterBefore |= snapshot.snapshotId() == before;
    }
    // Ids 21 to 40, whose rows the state knew by key only: deleted by key once each.
    assertThat(fellBack).as("deletes by key after the switch").isEqualTo(20);
    assertThat(fellBackAtTheLastUpdate).as("deletes by key of rows written since").isZero();
    assertThat(equalityDeletesAtTheLastUpdate)
        .as("equality deletes of rows written since")
        .isZero();
    // Resumed from the checkpoint's offsets: only the rows changed since were written again.
    assertThat(rowsUpdatedByLastJob(customers)).isBetween(30L, 40L);
  }

  private static final String JOB_ID = io.icebergcdc.commit.SnapshotSummaryKeys.JOB_ID;
  private static final String DELETES_FELL_BACK =
      io.icebergcdc.commit.SnapshotSummaryKeys.DELETES_FELL_BACK;

  /** The id of the job that committed the table's current snapshot. */
  private static String lastJob(Table table) {
    return table.currentSnapshot().summary().get(JOB_ID);
  }

  @Test
  void refusesToResumeBehindTheReplicationSlot() throws Exception {
    JobDefinition job = job(null);
    JobRunner pipeline = new JobRunner(job);
    running = pipeline.start();
    awaitEqual(job, pipeline, Duration.ofSeconds(90));
    execute("UPDATE inventory.customers SET visits = 1 WHERE id = 1");
    awaitEqual(job, pipeline, Duration.ofSeconds(60));
    Path early = Path.of(Checkpoints.latest(job.runtime().checkpointDirectory()).orElseThrow());
    Path kept = dir.resolve("kept-checkpoint");
    copyDirectory(early, kept);

    // The slot moves on past the kept checkpoint once later checkpoints complete.
    execute("UPDATE inventory.customers SET visits = 2 WHERE id = 2");
    awaitEqual(job, pipeline, Duration.ofSeconds(60));
    Thread.sleep(2_000);
    JobClients.cancelAndAwait(running);
    running = null;

    // The refusal is logged by Flink as the source task's failure, then reported here.
    assertThatThrownBy(
            () -> new JobRunner(job(kept.toString())).start().getJobExecutionResult().get())
        .hasStackTraceContaining("has already released the log");
  }

  /**
   * A table created while the job runs that its {@code --tables} match is taken in flight: the
   * enumerator creates its Iceberg table, publishes it and snapshots it in chunks beside the log,
   * and its later changes stream in; the job fails once after the first commit to it and is
   * restored in place (see {@link CaptureScenario#picksUpATableCreatedWhileTheJobRuns}).
   */
  @Test
  void picksUpATableCreatedWhileTheJobRuns(@InjectClusterClient ClusterClient<?> client)
      throws Exception {
    JobDefinition job = lookingEverySecond();
    picksUpATableCreatedWhileTheJobRuns(
        job,
        client,
        "inventory.returns",
        TableIdentifier.of("cdc", "inventory_returns"),
        "CREATE TABLE inventory.returns (id int PRIMARY KEY, reason text, amount numeric(8,2))",
        "INSERT INTO inventory.returns SELECT i, 'reason ' || i, i * 1.5"
            + " FROM generate_series(1, 1000) i");
  }

  /**
   * A table created while the job runs whose Iceberg table exists, partitioned by a bucket of its
   * key and distributed by partition ({@code write.distribution-mode = hash}), is taken in flight
   * too: the readers of its chunks and the log's reader, keyed before the table was known, hash its
   * keys by partition from its first change on, as its writer does. Then the job built again has it
   * among its own tables, distributed by partition, and takes its state back.
   */
  @Test
  void picksUpATableDistributedByPartitionCreatedWhileTheJobRuns(
      @InjectClusterClient ClusterClient<?> client) throws Exception {
    JobDefinition job = lookingEverySecond();
    TableIdentifier returns = TableIdentifier.of("cdc", "inventory_returns");
    org.apache.iceberg.Schema schema =
        new org.apache.iceberg.Schema(
            List.of(
                org.apache.iceberg.types.Types.NestedField.required(
                    1, "id", org.apache.iceberg.types.Types.IntegerType.get()),
                org.apache.iceberg.types.Types.NestedField.optional(
                    2, "reason", org.apache.iceberg.types.Types.StringType.get()),
                org.apache.iceberg.types.Types.NestedField.optional(
                    3, "amount", org.apache.iceberg.types.Types.DecimalType.of(8, 2))),
            java.util.Set.of(1));
    catalog(job)
        .createTable(
            returns,
            schema,
            org.apache.iceberg.PartitionSpec.builderFor(schema).bucket("id", 4).build(),
            java.util.Map.of("format-version", "2", "write.distribution-mode", "hash"));
    picksUpATableCreatedWhileTheJobRuns(
        job,
        client,
        "inventory.returns",
        returns,
        "CREATE TABLE inventory.returns (id int PRIMARY KEY, reason text, amount numeric(8,2))",
        "INSERT INTO inventory.returns SELECT i, 'reason ' || i, i * 1.5"
            + " FROM generate_series(1, 1000) i");
    Table taken = catalog(job).loadTable(returns);
    assertThat(taken.spec().isPartitioned()).isTrue();
    assertThat(taken.properties().get("iceberg-cdc.keys-hashed-by"))
        .startsWith("partition-spec:{\"spec-id\":0,");
  }

  /**
   * A table created while the job runs that the job cannot capture (no primary key) ends it with a
   * message naming the table, and is never added to the publication (where it would make the
   * application's updates of it fail for want of a replica identity).
   */
  @Test
  void endsAtATableCreatedWithoutAPrimaryKey() throws Exception {
    JobDefinition job = withRuntime(lookingEverySecond(), null, 3);
    running = new JobRunner(job).start();
    Catalog catalog = catalog(job);
    TableIdentifier customers = TableIdentifier.of("cdc", "inventory_customers");
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    while (!catalog.tableExists(customers)
        || catalog.loadTable(customers).currentSnapshot() == null) {
      assertThat(System.nanoTime()).as("a commit to %s", customers).isLessThan(deadline);
      Thread.sleep(100);
    }
    execute("CREATE TABLE inventory.no_key (id int, note text)");

    JobClient ended = running;
    running = null;
    assertThatThrownBy(() -> ended.getJobExecutionResult().get(60, TimeUnit.SECONDS))
        .hasStackTraceContaining(
            "table inventory.no_key of postgres://127.0.0.1:5432/"
                + DATABASE
                + " has no primary key")
        .hasStackTraceContaining("the table appeared while the job runs, which ends");
    assertThat(catalog.tableExists(TableIdentifier.of("cdc", "inventory_no_key"))).isFalse();
    assertThat(publishedTables()).containsExactlyInAnyOrder("customers", "order_lines");
  }

  /**
   * A job restored from a state of Debezium's own snapshot cannot read a table beside the log: one
   * created while it runs ends it with a line that says what to do, instead of the job built again
   * with the table, which restored that state and never read the table's rows.
   */
  @Test
  void aTableCreatedWhileAJobRestoredFromDebeziumsSnapshotRunsEndsItNamingTheWayOut()
      throws Exception {
    String checkpoint =
        runUntilEqualThenCancel(
            job(source().withSnapshotChunkRows(0), "cdc.{schema}_{table}", null));
    running = new JobRunner(withRuntime(lookingEverySecond(), checkpoint, 0)).start();
    execute(
        "CREATE TABLE inventory.returns (id int PRIMARY KEY, reason text)",
        "INSERT INTO inventory.returns SELECT i, 'reason ' || i FROM generate_series(1, 10) i");

    assertThatThrownBy(this::awaitTheJobsEnd)
        .hasStackTraceContaining("table inventory.returns appeared")
        .hasStackTraceContaining("written with Debezium's own snapshot")
        .hasStackTraceContaining("start the job without state");
  }

  /**
   * A table added to the tables of a job restored from a state of Debezium's own snapshot: the
   * connector would stream its changes but never read its rows, so the job ends naming the ways
   * out. Restored with the tables it had, it runs.
   */
  @Test
  void aTableAddedToAJobRestoredFromDebeziumsSnapshotEndsItNamingTheWayOut() throws Exception {
    JobDefinition first =
        job(
            source(List.of("inventory\\.customers")).withSnapshotChunkRows(0),
            "cdc.{schema}_{table}",
            null);
    String checkpoint = runUntilEqualThenCancel(first);

    running =
        new JobRunner(
                withRuntime(
                    job(source().withSnapshotChunkRows(0), "cdc.{schema}_{table}", null),
                    checkpoint,
                    0))
            .start();
    assertThatThrownBy(this::awaitTheJobsEnd)
        .hasStackTraceContaining("include [inventory.order_lines]")
        .hasStackTraceContaining("written with Debezium's own snapshot")
        .hasStackTraceContaining("Start the job without state");

    JobDefinition again = withRuntime(first, checkpoint, 0);
    JobRunner pipeline = new JobRunner(again);
    running = pipeline.start();
    insertCustomer(9001);
    awaitEqual(again, pipeline, Duration.ofSeconds(90));
  }

  /**
   * A table of the job dropped from the catalog while the job runs: the job ends naming it, and a
   * restore as it was ends too (the job creates the table at its start, and the state belongs to
   * the dropped one). The way out the lines name, {@code --read-again} with the source table, reads
   * that table whole again from the source in one command, over the table created meanwhile, while
   * the other table goes on from its state, not read again.
   */
  @Test
  void aTableDroppedFromTheCatalogIsReadAgainByTheWayOutTheJobNames() throws Exception {
    JobDefinition job = job(null);
    JobRunner first = new JobRunner(job);
    running = first.start();
    awaitEqual(job, first, Duration.ofSeconds(90));
    Catalog catalog = catalog(job);
    TableIdentifier lines = target(first, "order_lines");
    TableIdentifier customers = target(first, "customers");

    catalog.dropTable(lines, true);
    execute("UPDATE inventory.order_lines SET note = 'changed' WHERE order_id <= 5");
    insertCustomer(9001);
    assertThatThrownBy(this::awaitTheJobsEnd)
        .hasStackTraceContaining(lines + " of the job is no longer in the catalog")
        .hasStackTraceContaining("--read-again");

    running = new JobRunner(withRuntime(job, latestCheckpoint(job), 0)).start();
    assertThatThrownBy(this::awaitTheJobsEnd)
        .hasStackTraceContaining(lines + " belongs to another table")
        .hasStackTraceContaining("--read-again");
    running = null;

    // apply --restore-from latest --read-again inventory.order_lines, as the command runs it.
    JobDefinition restored = withRuntime(job, latestCheckpoint(job), 0);
    // A name the source does not capture, and all of its tables, are refused before anything runs.
    assertThatThrownBy(() -> ReadAgain.dropStateOf(restored, List.of("inventory.orderlines")))
        .isInstanceOf(io.icebergcdc.jobs.definition.JobDefinitionException.class)
        .hasMessageContaining("--read-again inventory.orderlines: ");
    List<String> every =
        io.icebergcdc.jobs.capture.SourceTables.names(
            (io.icebergcdc.jobs.definition.DatabaseSource) restored.source());
    assertThat(every).contains("inventory.order_lines", "inventory.customers");
    assertThatThrownBy(() -> ReadAgain.dropStateOf(restored, every))
        .isInstanceOf(io.icebergcdc.jobs.definition.JobDefinitionException.class)
        .hasMessageContaining("names every table the job captures");
    String savepoint = ReadAgain.dropStateOf(restored, List.of("inventory.order_lines"));
    insertCustomer(9002);
    JobDefinition back = restored.restoringFrom(savepoint);
    JobRunner again = new JobRunner(back);
    running = again.start();
    String againJob = running.getJobID().toString();
    awaitEqual(back, again, Duration.ofSeconds(90));
    assertThat(rowsInsertedBy(catalog.loadTable(lines), againJob)).isEqualTo(60);
    // The customer inserted while the job was down (and the one before, where the run without the
    // table stopped before its log reached it), nothing read again.
    assertThat(rowsInsertedBy(catalog.loadTable(customers), againJob)).isBetween(1L, 2L);
  }

  private static String latestCheckpoint(JobDefinition job) throws Exception {
    return Checkpoints.latest(job.runtime().checkpointDirectory()).orElseThrow().toString();
  }

  private static long rowsInsertedBy(Table table, String jobId) {
    long inserted = 0;
    for (org.apache.iceberg.Snapshot snapshot : table.snapshots()) {
      java.util.Map<String, String> summary = snapshot.summary();
      if (jobId.equals(summary.get(io.icebergcdc.commit.SnapshotSummaryKeys.JOB_ID))) {
        inserted +=
            Long.parseLong(
                summary.getOrDefault(io.icebergcdc.commit.SnapshotSummaryKeys.ROWS_INSERTED, "0"));
      }
    }
    return inserted;
  }

  /**
   * A captured table dropped and created again under its name while the job runs: PostgreSQL drops
   * it from the publication with it, and the job's next look for new tables publishes it again, so
   * that its changes from then on are applied (those before are lost, and the job warns).
   */
  @Test
  void publishesAgainATableDroppedAndCreatedAgainWhileTheJobRuns() throws Exception {
    JobDefinition job = lookingEverySecond();
    JobRunner pipeline = new JobRunner(job);
    running = pipeline.start();
    awaitEqual(job, pipeline, Duration.ofSeconds(90));

    execute(
        "DROP TABLE inventory.order_lines",
        "CREATE TABLE inventory.order_lines (order_id int, line int, qty int NOT NULL, note text,"
            + " PRIMARY KEY (order_id, line))");
    awaitPublished("order_lines", "the table published again by the job's look");
    // Every key the table had, and more, with new values: the Iceberg table equals it only if the
    // changes after the table was published again are applied.
    execute(
        "INSERT INTO inventory.order_lines SELECT o, l, o * l + 1000, 'again ' || o"
            + " FROM generate_series(1, 25) o, generate_series(1, 3) l",
        "UPDATE inventory.order_lines SET qty = qty + 1 WHERE order_id = 3",
        "DELETE FROM inventory.order_lines WHERE order_id = 22");
    awaitEqual(job, pipeline, Duration.ofSeconds(90));
  }

  /**
   * A captured table dropped and created again without its primary key is not published again (its
   * updates would fail in PostgreSQL for want of a replica identity) until it has its key back, as
   * after a {@code pg_restore}, which adds keys after the data; then its changes are applied. A
   * table created again with another key ends the job, naming it.
   */
  @Test
  void publishesATableCreatedAgainOnlyWithItsPrimaryKey() throws Exception {
    JobDefinition job = lookingEverySecond();
    JobRunner pipeline = new JobRunner(job);
    running = pipeline.start();
    awaitEqual(job, pipeline, Duration.ofSeconds(90));

    execute(
        "DROP TABLE inventory.order_lines",
        "CREATE TABLE inventory.order_lines (order_id int, line int, qty int NOT NULL, note text)",
        "INSERT INTO inventory.order_lines SELECT o, l, o * l + 1000, 'again ' || o"
            + " FROM generate_series(1, 25) o, generate_series(1, 3) l");
    Thread.sleep(3000); // three looks
    assertThat(running.getJobStatus().get().isGloballyTerminalState()).isFalse();
    assertThat(publishedTables()).containsExactly("customers");

    execute("ALTER TABLE inventory.order_lines ADD PRIMARY KEY (order_id, line)");
    awaitPublished("order_lines", "published again with its key");
    // Every key again, after the table is published: applied over the rows the Iceberg table has.
    execute("UPDATE inventory.order_lines SET qty = qty + 1");
    awaitEqual(job, pipeline, Duration.ofSeconds(90));

    execute(
        "DROP TABLE inventory.order_lines",
        "CREATE TABLE inventory.order_lines (order_id int PRIMARY KEY, line int, qty int NOT NULL,"
            + " note text)");
    JobClient ended = running;
    running = null;
    assertThatThrownBy(() -> ended.getJobExecutionResult().get(60, TimeUnit.SECONDS))
        .hasStackTraceContaining(
            "table inventory.order_lines of postgres://127.0.0.1:5432/"
                + DATABASE
                + " was dropped and created again while the job runs with primary key [order_id],"
                + " where the job captures it by [order_id, line]");
    assertThat(publishedTables()).containsExactly("customers");
  }

  /** The scenario's job with the chunked snapshot, looking for new tables every second. */
  private JobDefinition lookingEverySecond() {
    return job(
        source().withSnapshotChunkRows(100).withTableDiscoveryInterval(Duration.ofSeconds(1)),
        "cdc.{schema}_{table}",
        null);
  }

  /** Waits until the job's publication holds {@code table}, the job running meanwhile. */
  private void awaitPublished(String table, String what) throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    while (!publishedTables().contains(table)) {
      assertThat(System.nanoTime()).as(what).isLessThan(deadline);
      assertThat(running.getJobStatus().get().isGloballyTerminalState()).isFalse();
      Thread.sleep(200);
    }
  }

  private List<String> publishedTables() throws java.sql.SQLException {
    try (java.sql.Statement query = connection.createStatement();
        java.sql.ResultSet published =
            query.executeQuery(
                "SELECT tablename FROM pg_publication_tables WHERE pubname = 'icebergcdc_it'")) {
      List<String> tables = new java.util.ArrayList<>();
      while (published.next()) {
        tables.add(published.getString(1));
      }
      return tables;
    }
  }

  /**
   * A partitioned table is captured as one table, its partitions through it: their changes come as
   * its own (the publication's {@code publish_via_partition_root}), and none of them has an Iceberg
   * table of its own.
   */
  @Test
  void capturesAPartitionedTableThroughItsPartitions() throws Exception {
    createPartitionedEvents();
    JobDefinition job = job(null);
    JobRunner pipeline = new JobRunner(job);
    running = pipeline.start();
    assertThat(pipeline.targets().stream().map(t -> t.table().name()))
        .contains("inventory_events")
        .doesNotContain("inventory_events_jan", "inventory_events_feb");
    awaitEqual(job, pipeline, Duration.ofSeconds(90));

    execute(
        "UPDATE inventory.events SET note = 'changed' WHERE id % 3 = 0",
        "DELETE FROM inventory.events WHERE id % 7 = 0",
        "INSERT INTO inventory.events_feb VALUES (1000, DATE '2026-02-20', 'into a partition')",
        "UPDATE inventory.events_jan SET note = 'through a partition' WHERE id = 1");
    awaitEqual(job, pipeline, Duration.ofSeconds(60));
    assertThat(catalog(job).tableExists(TableIdentifier.of("cdc", "inventory_events_jan")))
        .isFalse();
  }

  /** {@code inventory.events}, partitioned by day into two partitions, with 200 rows. */
  private void createPartitionedEvents() throws SQLException {
    execute(
        "CREATE TABLE inventory.events (id int, day date, note text, PRIMARY KEY (id, day))"
            + " PARTITION BY RANGE (day)",
        "CREATE TABLE inventory.events_jan PARTITION OF inventory.events"
            + " FOR VALUES FROM ('2026-01-01') TO ('2026-02-01')",
        "CREATE TABLE inventory.events_feb PARTITION OF inventory.events"
            + " FOR VALUES FROM ('2026-02-01') TO ('2026-03-01')",
        "INSERT INTO inventory.events SELECT i, DATE '2026-01-01' + (i % 50), 'note ' || i"
            + " FROM generate_series(1, 200) i");
  }

  /**
   * An existing publication that sends a partitioned table's changes as its partitions' is not the
   * job's to change: the job refuses before any Iceberg table is created, naming the table and the
   * statement that lets it be captured.
   */
  @Test
  void refusesAPartitionedTableThroughAPublicationThatSendsItsPartitionsChanges() throws Exception {
    createPartitionedEvents();
    execute("CREATE PUBLICATION icebergcdc_it FOR TABLE inventory.customers");
    JobDefinition job = job(null);

    assertThatThrownBy(() -> new JobRunner(job).start())
        .hasMessageContaining("partitioned tables [inventory.events]")
        .hasMessageContaining("SET (publish_via_partition_root = true)");
    assertThat(catalog(job).tableExists(TableIdentifier.of("cdc", "inventory_customers")))
        .isFalse();
  }

  /**
   * A job started again without state, on its slot and tables, takes up the first transaction
   * committed after its snapshot, which is not at or before the tables' source position: a change
   * streamed before any commit carries no commit LSN before it, and such a change would order
   * before the position an earlier job's later transactions recorded.
   */
  @Test
  void aJobStartedAgainWithoutStateTakesUpTheFirstTransactionAfterItsSnapshot() throws Exception {
    JobDefinition job = job(null);
    JobRunner first = new JobRunner(job);
    running = first.start();
    awaitEqual(job, first, Duration.ofSeconds(90));
    // Two transactions: the table's position then holds the first one's commit LSN.
    execute(
        "UPDATE inventory.customers SET visits = 1 WHERE id = 1",
        "UPDATE inventory.customers SET visits = 2 WHERE id = 2");
    awaitEqual(job, first, Duration.ofSeconds(60));
    JobClients.cancelAndAwait(running);

    JobRunner again = new JobRunner(job);
    running = again.start();
    // Its snapshot (a few hundred rows) is read before the transaction, so that no chunk reads
    // the transaction's row: a checkpoint of the new job, and a few seconds more.
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    while (Checkpoints.latestOf(job.runtime().checkpointDirectory(), running.getJobID().toString())
        .isEmpty()) {
      assertThat(System.nanoTime()).isLessThan(deadline);
      Thread.sleep(100);
    }
    Thread.sleep(3_000);
    execute("UPDATE inventory.customers SET visits = 77 WHERE id = 5");
    awaitEqual(job, again, Duration.ofSeconds(60));
  }

  /**
   * A table whose updates and deletes PostgreSQL sends without its primary key is refused before
   * any Iceberg table is made: REPLICA IDENTITY NOTHING, or USING INDEX of an index without the key
   * (the old row would name rows by another key, the key's columns as Debezium's stand-ins); an
   * index that holds the key is taken.
   */
  @Test
  void refusesAReplicaIdentityWithoutThePrimaryKey() throws Exception {
    execute(
        "CREATE TABLE inventory.tagged (id int PRIMARY KEY, code text NOT NULL UNIQUE)",
        "CREATE UNIQUE INDEX tagged_code_id ON inventory.tagged (code, id)",
        "ALTER TABLE inventory.tagged REPLICA IDENTITY USING INDEX tagged_code_key");
    JobDefinition job = job(source(List.of("inventory\\.tagged")), "cdc.{table}", null);
    assertThatThrownBy(() -> PipelineComposer.compose(job))
        .hasMessageContaining(
            "table inventory.tagged has REPLICA IDENTITY USING INDEX on [code], which does not"
                + " hold its primary key [id]");
    execute("ALTER TABLE inventory.tagged REPLICA IDENTITY NOTHING");
    assertThatThrownBy(() -> PipelineComposer.compose(job))
        .hasMessageContaining("table inventory.tagged has REPLICA IDENTITY NOTHING");
    assertThat(catalog(job).tableExists(TableIdentifier.of("cdc", "tagged"))).isFalse();

    execute("ALTER TABLE inventory.tagged REPLICA IDENTITY USING INDEX tagged_code_id");
    PipelineComposer.compose(job);
    assertThat(catalog(job).tableExists(TableIdentifier.of("cdc", "tagged"))).isTrue();
  }

  /** Every table that cannot be captured is named at the start, not one per start. */
  @Test
  void namesEveryTableThatCannotBeCapturedAtOnce() throws Exception {
    execute(
        "CREATE TABLE inventory.priced (id int PRIMARY KEY, price inet)",
        "CREATE TABLE inventory.located (id int PRIMARY KEY, at point)",
        "CREATE TABLE inventory.unkeyed (id int)");
    JobDefinition job =
        job(
            source(List.of("inventory\\.priced", "inventory\\.located", "inventory\\.unkeyed")),
            "cdc.{table}",
            null);
    assertThatThrownBy(() -> PipelineComposer.compose(job))
        .hasMessageStartingWith("3 tables of ")
        .hasMessageContaining("table inventory.located ")
        .hasMessageContaining("at point")
        .hasMessageContaining("table inventory.priced ")
        .hasMessageContaining("price inet")
        .hasMessageContaining("table inventory.unkeyed ")
        .hasMessageContaining("has no primary key");
    assertThat(catalog(job).tableExists(TableIdentifier.of("cdc", "priced"))).isFalse();
  }

  /**
   * While the captured tables are idle and others are written, the slot still moves on: Debezium's
   * heartbeat writes a logical decoding message, whose position the next heartbeat carries through
   * the job's checkpoints, so PostgreSQL can release the WAL the other tables' writes filled.
   */
  @Test
  void theSlotMovesOnWhileTheCapturedTablesAreIdle() throws Exception {
    JobDefinition job = job(null);
    JobRunner pipeline = new JobRunner(job);
    running = pipeline.start();
    awaitEqual(job, pipeline, Duration.ofSeconds(90));
    writeElsewhereAndAwaitTheSlot(1);

    // Restored, the job's connector starts where the last message was: it moves on as well.
    JobClients.cancelAndAwait(running);
    String checkpoint =
        Checkpoints.latest(job.runtime().checkpointDirectory()).orElseThrow().toString();
    running = new JobRunner(withRuntime(job, checkpoint, 0)).start();
    writeElsewhereAndAwaitTheSlot(20_001);
  }

  private void writeElsewhereAndAwaitTheSlot(int from) throws Exception {
    long before = confirmedFlush();
    String written;
    try (java.sql.Statement statement = connection.createStatement()) {
      statement.execute(
          "INSERT INTO public.not_captured SELECT generate_series("
              + from
              + ", "
              + (from + 19_999)
              + ")");
      try (java.sql.ResultSet lsn = statement.executeQuery("SELECT pg_current_wal_lsn()::text")) {
        lsn.next();
        written = lsn.getString(1);
      }
    }
    long after = io.icebergcdc.cdc.SourceSequence.parseLsn(written);
    assertThat(after).isGreaterThan(before);
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    while (confirmedFlush() < after) {
      assertThat(System.nanoTime())
          .as("the slot confirmed %s, behind %s", confirmedFlush(), written)
          .isLessThan(deadline);
      assertThat(running.getJobStatus().get().isGloballyTerminalState()).isFalse();
      Thread.sleep(500);
    }
  }

  private long confirmedFlush() throws SQLException {
    try (java.sql.Statement statement = connection.createStatement();
        java.sql.ResultSet slot =
            statement.executeQuery(
                "SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = '"
                    + SLOT
                    + "'")) {
      assertThat(slot.next()).isTrue();
      return io.icebergcdc.cdc.SourceSequence.parseLsn(slot.getString(1));
    }
  }

  /**
   * Two source tables named into one Iceberg table (a template without the schema) are refused
   * before any table is created or changed: the existing table keeps its schema, where it once took
   * the second table's columns before the refusal.
   */
  @Test
  void refusesTwoTablesNamedIntoOneBeforeItChangesEither() throws Exception {
    execute("CREATE SCHEMA other", "CREATE TABLE other.customers (id int PRIMARY KEY, extra text)");
    PipelineComposer.compose(job(source(List.of("inventory\\.customers")), "cdc.{table}", null));
    TableIdentifier customers = TableIdentifier.of("cdc", "customers");
    org.apache.iceberg.Schema before = catalog(job(null)).loadTable(customers).schema();

    JobDefinition both =
        job(source(List.of("inventory\\.customers", "other\\.customers")), "cdc.{table}", null);
    assertThatThrownBy(() -> PipelineComposer.compose(both))
        .isInstanceOf(io.icebergcdc.jobs.definition.JobDefinitionException.class)
        .hasMessageContaining("are both named into table cdc.customers");
    org.apache.iceberg.Schema after = catalog(both).loadTable(customers).schema();
    assertThat(after.sameSchema(before)).as("%s unchanged from %s", after, before).isTrue();
  }

  @Test
  void tablesWhoseNamesNoKafkaTopicCanHoldKeepTheirOwnChanges() throws Exception {
    super.tablesWhoseNamesNoKafkaTopicCanHoldKeepTheirOwnChanges();
  }

  @Test
  void failsAtATruncateThenGoesOnPastItAsADeadLetter() throws Exception {
    super.failsAtATruncateThenGoesOnPastItAsADeadLetter();
  }

  @Test
  void appliesATruncate() throws Exception {
    super.appliesATruncate();
  }

  @Override
  JobDefinition job(String restoreFrom) {
    return job(source(), "cdc.{schema}_{table}", restoreFrom);
  }

  /** The inventory schema's tables, with the source's defaults. */
  private static DatabaseSource source() {
    return source(List.of("inventory\\..*"));
  }

  /** The tables {@code tables} match, with the source's defaults. */
  private static DatabaseSource source(List<String> tables) {
    return new DatabaseSource(
        DatabaseSource.Kind.POSTGRES,
        "127.0.0.1",
        5432,
        "postgres",
        null,
        DATABASE,
        tables,
        SLOT,
        "icebergcdc_it",
        0,
        "pg");
  }

  @Override
  java.sql.Connection newConnection() throws SQLException {
    return DriverManager.getConnection(
        "jdbc:postgresql://127.0.0.1:5432/" + DATABASE, "postgres", "");
  }

  @Override
  String allowNullQuantity() {
    return "ALTER TABLE inventory.order_lines ALTER COLUMN qty DROP NOT NULL";
  }

  @Override
  String widenQuantity() {
    return "ALTER TABLE inventory.order_lines ALTER COLUMN qty TYPE bigint";
  }

  @Override
  String table(String name) {
    return "inventory." + name;
  }

  @Override
  String now() {
    return "now()";
  }

  @Override
  void insertCustomer(int id) throws SQLException {
    execute(
        String.format(
            "INSERT INTO inventory.customers (id, name, email, balance, born, seen, created,"
                + " active, profile, token, photo, score, rating, visits, total, opens) VALUES"
                + " (%d, 'customer %d', %s, %d.25, DATE '1980-01-01' + %d,"
                + " TIMESTAMPTZ '2026-01-01 10:00:00.123456+02' + interval '%d minutes',"
                + " TIMESTAMP '2026-02-03 04:05:06.789' + interval '%d seconds', %s,"
                + " '{\"tier\": %d, \"tags\": [\"a\"]}', md5('%d')::uuid, decode('%02x0102', 'hex'),"
                + " %d.5, %d.25, %d, %d, TIME '08:30:00' + interval '%d minutes')",
            id,
            id,
            id % 5 == 0 ? "NULL" : "'c" + id + "@example.com'",
            id * 10,
            id,
            id,
            id,
            id % 2 == 0 ? "true" : "false",
            id % 3,
            id,
            id % 256,
            id,
            id,
            id % 100,
            id * 1_000_000_000L,
            id));
  }

  private static void copyDirectory(Path from, Path to) throws java.io.IOException {
    try (var paths = java.nio.file.Files.walk(from)) {
      for (Path path : paths.toList()) {
        java.nio.file.Files.copy(path, to.resolve(from.relativize(path).toString()));
      }
    }
  }
}
