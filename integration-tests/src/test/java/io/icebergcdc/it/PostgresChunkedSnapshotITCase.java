package io.icebergcdc.it;

import static org.assertj.core.api.Assertions.assertThat;

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
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.io.CloseableIterable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The job's own chunked snapshot of PostgreSQL: tables split into small chunks by primary key (an
 * int key and a composite key with text), read by two readers beside the log while a workload
 * updates, deletes, inserts and re-keys rows inside and between the chunks being read, with the
 * readers' connections killed in the middle of chunks so that the job fails and resumes from its
 * last checkpoint; each Iceberg table must end equal to its source table, each checkpoint committed
 * once. Then a table added to the job's tables is snapshotted on restore without the others being
 * read again.
 */
class PostgresChunkedSnapshotITCase {

  private static final String DATABASE = "icebergcdc_chunks";
  private static final String SLOT = "icebergcdc_chunks";
  private static final int ITEMS = 20_000;

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
  void createDatabase() throws Exception {
    try (Connection admin =
            DriverManager.getConnection(
                "jdbc:postgresql://127.0.0.1:5432/postgres", "postgres", "");
        Statement statement = admin.createStatement()) {
      statement.execute(
          "SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots"
              + " WHERE slot_name = '"
              + SLOT
              + "' AND active");
      for (int i = 0; i < 100; i++) {
        try (ResultSet active =
            statement.executeQuery(
                "SELECT 1 FROM pg_replication_slots WHERE slot_name = '" + SLOT + "' AND active")) {
          if (!active.next()) {
            break;
          }
        }
        Thread.sleep(100);
      }
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
        "CREATE TABLE inventory.items (id bigint PRIMARY KEY, grp int NOT NULL, label text,"
            + " amount numeric(12,2), seen timestamptz)",
        "INSERT INTO inventory.items SELECT i, i % 17, 'item ' || i, i * 1.25,"
            + " TIMESTAMPTZ '2026-01-01 00:00:00+00' + i * interval '1 second'"
            + " FROM generate_series(1, "
            + ITEMS
            + ") i",
        "CREATE TABLE inventory.codes (region int, code text, qty int NOT NULL,"
            + " PRIMARY KEY (region, code))",
        "INSERT INTO inventory.codes SELECT r, 'code-' || c, r * c"
            + " FROM generate_series(1, 6) r, generate_series(1, 500) c",
        "CREATE TABLE inventory.extra (id int PRIMARY KEY, note text)",
        "INSERT INTO inventory.extra SELECT i, 'extra ' || i FROM generate_series(1, 2000) i");
  }

  @AfterEach
  void stop() throws Exception {
    if (running != null) {
      running.cancel().get();
    }
    if (connection != null) {
      connection.close();
    }
  }

  private JobDefinition job(String tables, String restoreFrom) {
    DatabaseSource source =
        new DatabaseSource(
            DatabaseSource.Kind.POSTGRES,
            "127.0.0.1",
            5432,
            "postgres",
            null,
            DATABASE,
            List.of(tables),
            SLOT,
            "icebergcdc_chunks",
            0,
            "pg",
            500);
    return new JobDefinition(
        source,
        CatalogDefinition.hadoop(dir.resolve("warehouse").toString()),
        new TableDefinition("cdc.{schema}_{table}", List.of(), null, 2),
        new Configuration(),
        DeadLetterOutput.NONE,
        new RuntimeDefinition(
            2,
            Duration.ofMillis(300),
            dir.resolve("checkpoints").toString(),
            "hashmap",
            restoreFrom,
            20));
  }

  @Test
  void aSnapshotReadInChunksWhileTheTablesChangeAndItsReadersFailEqualsTheSource()
      throws Exception {
    JobDefinition job = job("inventory\\.(items|codes)", null);
    JobRunner pipeline = new JobRunner(job);
    AtomicBoolean done = new AtomicBoolean();
    AtomicInteger killed = new AtomicInteger();
    ExecutorService background = Executors.newFixedThreadPool(2);
    try {
      running = pipeline.start();
      Future<?> workload = background.submit(() -> workload(done));
      Future<?> killer = background.submit(() -> killChunkReaders(killed, 3, done));
      workload.get(3, TimeUnit.MINUTES);
      killer.get(3, TimeUnit.MINUTES);
    } finally {
      done.set(true);
      background.shutdownNow();
    }
    // The readers were killed in the middle of chunks, and the job went on from its checkpoints.
    assertThat(killed.get()).isPositive();
    Catalog catalog = job.catalog().loader().loadCatalog();
    SourceTables.awaitEqual(
        running,
        connection,
        catalog,
        (DatabaseSource) job.source(),
        pipeline.targets(),
        Duration.ofSeconds(120));
    for (TableTarget target : pipeline.targets()) {
      Commits.jobsThatCommittedEachCheckpointOnce(catalog.loadTable(target.table()));
    }

    // A table added to the job's tables: snapshotted on restore, the others not read again.
    running.cancel().get();
    running = null;
    String checkpoint =
        Checkpoints.latest(job.runtime().checkpointDirectory()).orElseThrow().toString();
    long itemsFetched = indexRowsFetched("items");
    JobDefinition wider = job("inventory\\..*", checkpoint);
    JobRunner widerPipeline = new JobRunner(wider);
    running = widerPipeline.start();
    execute("UPDATE inventory.extra SET note = 'changed while read' WHERE id % 10 = 0");
    execute("INSERT INTO inventory.extra VALUES (5000, 'new')");
    Table extra = awaitRows(catalog, widerPipeline, "inventory_extra", 2001);
    Thread.sleep(1_500);
    assertThat(indexRowsFetched("items") - itemsFetched)
        .as("rows of inventory.items read again by the restored job")
        .isLessThan(ITEMS / 10);
    assertThat(extra).isNotNull();
    execute("UPDATE inventory.items SET label = 'after the restore' WHERE id = 7");
    SourceTables.awaitEqual(
        running,
        connection,
        catalog,
        (DatabaseSource) wider.source(),
        widerPipeline.targets(),
        Duration.ofSeconds(90));
  }

  /** Small transactions over the whole key space while the snapshot runs. */
  private Void workload(AtomicBoolean done) throws SQLException {
    Random random = new Random(42);
    try (Connection writer =
            DriverManager.getConnection(
                "jdbc:postgresql://127.0.0.1:5432/" + DATABASE, "postgres", "");
        Statement statement = writer.createStatement()) {
      int next = ITEMS + 1;
      for (int i = 0; i < 1_500 && !done.get(); i++) {
        long id = 1 + random.nextInt(ITEMS);
        switch (random.nextInt(6)) {
          case 0:
          case 1:
            statement.execute(
                "UPDATE inventory.items SET label = 'updated "
                    + i
                    + "', amount = amount + 1"
                    + " WHERE id = "
                    + id);
            break;
          case 2:
            statement.execute("DELETE FROM inventory.items WHERE id = " + id);
            break;
          case 3:
            statement.execute(
                "INSERT INTO inventory.items VALUES ("
                    + next++
                    + ", 1, 'inserted', 1.00, now()) ON CONFLICT DO NOTHING");
            break;
          case 4:
            statement.execute(
                "UPDATE inventory.items SET id = id + 1000000 WHERE id = "
                    + id
                    + " AND NOT EXISTS (SELECT 1 FROM inventory.items WHERE id = "
                    + (id + 1_000_000)
                    + ")");
            break;
          default:
            statement.execute(
                "UPDATE inventory.codes SET qty = qty + 1 WHERE region = "
                    + (1 + random.nextInt(6))
                    + " AND code = 'code-"
                    + (1 + random.nextInt(500))
                    + "'");
        }
        if (i % 100 == 0) {
          statement.execute(
              "DELETE FROM inventory.codes WHERE region = 3 AND code = 'code-" + i + "'");
        }
      }
    }
    return null;
  }

  /**
   * Ends the connections of the source's chunk readers while they are in a chunk of {@code
   * inventory.items}, after the job's first checkpoints, up to {@code times} times.
   */
  private Void killChunkReaders(AtomicInteger killed, int times, AtomicBoolean done)
      throws Exception {
    Thread.sleep(1_500);
    try (Connection admin =
            DriverManager.getConnection(
                "jdbc:postgresql://127.0.0.1:5432/" + DATABASE, "postgres", "");
        Statement statement = admin.createStatement()) {
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (killed.get() < times && System.nanoTime() < deadline && !done.get()) {
        try (ResultSet result =
            statement.executeQuery(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                    + " WHERE datname = current_database() AND pid <> pg_backend_pid()"
                    + " AND backend_type = 'client backend'"
                    + " AND query LIKE 'SELECT %FROM \"inventory\".\"items\"%ORDER BY%'"
                    + " AND query NOT LIKE '%OFFSET%'")) {
          result.next();
          if (result.getLong(1) > 0) {
            killed.incrementAndGet();
            Thread.sleep(2_000);
          }
        }
        Thread.sleep(50);
      }
    }
    return null;
  }

  /** Rows read from a table so far, by index and by scan, this test's own reads flushed first. */
  private long indexRowsFetched(String table) throws Exception {
    try (Statement statement = connection.createStatement()) {
      // A backend reports its reads at most once a second, at the end of a transaction.
      Thread.sleep(1_100);
      statement.execute("SELECT pg_stat_force_next_flush()");
      statement.execute("SELECT 1");
      statement.execute("SELECT pg_stat_clear_snapshot()");
      try (ResultSet result =
          statement.executeQuery(
              "SELECT coalesce(idx_tup_fetch, 0) + coalesce(seq_tup_read, 0)"
                  + " FROM pg_stat_user_tables WHERE schemaname = 'inventory' AND relname = '"
                  + table
                  + "'")) {
        result.next();
        return result.getLong(1);
      }
    }
  }

  private Table awaitRows(Catalog catalog, JobRunner pipeline, String name, int rows)
      throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
    while (System.nanoTime() < deadline) {
      if (running.getJobStatus().get().isGloballyTerminalState()) {
        running.getJobExecutionResult().get();
      }
      for (TableTarget target : pipeline.targets()) {
        if (target.table().name().equals(name) && catalog.tableExists(target.table())) {
          Table table = catalog.loadTable(target.table());
          long count = 0;
          try (CloseableIterable<?> records = IcebergGenerics.read(table).build()) {
            for (Object ignored : records) {
              count++;
            }
          }
          if (count == rows) {
            return table;
          }
        }
      }
      Thread.sleep(200);
    }
    throw new AssertionError("table " + name + " did not reach " + rows + " rows");
  }

  private void execute(String... statements) throws SQLException {
    try (Statement statement = connection.createStatement()) {
      for (String sql : statements) {
        statement.execute(sql);
      }
    }
  }
}
