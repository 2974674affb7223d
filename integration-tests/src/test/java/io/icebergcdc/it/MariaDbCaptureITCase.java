package io.icebergcdc.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.icebergcdc.commit.SnapshotSummaryKeys;
import io.icebergcdc.jobs.Checkpoints;
import io.icebergcdc.jobs.definition.DatabaseSource;
import io.icebergcdc.jobs.definition.JobDefinition;
import io.icebergcdc.jobs.pipeline.JobRunner;
import io.icebergcdc.jobs.pipeline.TableTarget;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.client.program.ClusterClient;
import org.apache.flink.test.junit5.InjectClusterClient;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Captures a live MariaDB database (its ROW binlog, set up by the build's {@code
 * setup-databases.sh}) through Debezium's MariaDB connector into Iceberg tables, and compares them
 * with the source tables after the snapshot, after streamed changes, and after a resume from the
 * last checkpoint; the binlog position orders the changes and is the committed source position.
 */
class MariaDbCaptureITCase extends CaptureScenario {

  private static final String DATABASE = "icebergcdc_it";

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

  @Test
  void snapshotThenStreamThenResumeFromCheckpoint() throws Exception {
    List<TableTarget> targets = snapshotThenStreamThenResume();
    assertThat(targets.stream().map(TableTarget::table).toList())
        .extracting(TableIdentifier::toString)
        .containsExactlyInAnyOrder("mariadb.customers", "mariadb.order_lines");
    Table customers = catalog(job(null)).loadTable(TableIdentifier.parse("mariadb.customers"));
    assertThat(customers.currentSnapshot().summary().get(SnapshotSummaryKeys.SOURCE_POSITION))
        .contains("mysql-bin");
  }

  /**
   * A table created while the job runs is taken in flight: the connector, whose table list is the
   * job's patterns, reads its {@code CREATE TABLE} and later changes from the binlog; its first
   * rows, written without the binlog, come from the chunks the enumerator snapshots beside it; the
   * job fails once after the first commit to it and is restored in place (see {@link
   * CaptureScenario#picksUpATableCreatedWhileTheJobRuns}).
   */
  @Test
  void picksUpATableCreatedWhileTheJobRuns(@InjectClusterClient ClusterClient<?> client)
      throws Exception {
    JobDefinition job =
        job(
            source().withSnapshotChunkRows(100).withTableDiscoveryInterval(Duration.ofSeconds(1)),
            "mariadb.{table}",
            null);
    picksUpATableCreatedWhileTheJobRuns(
        job,
        client,
        DATABASE + ".returns",
        TableIdentifier.of("mariadb", "returns"),
        "CREATE TABLE returns (id int PRIMARY KEY, reason text, amount decimal(8,2))",
        // Rows the binlog does not hold, as a table filled before the binlog's retention: only
        // the table's chunks bring them.
        "SET sql_log_bin = 0",
        "INSERT INTO returns SELECT seq, CONCAT('reason ', seq), seq * 1.5 FROM seq_1_to_1000",
        "SET sql_log_bin = 1");
  }

  /**
   * A table added to the tables of a job restored from a state of Debezium's own snapshot: an
   * existing table's rows would never be read, and the job cannot tell it from one created after
   * the state's binlog position (which the binlog holds whole), so it ends naming the ways out.
   */
  @Test
  void aTableAddedToAJobRestoredFromDebeziumsSnapshotEndsItNamingTheWayOut() throws Exception {
    String checkpoint =
        runUntilEqualThenCancel(
            job(
                source(List.of(DATABASE + "\\.customers")).withSnapshotChunkRows(0),
                "mariadb.{table}",
                null));
    running =
        new JobRunner(
                withRuntime(
                    job(source().withSnapshotChunkRows(0), "mariadb.{table}", null), checkpoint, 0))
            .start();
    org.assertj.core.api.Assertions.assertThatThrownBy(this::awaitTheJobsEnd)
        .hasStackTraceContaining("include [" + DATABASE + ".order_lines]")
        .hasStackTraceContaining("the job cannot tell them apart");
  }

  /**
   * A table created, filled and dropped while the job runs, as an ETL job's staging table is: the
   * connector reads its rows from the binlog before the job has taken the table, and skips them;
   * the table is gone when the job would take it. The job goes on, its tables equal to their
   * sources.
   */
  @Test
  void goesOnPastATableCreatedAndDroppedWhileItRuns() throws Exception {
    JobDefinition job =
        job(
            source().withSnapshotChunkRows(100).withTableDiscoveryInterval(Duration.ofSeconds(1)),
            "mariadb.{table}",
            null);
    JobRunner pipeline = new JobRunner(job);
    running = pipeline.start();
    awaitEqual(job, pipeline, Duration.ofSeconds(90));
    execute(
        "CREATE TABLE staging (id int PRIMARY KEY, v text)",
        "INSERT INTO staging SELECT seq, 'staged' FROM seq_1_to_500",
        "DROP TABLE staging",
        "UPDATE customers SET visits = 5 WHERE id <= 3");
    // Two looks for new tables later.
    Thread.sleep(2500);
    execute("UPDATE customers SET visits = 6 WHERE id <= 2");
    awaitEqual(job, pipeline, Duration.ofSeconds(60));
    assertThat(running.getJobStatus().get()).isEqualTo(JobStatus.RUNNING);
  }

  /**
   * Debezium's schema history records every DDL of the database, and each checkpoint holds it: a
   * job through a long life of schema changes (here 150 on one of its tables, as an ETL job adds
   * and drops columns, and one on another) keeps each table's last state instead of every
   * statement. The checkpoint after them holds at most the floor's number of them, and the job
   * resumed from it reads the binlog on, rows of the table's last columns and of a column added
   * while it was down.
   */
  @Test
  void aLongHistoryOfSchemaChangesIsCompactedAndRestores() throws Exception {
    execute(
        "CREATE TABLE scratch (id int PRIMARY KEY, c0 int)", "INSERT INTO scratch VALUES (1, 0)");
    JobDefinition job =
        job(
            source(
                List.of(
                    DATABASE + "\\.customers",
                    DATABASE + "\\.order_lines",
                    DATABASE + "\\.scratch")),
            "mariadb.{table}",
            null);
    JobRunner pipeline = new JobRunner(job);
    running = pipeline.start();
    awaitEqual(job, pipeline, Duration.ofSeconds(90));
    for (int i = 1; i < 60; i++) {
      execute("ALTER TABLE scratch ADD COLUMN c" + i + " int");
    }
    execute("INSERT INTO scratch (id, c1, c59) VALUES (2, 1, 59)");
    for (int i = 0; i < 60; i += 2) {
      execute("ALTER TABLE scratch DROP COLUMN c" + i);
    }
    execute(
        "ALTER TABLE customers ADD COLUMN tier varchar(10)",
        "UPDATE customers SET tier = 'gold' WHERE id <= 10");
    for (int i = 60; i < 120; i++) {
      execute("ALTER TABLE scratch ADD COLUMN c" + i + " int");
    }
    execute(
        "INSERT INTO scratch (id, c1, c119) VALUES (3, 1, 119)",
        "UPDATE customers SET visits = 7 WHERE id <= 5");
    awaitEqual(job, pipeline, Duration.ofSeconds(90));
    // 150 statements on scratch; a checkpoint compacts once 64 records came since the last time,
    // those at or before the offsets of the checkpoint before it: one or two checkpoints on.
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    while (alterStatementsInTheLatestCheckpoint(job) > 64 && System.nanoTime() < deadline) {
      Thread.sleep(300);
    }
    JobClients.cancelAndAwait(running);
    running = null;
    String checkpoint = Checkpoints.latest(job.runtime().checkpointDirectory()).orElseThrow();
    assertThat(count(checkpointText(Path.of(checkpoint)), "\"ddl\":\"ALTER TABLE scratch"))
        .isBetween(0, 64);

    execute(
        "ALTER TABLE customers ADD COLUMN rank int",
        "UPDATE customers SET rank = id, tier = 'silver' WHERE id BETWEEN 5 AND 20",
        "ALTER TABLE scratch ADD COLUMN while_down int",
        "INSERT INTO scratch (id, c1, c119, while_down) VALUES (4, 1, 119, 4)",
        "UPDATE scratch SET c61 = 61 WHERE id <= 3");
    JobDefinition resumed = withRuntime(job, checkpoint, 0);
    JobRunner resumedPipeline = new JobRunner(resumed);
    running = resumedPipeline.start();
    execute(
        "UPDATE customers SET visits = 8 WHERE id <= 30",
        "INSERT INTO scratch (id, c3, while_down) VALUES (5, 3, 5)");
    awaitEqual(resumed, resumedPipeline, Duration.ofSeconds(90));
  }

  private static int count(String text, String part) {
    int count = 0;
    for (int at = text.indexOf(part); at >= 0; at = text.indexOf(part, at + 1)) {
      count++;
    }
    return count;
  }

  /** The bytes of a checkpoint's files, as text: the source's state holds the history as JSON. */
  private static String checkpointText(Path checkpoint) throws IOException {
    StringBuilder text = new StringBuilder();
    try (Stream<Path> files = Files.walk(checkpoint)) {
      for (Path file : files.filter(Files::isRegularFile).toList()) {
        text.append(new String(Files.readAllBytes(file), StandardCharsets.ISO_8859_1));
      }
    }
    return text.toString();
  }

  @Override
  java.sql.Connection newConnection() throws SQLException {
    return DriverManager.getConnection(
        "jdbc:mysql://127.0.0.1:3306/" + DATABASE + "?tinyInt1isBit=false", "root", "");
  }

  @Override
  String allowNullQuantity() {
    return "ALTER TABLE order_lines MODIFY qty bigint NULL";
  }

  @Override
  String widenQuantity() {
    return "ALTER TABLE order_lines MODIFY qty bigint NOT NULL";
  }

  @Override
  String table(String name) {
    return name;
  }

  @Override
  String now() {
    return "now(6)";
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
    return job(source(), "mariadb.{table}", restoreFrom);
  }

  /** The database's tables, with the source's defaults. */
  private static DatabaseSource source() {
    return source(List.of());
  }

  /** The tables {@code tables} match (all where empty), with the source's defaults. */
  private static DatabaseSource source(List<String> tables) {
    return new DatabaseSource(
        DatabaseSource.Kind.MARIADB,
        "127.0.0.1",
        3306,
        "root",
        null,
        DATABASE,
        tables,
        null,
        null,
        5401,
        "maria");
  }

  @Override
  void insertCustomer(int id) throws SQLException {
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

  private static int alterStatementsInTheLatestCheckpoint(JobDefinition job) {
    try {
      String checkpoint = Checkpoints.latest(job.runtime().checkpointDirectory()).orElseThrow();
      return count(checkpointText(Path.of(checkpoint)), "\"ddl\":\"ALTER TABLE scratch");
    } catch (Exception e) {
      // A checkpoint subsumed and deleted while it was read: the next one is read next time.
      return Integer.MAX_VALUE;
    }
  }
}
