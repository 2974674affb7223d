package io.icebergcdc.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.icebergcdc.commit.SnapshotSummaryKeys;
import io.icebergcdc.jobs.Checkpoints;
import io.icebergcdc.jobs.definition.DatabaseSource;
import io.icebergcdc.jobs.definition.DeadLetterOutput;
import io.icebergcdc.jobs.definition.JobDefinition;
import io.icebergcdc.jobs.definition.RuntimeDefinition;
import io.icebergcdc.jobs.definition.TableDefinition;
import io.icebergcdc.jobs.pipeline.JobRunner;
import io.icebergcdc.jobs.pipeline.TableTarget;
import io.icebergcdc.sink.CatalogDefinition;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
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
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * What the capture ITCases share: a MiniCluster, a connection to the source database, and the
 * scenario of snapshot, streamed changes (updates, deletes, a key change, inserts, a transaction of
 * several statements), cancellation, changes while the job is down, and resume from the latest
 * checkpoint, with the Iceberg tables compared to the source tables row for row after each phase.
 *
 * <p>Each database's test creates {@code customers} (an int key {@code id}, a {@code name}, an
 * {@code email}, {@code balance}, {@code seen} and {@code visits} among other columns) and {@code
 * order_lines} (a composite key {@code order_id, line}, {@code qty}, {@code note}).
 */
abstract class CaptureScenario {

  @RegisterExtension
  static final MiniClusterExtension FLINK =
      new MiniClusterExtension(
          new MiniClusterResourceConfiguration.Builder()
              .setNumberTaskManagers(1)
              .setNumberSlotsPerTaskManager(8)
              .build());

  @TempDir Path dir;

  Connection connection;
  JobClient running;

  /** The catalog of the scenario's tables: a hadoop catalog in the test's directory by default. */
  CatalogDefinition catalog;

  /** The sink options of the scenario's jobs: the defaults unless a test sets some. */
  final Configuration sinkOptions = new Configuration();

  /** The job, resuming from a checkpoint or not. */
  abstract JobDefinition job(String restoreFrom);

  /**
   * A job of the scenario: two writers, checkpoints every 300 ms into the test's directory, and no
   * restarts, so that a failure fails the test at once.
   */
  JobDefinition job(DatabaseSource source, String tableTemplate, String restoreFrom) {
    return new JobDefinition(
        source,
        catalog != null ? catalog : CatalogDefinition.hadoop(dir.resolve("warehouse").toString()),
        new TableDefinition(tableTemplate, List.of(), null, 2),
        sinkOptions,
        DeadLetterOutput.NONE,
        new RuntimeDefinition(
            2,
            Duration.ofMillis(300),
            dir.resolve("checkpoints").toString(),
            "hashmap",
            restoreFrom,
            0));
  }

  /** A connection of its own to the source database, in the scenario's database or schema. */
  abstract java.sql.Connection newConnection() throws SQLException;

  /** The qualified name of a source table in SQL. */
  abstract String table(String name);

  /** Inserts a customer with every column set (some null) from its id. */
  abstract void insertCustomer(int id) throws SQLException;

  @AfterEach
  void stop() throws Exception {
    if (running != null) {
      JobClients.cancelAndAwait(running, dir);
    }
    if (connection != null) {
      connection.close();
    }
  }

  /** Runs the scenario and returns the Iceberg tables it checked. */
  List<TableTarget> snapshotThenStreamThenResume() throws Exception {
    JobDefinition job = job(null);
    JobRunner pipeline = new JobRunner(job);
    running = pipeline.start();
    Catalog catalog = catalog(job);
    List<TableTarget> targets = pipeline.targets();
    awaitEqual(job, pipeline, Duration.ofSeconds(90));

    String customers = table("customers");
    String orderLines = table("order_lines");
    execute(
        "UPDATE " + customers + " SET balance = balance + 1, seen = " + now() + " WHERE id % 3 = 0",
        "DELETE FROM " + customers + " WHERE id % 7 = 0",
        "UPDATE " + customers + " SET id = id + 1000 WHERE id <= 5",
        "UPDATE " + orderLines + " SET qty = qty + 100 WHERE line = 2");
    for (int i = 201; i <= 230; i++) {
      insertCustomer(i);
    }
    connection.setAutoCommit(false);
    execute(
        "UPDATE " + customers + " SET name = 'in a transaction' WHERE id = 10",
        "DELETE FROM " + customers + " WHERE id = 11",
        "INSERT INTO " + customers + " (id, name) VALUES (11, 'back again')",
        "UPDATE " + customers + " SET name = 'changed twice' WHERE id = 11",
        "DELETE FROM " + orderLines + " WHERE order_id = 1");
    connection.commit();
    connection.setAutoCommit(true);
    awaitEqual(job, pipeline, Duration.ofSeconds(60));

    // Cancelled; the database goes on; the job resumes from its last checkpoint.
    JobClients.cancelAndAwait(running);
    running = null;
    execute(
        "UPDATE " + customers + " SET email = 'while-down@example.com' WHERE id % 2 = 0",
        "DELETE FROM " + customers + " WHERE id BETWEEN 100 AND 120",
        "INSERT INTO " + orderLines + " VALUES (99, 1, 1, 'while down')");
    String checkpoint =
        Checkpoints.latest(job.runtime().checkpointDirectory()).orElseThrow().toString();
    running = new JobRunner(job(checkpoint)).start();
    execute("UPDATE " + customers + " SET visits = 42 WHERE id = 150");
    awaitEqual(job, pipeline, Duration.ofSeconds(90));

    for (TableIdentifier identifier : targets.stream().map(TableTarget::table).toList()) {
      Table table = catalog.loadTable(identifier);
      assertEachCheckpointCommittedOnce(table);
      if (identifier.name().endsWith("customers")) {
        // Resumed from the checkpoint's offsets, not from a new snapshot, which would have
        // rewritten every row of the table.
        assertThat(rowsUpdatedByLastJob(table)).isBetween(1L, 120L);
      }
    }
    return targets;
  }

  /**
   * Changes the schemas of both tables while the job runs, with changes that follow each change: a
   * column added and a required column dropped on {@code customers} and {@code order_lines.qty}
   * widened from int to bigint, all before the first change that shows them; then, after the job
   * has caught up, another column added to {@code order_lines}. The tables are written by one
   * writer, which follows each change while the job runs: the source evolves the Iceberg table at
   * the first event of a changed schema, and the writer writes that schema's rows from then on. The
   * job is never ended, and every checkpoint is committed once. With equality deletes the same
   * writer deletes each table's rows by key. Each schema change is made under load: another
   * connection updates, inserts and deletes rows of both tables in short transactions before, while
   * and after the {@code ALTER TABLE}s run.
   */
  @ParameterizedTest
  @ValueSource(strings = {"POSITION", "EQUALITY"})
  void followsSchemaChangesMidStream(
      String deleteMode, @InjectClusterClient ClusterClient<?> client) throws Exception {
    sinkOptions.setString("sink.delete-mode", deleteMode);
    JobDefinition job = job(null);
    JobRunner pipeline = new JobRunner(job);
    try (BackgroundRun run = BackgroundRun.start(pipeline, client)) {
      Callable<?> running = run.running();
      Catalog catalog = catalog(job);
      awaitColumn(running, pipeline, "customers", "name");
      awaitEqual(running, catalog, job, pipeline, Duration.ofSeconds(90));

      String customers = table("customers");
      String orderLines = table("order_lines");
      long loaded = 0;
      try (Load load = Load.start(newConnection(), customers, orderLines)) {
        execute(
            "ALTER TABLE " + customers + " ADD COLUMN loyalty varchar(20)",
            widenQuantity(),
            "ALTER TABLE " + customers + " DROP COLUMN name");
        execute(
            "UPDATE " + customers + " SET loyalty = 'gold' WHERE id % 4 = 0",
            "INSERT INTO "
                + customers
                + " (id, email, loyalty) VALUES (300, 'new@example.com', 'new')",
            "DELETE FROM " + customers + " WHERE id = 9",
            "UPDATE " + orderLines + " SET qty = qty + 5000000000 WHERE line = 3");
        loaded += load.stop();
      }
      awaitIcebergColumn(running, catalog, pipeline, "customers", "loyalty");
      awaitEqual(running, catalog, job, pipeline, Duration.ofSeconds(120));

      try (Load load = Load.start(newConnection(), customers, orderLines)) {
        execute(
            "ALTER TABLE " + orderLines + " ADD COLUMN shipped date",
            "UPDATE " + orderLines + " SET shipped = DATE '2026-05-01' WHERE order_id = 2");
        loaded += load.stop();
      }
      awaitIcebergColumn(running, catalog, pipeline, "order_lines", "shipped");
      awaitEqual(running, catalog, job, pipeline, Duration.ofSeconds(120));

      // NOT NULL dropped: the Iceberg column becomes optional at the first change that shows it,
      // not a null refused as a bad record.
      try (Load load = Load.start(newConnection(), customers, orderLines)) {
        execute(allowNullQuantity(), "UPDATE " + orderLines + " SET qty = NULL WHERE order_id = 3");
        loaded += load.stop();
      }
      awaitEqual(running, catalog, job, pipeline, Duration.ofSeconds(120));
      assertThat(loaded).as("transactions of the load beside the schema changes").isGreaterThan(30);

      Table icebergCustomers = catalog.loadTable(target(pipeline, "customers"));
      Table icebergOrderLines = catalog.loadTable(target(pipeline, "order_lines"));
      assertThat(icebergCustomers.schema().findField("loyalty").type())
          .isEqualTo(Types.StringType.get());
      assertThat(icebergOrderLines.schema().findField("qty").type())
          .isEqualTo(Types.LongType.get());
      assertThat(icebergOrderLines.schema().findField("shipped").type())
          .isEqualTo(Types.DateType.get());
      assertThat(icebergOrderLines.schema().findField("qty").isOptional()).isTrue();
      // The dropped column stays: null in rows written since, its value in rows not changed.
      assertThat(icebergCustomers.schema().findField("name").isOptional()).isTrue();
      Map<Object, Object> names = new HashMap<>();
      try (CloseableIterable<Record> records = IcebergGenerics.read(icebergCustomers).build()) {
        for (Record record : records) {
          names.put(record.getField("id"), record.getField("name"));
        }
      }
      assertThat(names).containsEntry(1, "customer 1").containsEntry(300, null);
      assertThat(names.get(4)).isNull();

      Set<String> jobs = new HashSet<>();
      for (Table table : List.of(icebergCustomers, icebergOrderLines)) {
        assertEachCheckpointCommittedOnce(table);
        long equalityDeletes = 0;
        for (Snapshot snapshot : table.snapshots()) {
          equalityDeletes +=
              Long.parseLong(snapshot.summary().getOrDefault("added-equality-delete-files", "0"));
        }
        assertThat(equalityDeletes > 0)
            .as("equality delete files in %s", table.name())
            .isEqualTo(deleteMode.equals("EQUALITY"));
        for (Snapshot snapshot : table.snapshots()) {
          jobs.add(snapshot.summary().get(SnapshotSummaryKeys.JOB_ID));
        }
      }
      assertThat(jobs).as("one job, never ended for a schema change").hasSize(1);
      // The job was built with the first schemas and never built again.
      assertThat(
              pipeline.targets().stream()
                  .filter(t -> t.source().endsWith(".customers"))
                  .findFirst()
                  .orElseThrow()
                  .schema()
                  .schema()
                  .findField("loyalty"))
          .isNull();
    }
  }

  /**
   * Writes both tables in short transactions on a connection of its own until stopped: each updates
   * a customer's {@code email} and an order line's {@code note} (columns no schema change touches;
   * customers from 20 up, whose dropped {@code name} the test does not look at), inserts an order
   * line past the fixture's and deletes the one inserted five transactions before. Runs for at
   * least a second before and after what it is started around, so that schema changes land among
   * its changes.
   */
  static final class Load implements AutoCloseable {

    /** The number of the next transaction of any load. */
    private static final java.util.concurrent.atomic.AtomicLong NEXT =
        new java.util.concurrent.atomic.AtomicLong(1);

    private final Connection connection;
    private final Thread thread;
    private final java.util.concurrent.atomic.AtomicBoolean stopping =
        new java.util.concurrent.atomic.AtomicBoolean();
    private final java.util.concurrent.atomic.AtomicLong transactions =
        new java.util.concurrent.atomic.AtomicLong();
    private volatile Exception failure;

    private Load(Connection connection, String customers, String orderLines) {
      this.connection = connection;
      this.thread =
          new Thread(
              () -> {
                try {
                  run(customers, orderLines);
                } catch (Exception e) {
                  failure = e;
                }
              },
              "schema-change-load");
    }

    static Load start(Connection connection, String customers, String orderLines)
        throws InterruptedException {
      Load load = new Load(connection, customers, orderLines);
      load.thread.start();
      long deadline = System.nanoTime() + Duration.ofSeconds(1).toNanos();
      while (System.nanoTime() < deadline && load.failure == null) {
        Thread.sleep(50);
      }
      return load;
    }

    private void run(String customers, String orderLines) throws SQLException {
      connection.setAutoCommit(false);
      try (Statement statement = connection.createStatement()) {
        while (!stopping.get()) {
          // Numbered on from the loads before, whose last rows are still there.
          long n = NEXT.getAndIncrement();
          try {
            write(statement, customers, orderLines, n);
            connection.commit();
            transactions.incrementAndGet();
          } catch (SQLException e) {
            if (e.getSQLState() == null || !e.getSQLState().startsWith("40")) {
              throw e;
            }
            // A deadlock with the test's own statements (MariaDB's gap locks), this transaction
            // the one rolled back: the next one goes on.
            connection.rollback();
          }
          Thread.sleep(10);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }

    private static void write(Statement statement, String customers, String orderLines, long n)
        throws SQLException {
      long customer = 20 + n % 180;
      long order = 1 + n % 20;
      statement.execute(
          "UPDATE "
              + customers
              + " SET email = CONCAT('load-', id, '-', "
              + n
              + ", '@example.com') WHERE id = "
              + customer);
      statement.execute(
          "UPDATE "
              + orderLines
              + " SET note = CONCAT('load ', "
              + n
              + ") WHERE order_id = "
              + order
              + " AND line = "
              + (1 + n % 3));
      statement.execute(
          "INSERT INTO "
              + orderLines
              + " (order_id, line, qty, note) VALUES ("
              + order
              + ", "
              + (100 + n)
              + ", "
              + n
              + ", 'inserted under load')");
      if (n > 5) {
        statement.execute(
            "DELETE FROM "
                + orderLines
                + " WHERE order_id = "
                + (1 + (n - 5) % 20)
                + " AND line = "
                + (100 + n - 5));
      }
    }

    /** Goes on for a second, then stops; returns how many transactions it committed. */
    long stop() throws Exception {
      if (!stopping.get()) {
        long deadline = System.nanoTime() + Duration.ofSeconds(1).toNanos();
        while (System.nanoTime() < deadline && failure == null) {
          Thread.sleep(50);
        }
      }
      stopping.set(true);
      thread.join(Duration.ofSeconds(60).toMillis());
      if (failure != null) {
        throw new AssertionError("the load beside the schema changes failed", failure);
      }
      return transactions.get();
    }

    @Override
    public void close() throws Exception {
      try {
        stopping.set(true);
        thread.join(Duration.ofSeconds(60).toMillis());
      } finally {
        connection.close();
      }
    }
  }

  /** Waits until the Iceberg table of source table {@code table} has the column. */
  static void awaitIcebergColumn(
      Callable<?> running, Catalog catalog, JobRunner pipeline, String table, String column)
      throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
    while (System.nanoTime() < deadline) {
      running.call();
      try {
        if (catalog.loadTable(target(pipeline, table)).schema().findField(column) != null) {
          return;
        }
      } catch (IllegalStateException notBuiltYet) {
        // the runner thread has not built the job yet
      }
      Thread.sleep(200);
    }
    throw new AssertionError("Iceberg table of " + table + " has no column " + column);
  }

  /** The SQL that widens {@code order_lines.qty} from int to bigint, keeping it NOT NULL. */
  abstract String widenQuantity();

  /** The SQL that lets the widened {@code order_lines.qty} be null. */
  abstract String allowNullQuantity();

  /** Waits until the job was built (again) from a source table that has the column. */
  static void awaitColumn(Callable<?> running, JobRunner pipeline, String table, String column)
      throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
    while (System.nanoTime() < deadline) {
      running.call();
      try {
        for (TableTarget target : pipeline.targets()) {
          if (target.source().endsWith("." + table)
              && target.schema().schema().findField(column) != null) {
            return;
          }
        }
      } catch (IllegalStateException notBuiltYet) {
        // the runner thread has not built the job yet
      }
      Thread.sleep(200);
    }
    throw new AssertionError("no job was built with column " + column + " of " + table);
  }

  /**
   * A table created while {@code job} runs (by {@code createAndFill}, named {@code returns}, with
   * 1,000 rows keyed 1 to 1000 and a {@code reason} column) is taken in flight: its Iceberg table
   * is created, it is snapshotted in chunks beside the log and its later changes stream in, while
   * the job goes on. The job fails once, just after its first commit to the new table, and Flink
   * restarts it in place, built as it was, without the table: the source, writer and committer take
   * the table back from the restored state. Every table ends equal to its source, each checkpoint
   * committed once, all by one Flink job.
   *
   * @param returnsSource the new table's qualified name in the source
   * @param returns the new table's Iceberg table
   */
  void picksUpATableCreatedWhileTheJobRuns(
      JobDefinition job,
      ClusterClient<?> client,
      String returnsSource,
      TableIdentifier returns,
      String... createAndFill)
      throws Exception {
    FailAfterFirstCommitTo.failAfterFirstCommitTo(returns);
    JobDefinition restarted = withRuntime(job, job.runtime().restoreFrom(), 3);
    JobRunner pipeline = new JobRunner(restarted, new FailAfterFirstCommitTo());
    try (BackgroundRun run = BackgroundRun.start(pipeline, client)) {
      Callable<?> runs = run.running();
      Catalog catalog = catalog(job);
      awaitColumn(runs, pipeline, "customers", "name");
      awaitEqual(runs, catalog, job, pipeline, Duration.ofSeconds(90));
      List<TableTarget> before = pipeline.targets();

      // A transaction that has written, open while the table appears: a change the log's reader
      // skipped could be such a one's, committed in the log but not yet seen by other sessions,
      // so the table's snapshot is not read before it ends.
      long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
      try (java.sql.Connection writer = newConnection()) {
        writer.setAutoCommit(false);
        try {
          try (Statement statement = writer.createStatement()) {
            assertThat(
                    statement.executeUpdate(
                        "UPDATE "
                            + table("customers")
                            + " SET email = 'open-writer@example.com' WHERE id = 1"))
                .isOne();
          }
          execute(createAndFill);
          while (!catalog.tableExists(returns)) {
            runs.call();
            assertThat(System.nanoTime()).as("table %s", returns).isLessThan(deadline);
            Thread.sleep(100);
          }
          Thread.sleep(3000);
          assertThat(catalog.loadTable(returns).currentSnapshot())
              .as(
                  "a snapshot of %s read while a transaction that wrote before it was taken runs",
                  returns)
              .isNull();
          writer.commit();
        } finally {
          // Else its locks would hold the next test's DROP DATABASE.
          writer.rollback();
        }
      }
      while (!catalog.tableExists(returns)
          || catalog.loadTable(returns).currentSnapshot() == null) {
        runs.call();
        assertThat(System.nanoTime()).as("a commit to %s", returns).isLessThan(deadline);
        Thread.sleep(100);
      }
      String table = table("returns");
      execute(
          "UPDATE " + table + " SET reason = 'changed' WHERE id % 7 = 0",
          "DELETE FROM " + table + " WHERE id % 11 = 0",
          "INSERT INTO " + table + " VALUES (5000, 'late', 1)",
          "UPDATE " + table("customers") + " SET visits = 77 WHERE id <= 10");
      List<TableTarget> all = new java.util.ArrayList<>(before);
      all.add(new TableTarget(returnsSource, null, returns, null));
      SourceTables.awaitEqual(
          runs,
          connection,
          catalog,
          (DatabaseSource) job.source(),
          () -> all,
          Duration.ofSeconds(120));

      assertThat(FailAfterFirstCommitTo.FAILED).as("the injected failure").isTrue();
      assertThat(pipeline.targets()).as("the job was not built again").isEqualTo(before);
      Table customers = catalog.loadTable(target(pipeline, "customers"));
      java.util.Set<String> jobs = Commits.jobsThatCommittedEachCheckpointOnce(customers);
      assertThat(jobs).as("one job, never ended for the new table").hasSize(1);
      assertThat(Commits.jobsThatCommittedEachCheckpointOnce(catalog.loadTable(returns)))
          .isEqualTo(jobs);
    }

    // Built again from its latest checkpoint, the job has the table among its own: its state
    // (key index, dedup entries, the snapshot's progress) is restored, not read again.
    String checkpoint =
        Checkpoints.latest(job.runtime().checkpointDirectory()).orElseThrow().toString();
    JobDefinition resumed = withRuntime(job, checkpoint, 0);
    JobRunner rebuilt = new JobRunner(resumed);
    running = rebuilt.start();
    assertThat(rebuilt.targets()).extracting(TableTarget::table).contains(returns);
    String table = table("returns");
    execute(
        "UPDATE " + table + " SET reason = 'after the rebuild' WHERE id BETWEEN 1 AND 6",
        "DELETE FROM " + table + " WHERE id = 8");
    awaitEqual(resumed, rebuilt, Duration.ofSeconds(90));
    Table returnsTable = catalog(job).loadTable(returns);
    assertEachCheckpointCommittedOnce(returnsTable);
    assertThat(rowsUpdatedByLastJob(returnsTable))
        .as("resumed from the checkpoint, not snapshotted again")
        .isBetween(1L, 10L);
  }

  /**
   * Tables whose names no Kafka topic can hold, where Debezium would name their topics otherwise
   * ({@code $} becomes {@code _}) and which a name pattern of the database's metadata would confuse
   * ({@code _} matches any character): each keeps its own columns and changes.
   */
  void tablesWhoseNamesNoKafkaTopicCanHoldKeepTheirOwnChanges() throws Exception {
    String plain = table("line_notes");
    String dollar = table("line$notes");
    execute(
        "CREATE TABLE " + plain + " (id int PRIMARY KEY, note varchar(40))",
        "CREATE TABLE " + dollar + " (id int PRIMARY KEY, note varchar(40), extra int)");
    for (int i = 1; i <= 50; i++) {
      execute(
          "INSERT INTO " + plain + " VALUES (" + i + ", 'plain " + i + "')",
          "INSERT INTO " + dollar + " VALUES (" + i + ", 'dollar " + i + "', " + i + ")");
    }
    JobDefinition job = job(null);
    JobRunner pipeline = new JobRunner(job);
    running = pipeline.start();
    awaitEqual(job, pipeline, Duration.ofSeconds(90));

    execute(
        "UPDATE " + plain + " SET note = 'plain, changed' WHERE id % 2 = 0",
        "UPDATE " + dollar + " SET note = 'dollar, changed' WHERE id % 3 = 0",
        "DELETE FROM " + dollar + " WHERE id > 45",
        "INSERT INTO " + dollar + " VALUES (1000, 'dollar, new', 7)");
    awaitEqual(job, pipeline, Duration.ofSeconds(60));
  }

  /**
   * A {@code TRUNCATE} of a captured table is applied by the key-indexed writer (the default): rows
   * changed just before it, in the same transaction, are deleted with the others, and rows inserted
   * after it are kept. The job is then stopped, and while it is down the table gets rows, is
   * truncated again and gets another row; resumed from its checkpoint, the job applies that
   * truncate too. Each time every Iceberg table equals its source, and every checkpoint is
   * committed once.
   */
  void appliesATruncate() throws Exception {
    JobDefinition job = job(null);
    JobRunner pipeline = new JobRunner(job);
    running = pipeline.start();
    awaitEqual(job, pipeline, Duration.ofSeconds(90));
    TableIdentifier lines =
        pipeline.targets().stream()
            .map(TableTarget::table)
            .filter(table -> table.name().endsWith("order_lines"))
            .findFirst()
            .orElseThrow();
    assertThat(rowCount(catalog(job).loadTable(lines))).isPositive();

    try (java.sql.Connection own = newConnection()) {
      own.setAutoCommit(false);
      try (java.sql.Statement statement = own.createStatement()) {
        statement.execute("UPDATE " + table("order_lines") + " SET qty = qty + 1 WHERE line = 1");
        statement.execute(
            "INSERT INTO " + table("order_lines") + " VALUES (999, 1, 5, 'before the truncate')");
        statement.execute("TRUNCATE TABLE " + table("order_lines"));
      }
      own.commit();
    }
    execute(
        "INSERT INTO " + table("order_lines") + " VALUES (1000, 1, 5, 'after the truncate')",
        "UPDATE " + table("customers") + " SET visits = 42 WHERE id = 7");
    awaitEqual(job, pipeline, Duration.ofSeconds(90));
    assertThat(rowCount(catalog(job).loadTable(lines))).isEqualTo(1);

    JobClients.cancelAndAwait(running, dir);
    running = null;
    execute(
        "INSERT INTO " + table("order_lines") + " VALUES (1001, 1, 5, 'while the job is down')",
        "UPDATE " + table("order_lines") + " SET qty = 7 WHERE order_id = 1000",
        "TRUNCATE TABLE " + table("order_lines"),
        "INSERT INTO " + table("order_lines") + " VALUES (1002, 2, 3, 'after the second')");
    String checkpoint =
        Checkpoints.latest(job.runtime().checkpointDirectory()).orElseThrow().toString();
    JobDefinition resumed = job(checkpoint);
    JobRunner resumedPipeline = new JobRunner(resumed);
    running = resumedPipeline.start();
    awaitEqual(resumed, resumedPipeline, Duration.ofSeconds(90));
    Table icebergLines = catalog(job).loadTable(lines);
    assertThat(rowCount(icebergLines)).isEqualTo(1);
    assertEachCheckpointCommittedOnce(icebergLines);
    // The data files the truncates emptied left the table (with the commit that emptied them, or
    // by the writers' compaction), rather than stay in it masked whole.
    try (org.apache.iceberg.io.CloseableIterable<org.apache.iceberg.FileScanTask> tasks =
        icebergLines.newScan().planFiles()) {
      for (org.apache.iceberg.FileScanTask task : tasks) {
        long deleted =
            task.deletes().stream().mapToLong(org.apache.iceberg.DeleteFile::recordCount).sum();
        assertThat(deleted)
            .as("deleted rows of %s", task.file().location())
            .isLessThan(task.file().recordCount());
      }
    }
  }

  /**
   * A {@code TRUNCATE} of a captured table whose writer cannot apply it (equality deletes, which
   * know no keys but those the job met) fails the job with a line that says so rather than leaving
   * the truncated rows in the Iceberg table silently. Resumed from its checkpoint with a
   * dead-letter output, as the line suggests, the job writes the truncate there and goes on: later
   * changes are applied, and the Iceberg table keeps its rows.
   */
  void failsAtATruncateThenGoesOnPastItAsADeadLetter() throws Exception {
    sinkOptions.setString("sink.delete-mode", "EQUALITY");
    JobDefinition job = job(null);
    JobRunner pipeline = new JobRunner(job);
    running = pipeline.start();
    awaitEqual(job, pipeline, Duration.ofSeconds(90));
    TableIdentifier lines =
        pipeline.targets().stream()
            .map(TableTarget::table)
            .filter(table -> table.name().endsWith("order_lines"))
            .findFirst()
            .orElseThrow();
    long rowsBefore = rowCount(catalog(job).loadTable(lines));

    execute("TRUNCATE TABLE " + table("order_lines"));
    JobClient ended = running;
    running = null;
    org.assertj.core.api.Assertions.assertThatThrownBy(
            () -> ended.getJobExecutionResult().get(60, java.util.concurrent.TimeUnit.SECONDS))
        .hasStackTraceContaining("order_lines")
        .hasStackTraceContaining(
            "the source table was truncated (operation 't'), which the job applies only with the"
                + " key-indexed writer");

    String checkpoint =
        Checkpoints.latest(job.runtime().checkpointDirectory()).orElseThrow().toString();
    Path deadLetters = dir.resolve("dead-letters");
    JobDefinition resumed =
        new JobDefinition(
            job.source(),
            job.catalog(),
            job.tables(),
            job.sinkOptions(),
            new DeadLetterOutput(deadLetters.toString(), null),
            job.runtime().restoringFrom(checkpoint));
    running = new JobRunner(resumed).start();
    execute(
        "INSERT INTO " + table("order_lines") + " VALUES (1000, 1, 5, 'after the truncate')",
        "UPDATE " + table("customers") + " SET visits = 42 WHERE id = 7");
    long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
    List<String> letters = List.of();
    long rowsAfter = -1;
    while (System.nanoTime() < deadline) {
      assertThat(running.getJobStatus().get().isGloballyTerminalState()).isFalse();
      letters = deadLetterLines(deadLetters);
      rowsAfter = rowCount(catalog(job).loadTable(lines));
      if (!letters.isEmpty() && rowsAfter == rowsBefore + 1) {
        break;
      }
      Thread.sleep(300);
    }
    assertThat(letters)
        .singleElement()
        .asString()
        .contains("truncated (operation 't')")
        .contains("order_lines");
    assertThat(rowsAfter).as("the rows kept, and the one inserted after").isEqualTo(rowsBefore + 1);
  }

  private static long rowCount(Table table) throws java.io.IOException {
    long count = 0;
    try (CloseableIterable<Record> records = IcebergGenerics.read(table).build()) {
      for (Record ignored : records) {
        count++;
      }
    }
    return count;
  }

  /** The lines of the finished dead-letter files under {@code root}. */
  private static List<String> deadLetterLines(Path root) throws java.io.IOException {
    List<String> lines = new java.util.ArrayList<>();
    if (!java.nio.file.Files.isDirectory(root)) {
      return lines;
    }
    try (java.util.stream.Stream<Path> files = java.nio.file.Files.walk(root)) {
      for (Path file : files.filter(java.nio.file.Files::isRegularFile).toList()) {
        if (!file.getFileName().toString().startsWith(".")) {
          lines.addAll(java.nio.file.Files.readAllLines(file));
        }
      }
    }
    return lines;
  }

  /**
   * Runs {@code job} until its tables equal their sources, cancels it and returns its latest
   * checkpoint. Cancelled first: a checkpoint taken while the job runs may be subsumed and deleted.
   */
  String runUntilEqualThenCancel(JobDefinition job) throws Exception {
    JobRunner pipeline = new JobRunner(job);
    running = pipeline.start();
    awaitEqual(job, pipeline, Duration.ofSeconds(90));
    JobClients.cancelAndAwait(running);
    return Checkpoints.latest(job.runtime().checkpointDirectory()).orElseThrow().toString();
  }

  /** Waits for the running job to end, which the caller expects to be a failure. */
  void awaitTheJobsEnd() throws Exception {
    JobClient ended = running;
    running = null;
    ended.getJobExecutionResult().get(90, java.util.concurrent.TimeUnit.SECONDS);
  }

  /** {@code job} restored from {@code restoreFrom}, with {@code restartAttempts}. */
  static JobDefinition withRuntime(JobDefinition job, String restoreFrom, int restartAttempts) {
    return job.withRuntime(
        job.runtime().restoringFrom(restoreFrom).withRestartAttempts(restartAttempts));
  }

  /** Fails the job once, just after the first commit to a table. */
  static final class FailAfterFirstCommitTo implements io.icebergcdc.commit.CommitListener {
    private static final long serialVersionUID = 1L;
    static final java.util.concurrent.atomic.AtomicBoolean FAILED =
        new java.util.concurrent.atomic.AtomicBoolean();
    private static volatile String tablePath;

    static void failAfterFirstCommitTo(TableIdentifier table) {
      FAILED.set(false);
      tablePath =
          "/" + String.join("/", table.namespace().levels()) + "/" + table.name() + "/metadata/";
    }

    @Override
    public void afterCommit(long checkpointId, org.apache.iceberg.Snapshot snapshot) {
      if (snapshot.manifestListLocation().contains(tablePath)
          && FAILED.compareAndSet(false, true)) {
        throw new IllegalStateException("injected failure after committing " + checkpointId);
      }
    }
  }

  static TableIdentifier target(JobRunner pipeline, String table) {
    return pipeline.targets().stream()
        .filter(t -> t.source().endsWith("." + table))
        .findFirst()
        .orElseThrow()
        .table();
  }

  /** The SQL for the current time with microseconds. */
  abstract String now();

  /**
   * Waits until every table of the job as it was last composed equals its source table, while
   * {@code running} says the job runs.
   */
  void awaitEqual(
      Callable<?> running, Catalog catalog, JobDefinition job, JobRunner pipeline, Duration timeout)
      throws Exception {
    SourceTables.awaitEqual(
        running, connection, catalog, (DatabaseSource) job.source(), pipeline::targets, timeout);
  }

  void awaitEqual(JobDefinition job, JobRunner pipeline, Duration timeout) throws Exception {
    SourceTables.awaitEqual(
        running,
        connection,
        catalog(job),
        (DatabaseSource) job.source(),
        pipeline.targets(),
        timeout);
  }

  static Catalog catalog(JobDefinition job) {
    return job.catalog().loader().loadCatalog();
  }

  /** The rows that the commits of the job that committed last updated. */
  /**
   * The rows updated by the last job that changed rows of the table (a later job may only have
   * merged its small files).
   */
  static long rowsUpdatedByLastJob(Table table) {
    String lastJob = null;
    for (Snapshot snapshot : table.snapshots()) {
      Map<String, String> summary = snapshot.summary();
      long changed = 0;
      for (String key :
          List.of(
              SnapshotSummaryKeys.ROWS_INSERTED,
              SnapshotSummaryKeys.ROWS_UPDATED,
              SnapshotSummaryKeys.ROWS_DELETED)) {
        changed += Long.parseLong(summary.getOrDefault(key, "0"));
      }
      if (changed > 0) {
        lastJob = summary.get(SnapshotSummaryKeys.JOB_ID);
      }
    }
    long updated = 0;
    for (Snapshot snapshot : table.snapshots()) {
      if (lastJob.equals(snapshot.summary().get(SnapshotSummaryKeys.JOB_ID))) {
        updated +=
            Long.parseLong(snapshot.summary().getOrDefault(SnapshotSummaryKeys.ROWS_UPDATED, "0"));
      }
    }
    return updated;
  }

  static void assertEachCheckpointCommittedOnce(Table table) {
    Commits.jobsThatCommittedEachCheckpointOnce(table);
  }

  void execute(String... statements) throws SQLException {
    try (Statement statement = connection.createStatement()) {
      for (String sql : statements) {
        statement.execute(sql);
      }
    }
  }
}
