package io.icebergcdc.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.icebergcdc.commit.SnapshotSummaryKeys;
import io.icebergcdc.jobs.ApplyPipeline;
import io.icebergcdc.jobs.Checkpoints;
import io.icebergcdc.jobs.capture.CaptureJob;
import io.icebergcdc.jobs.capture.CapturePipeline;
import io.icebergcdc.jobs.capture.DatabaseSource;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Captures a live PostgreSQL database (logical decoding through {@code pgoutput}, set up by the
 * build's {@code setup-databases.sh}) into Iceberg tables, and compares them with the source tables
 * row for row after the initial snapshot, after streamed changes, and after the job was cancelled,
 * changes were made while it was down, and it resumed from its last checkpoint.
 */
class PostgresCaptureITCase {

  private static final String DATABASE = "icebergcdc_it";
  private static final String SLOT = "icebergcdc_it";

  @RegisterExtension
  static final MiniClusterExtension FLINK =
      new MiniClusterExtension(
          new MiniClusterResourceConfiguration.Builder()
              .setNumberTaskManagers(1)
              .setNumberSlotsPerTaskManager(8)
              .build());

  @TempDir Path dir;

  private Connection connection;
  private JobClient running;

  @BeforeEach
  void createDatabase() throws SQLException {
    try (Connection admin =
            DriverManager.getConnection(
                "jdbc:postgresql://127.0.0.1:5432/postgres", "postgres", "");
        Statement statement = admin.createStatement()) {
      statement.execute(
          "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots"
              + " WHERE slot_name = '"
              + SLOT
              + "'");
      statement.execute("DROP DATABASE IF EXISTS " + DATABASE + " WITH (FORCE)");
      statement.execute("CREATE DATABASE " + DATABASE);
    }
    connection =
        DriverManager.getConnection("jdbc:postgresql://127.0.0.1:5432/" + DATABASE, "postgres", "");
    execute(
        "CREATE SCHEMA inventory",
        "CREATE TABLE inventory.customers (id serial PRIMARY KEY, name text NOT NULL,"
            + " email varchar(100), balance numeric(12,2), born date, seen timestamptz,"
            + " created timestamp(6), active boolean, profile jsonb, token uuid, photo bytea,"
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

  @AfterEach
  void stop() throws Exception {
    if (running != null) {
      running.cancel().get();
    }
    connection.close();
  }

  @Test
  void snapshotThenStreamThenResumeFromCheckpoint() throws Exception {
    CaptureJob job = job(null);
    CapturePipeline pipeline = new CapturePipeline(job);
    running = pipeline.start();
    Catalog catalog = ApplyPipeline.catalogLoader(job.warehouse(), Map.of()).loadCatalog();
    var targets = pipeline.targets();
    assertThat(targets.values())
        .extracting(TableIdentifier::toString)
        .containsExactlyInAnyOrder("cdc.inventory_customers", "cdc.inventory_order_lines");

    SourceTables.awaitEqual(running, connection, catalog, targets, Duration.ofSeconds(90));

    // Streamed: updates, deletes, inserts, a key change, and a transaction of several statements.
    execute(
        "UPDATE inventory.customers SET balance = balance + 1, seen = now() WHERE id % 3 = 0",
        "DELETE FROM inventory.customers WHERE id % 7 = 0",
        "UPDATE inventory.customers SET id = id + 1000 WHERE id <= 5",
        "UPDATE inventory.order_lines SET qty = qty + 100 WHERE line = 2");
    for (int i = 201; i <= 230; i++) {
      insertCustomer(i);
    }
    connection.setAutoCommit(false);
    execute(
        "UPDATE inventory.customers SET name = 'in a transaction' WHERE id = 10",
        "DELETE FROM inventory.customers WHERE id = 11",
        "INSERT INTO inventory.customers (id, name) VALUES (11, 'back again')",
        "UPDATE inventory.customers SET name = 'changed twice' WHERE id = 11",
        "DELETE FROM inventory.order_lines WHERE order_id = 1");
    connection.commit();
    connection.setAutoCommit(true);
    SourceTables.awaitEqual(running, connection, catalog, targets, Duration.ofSeconds(60));

    // Cancelled; the database goes on; the job resumes from its last checkpoint.
    running.cancel().get();
    running = null;
    execute(
        "UPDATE inventory.customers SET email = 'while-down@example.com' WHERE id % 2 = 0",
        "DELETE FROM inventory.customers WHERE id BETWEEN 100 AND 120",
        "INSERT INTO inventory.order_lines VALUES (99, 1, 1, 'while down')");
    String checkpoint = Checkpoints.latest(job.checkpointDirectory()).orElseThrow().toString();
    running = new CapturePipeline(job(checkpoint)).start();
    execute("UPDATE inventory.customers SET visits = 42 WHERE id = 150");
    SourceTables.awaitEqual(running, connection, catalog, targets, Duration.ofSeconds(90));

    for (TableIdentifier identifier : targets.values()) {
      assertEachCheckpointCommittedOnce(catalog.loadTable(identifier));
    }
    // Resumed from the checkpoint's offsets, not from a new snapshot, which would have rewritten
    // all of the table's rows.
    Table customers = catalog.loadTable(TableIdentifier.parse("cdc.inventory_customers"));
    assertThat(rowsUpdatedByLastJob(customers)).isBetween(1L, 120L);
  }

  /** The rows that the commits of the job that committed last updated. */
  static long rowsUpdatedByLastJob(Table table) {
    String lastJob = table.currentSnapshot().summary().get(SnapshotSummaryKeys.JOB_ID);
    long updated = 0;
    for (Snapshot snapshot : table.snapshots()) {
      if (lastJob.equals(snapshot.summary().get(SnapshotSummaryKeys.JOB_ID))) {
        updated +=
            Long.parseLong(snapshot.summary().getOrDefault(SnapshotSummaryKeys.ROWS_UPDATED, "0"));
      }
    }
    return updated;
  }

  @Test
  void refusesToResumeBehindTheReplicationSlot() throws Exception {
    CaptureJob job = job(null);
    CapturePipeline pipeline = new CapturePipeline(job);
    running = pipeline.start();
    Catalog catalog = ApplyPipeline.catalogLoader(job.warehouse(), Map.of()).loadCatalog();
    SourceTables.awaitEqual(
        running, connection, catalog, pipeline.targets(), Duration.ofSeconds(90));
    execute("UPDATE inventory.customers SET visits = 1 WHERE id = 1");
    SourceTables.awaitEqual(
        running, connection, catalog, pipeline.targets(), Duration.ofSeconds(60));
    Path early = Checkpoints.latest(job.checkpointDirectory()).orElseThrow();
    Path kept = dir.resolve("kept-checkpoint");
    copyDirectory(early, kept);

    // The slot moves on past the kept checkpoint once later checkpoints complete.
    execute("UPDATE inventory.customers SET visits = 2 WHERE id = 2");
    SourceTables.awaitEqual(
        running, connection, catalog, pipeline.targets(), Duration.ofSeconds(60));
    Thread.sleep(2_000);
    running.cancel().get();
    running = null;

    assertThatThrownBy(
            () -> new CapturePipeline(job(kept.toString())).start().getJobExecutionResult().get())
        .hasStackTraceContaining("has already released the log");
  }

  private CaptureJob job(String restoreFrom) {
    DatabaseSource source =
        new DatabaseSource(
            DatabaseSource.Kind.POSTGRES,
            "127.0.0.1",
            5432,
            "postgres",
            null,
            DATABASE,
            List.of("inventory\\..*"),
            SLOT,
            "icebergcdc_it",
            0,
            "pg");
    return new CaptureJob(
        source,
        dir.resolve("warehouse").toString(),
        "cdc.{schema}_{table}",
        2,
        2,
        Duration.ofMillis(300),
        dir.resolve("checkpoints").toString(),
        "hashmap",
        new Configuration(),
        null,
        restoreFrom,
        0);
  }

  private void insertCustomer(int id) throws SQLException {
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

  private void assertEachCheckpointCommittedOnce(Table table) {
    Set<String> commits = new HashSet<>();
    for (Snapshot snapshot : table.snapshots()) {
      String job = snapshot.summary().get(SnapshotSummaryKeys.JOB_ID);
      String checkpoint = snapshot.summary().get(SnapshotSummaryKeys.CHECKPOINT_ID);
      if (checkpoint != null) {
        assertThat(commits.add(job + "/" + checkpoint))
            .as("checkpoint %s of job %s committed once to %s", checkpoint, job, table.name())
            .isTrue();
      }
    }
    assertThat(commits).isNotEmpty();
  }

  private static void copyDirectory(Path from, Path to) throws java.io.IOException {
    try (var paths = java.nio.file.Files.walk(from)) {
      for (Path path : paths.toList()) {
        java.nio.file.Files.copy(path, to.resolve(from.relativize(path).toString()));
      }
    }
  }

  private void execute(String... statements) throws SQLException {
    try (Statement statement = connection.createStatement()) {
      for (String sql : statements) {
        statement.execute(sql);
      }
    }
  }
}
