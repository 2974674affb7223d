package io.icebergcdc.it;

import static org.assertj.core.api.Assertions.assertThat;

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
import java.util.List;
import java.util.Map;
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
 * Captures a live MariaDB database (its ROW binlog, set up by the build's {@code
 * setup-databases.sh}) through Debezium's MariaDB connector into Iceberg tables, and compares them
 * with the source tables after the snapshot, after streamed changes, and after a resume from the
 * last checkpoint; the binlog position orders the changes and is the committed source position.
 */
class MariaDbCaptureITCase {

  private static final String DATABASE = "icebergcdc_it";

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
    connection =
        DriverManager.getConnection("jdbc:mysql://127.0.0.1:3306/?tinyInt1isBit=false", "root", "");
    execute(
        "DROP DATABASE IF EXISTS " + DATABASE,
        "CREATE DATABASE " + DATABASE,
        "USE " + DATABASE,
        "CREATE TABLE customers (id int PRIMARY KEY, name varchar(100) NOT NULL,"
            + " email varchar(100), balance decimal(12,2), born date, seen timestamp(6) NULL,"
            + " created datetime(6), active boolean, profile json, photo varbinary(16),"
            + " score double, rating float, visits smallint, total bigint,"
            + " counter bigint unsigned, opens time(6))",
        "CREATE TABLE order_lines (order_id int, line int, qty int NOT NULL, note text,"
            + " PRIMARY KEY (order_id, line))");
    for (int i = 1; i <= 200; i++) {
      insertCustomer(i);
    }
    for (int order = 1; order <= 20; order++) {
      for (int line = 1; line <= 3; line++) {
        execute(
            String.format(
                "INSERT INTO order_lines VALUES (%d, %d, %d, 'note %d')",
                order, line, order * line, order));
      }
    }
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
    Map<?, TableIdentifier> targets = pipeline.targets();
    assertThat(targets.values())
        .extracting(TableIdentifier::toString)
        .containsExactlyInAnyOrder("mariadb.customers", "mariadb.order_lines");
    SourceTables.awaitEqual(
        running, connection, catalog, pipeline.targets(), Duration.ofSeconds(90));

    execute(
        "UPDATE customers SET balance = balance + 1, seen = now(6) WHERE id % 3 = 0",
        "DELETE FROM customers WHERE id % 7 = 0",
        "UPDATE customers SET id = id + 1000 WHERE id <= 5",
        "UPDATE order_lines SET qty = qty + 100 WHERE line = 2");
    for (int i = 201; i <= 230; i++) {
      insertCustomer(i);
    }
    connection.setAutoCommit(false);
    execute(
        "UPDATE customers SET name = 'in a transaction' WHERE id = 10",
        "DELETE FROM customers WHERE id = 11",
        "INSERT INTO customers (id, name) VALUES (11, 'back again')",
        "UPDATE customers SET name = 'changed twice' WHERE id = 11",
        "DELETE FROM order_lines WHERE order_id = 1");
    connection.commit();
    connection.setAutoCommit(true);
    SourceTables.awaitEqual(
        running, connection, catalog, pipeline.targets(), Duration.ofSeconds(60));

    running.cancel().get();
    running = null;
    execute(
        "UPDATE customers SET email = 'while-down@example.com' WHERE id % 2 = 0",
        "DELETE FROM customers WHERE id BETWEEN 100 AND 120",
        "INSERT INTO order_lines VALUES (99, 1, 1, 'while down')");
    String checkpoint = Checkpoints.latest(job.checkpointDirectory()).orElseThrow().toString();
    running = new CapturePipeline(job(checkpoint)).start();
    execute("UPDATE customers SET visits = 42 WHERE id = 150");
    SourceTables.awaitEqual(
        running, connection, catalog, pipeline.targets(), Duration.ofSeconds(90));

    Table customers = catalog.loadTable(TableIdentifier.parse("mariadb.customers"));
    assertThat(PostgresCaptureITCase.rowsUpdatedByLastJob(customers)).isBetween(1L, 120L);
    Snapshot last = customers.currentSnapshot();
    assertThat(last.summary().get(SnapshotSummaryKeys.SOURCE_POSITION)).contains("mysql-bin");
  }

  private CaptureJob job(String restoreFrom) {
    DatabaseSource source =
        new DatabaseSource(
            DatabaseSource.Kind.MARIADB,
            "127.0.0.1",
            3306,
            "root",
            null,
            DATABASE,
            List.of(),
            null,
            null,
            5401,
            "maria");
    return new CaptureJob(
        source,
        dir.resolve("warehouse").toString(),
        "mariadb.{table}",
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
            "INSERT INTO customers VALUES (%d, 'customer %d', %s, %d.25,"
                + " DATE_ADD('1980-01-01', INTERVAL %d DAY),"
                + " TIMESTAMP('2026-01-01 10:00:00.123456') + INTERVAL %d MINUTE,"
                + " TIMESTAMP('2026-02-03 04:05:06.789') + INTERVAL %d SECOND, %s,"
                + " '{\"tier\": %d}', UNHEX('%02x0102'), %d.5, %d.25, %d, %d, %s,"
                + " ADDTIME('08:30:00', SEC_TO_TIME(%d * 60)))",
            id,
            id,
            id % 5 == 0 ? "NULL" : "'c" + id + "@example.com'",
            id * 10,
            id,
            id,
            id,
            id % 2 == 0 ? "true" : "false",
            id % 3,
            id % 256,
            id,
            id,
            id % 100,
            id * 1_000_000_000L,
            id == 1 ? Long.toUnsignedString(-1L) : Long.toString(id),
            id));
  }

  private void execute(String... statements) throws SQLException {
    try (Statement statement = connection.createStatement()) {
      for (String sql : statements) {
        statement.execute(sql);
      }
    }
  }
}
