package io.icebergcdc.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.icebergcdc.jobs.definition.DatabaseSource;
import io.icebergcdc.jobs.definition.JobDefinition;
import io.icebergcdc.jobs.pipeline.JobRunner;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import org.apache.iceberg.catalog.Catalog;

/**
 * {@link ChunkedSnapshotScenario} on the machine's PostgreSQL: the chunk readers' connections are
 * ended with {@code pg_terminate_backend}; a table added to the job's tables on restore is
 * published and snapshotted without the other tables being read again.
 */
class PostgresChunkedSnapshotITCase extends ChunkedSnapshotScenario {

  private static final String SLOT = "icebergcdc_chunks";

  @org.junit.jupiter.api.AfterAll
  static void dropDatabase() throws Exception {
    PostgresDatabases.drop(DATABASE, SLOT);
  }

  @Override
  Connection createDatabase() throws Exception {
    PostgresDatabases.recreate(DATABASE, SLOT);
    connection = connect();
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
            + " FROM generate_series(1, 6) r, generate_series(1, 5000) c",
        "CREATE TABLE inventory.extra (id int PRIMARY KEY, note text)",
        "INSERT INTO inventory.extra SELECT i, 'extra ' || i FROM generate_series(1, 2000) i");
    return connection;
  }

  @Override
  Connection connect() throws SQLException {
    return DriverManager.getConnection(
        "jdbc:postgresql://127.0.0.1:5432/" + DATABASE, "postgres", "");
  }

  @Override
  DatabaseSource source(String tables) {
    return new DatabaseSource(
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
            "pg")
        .withSnapshotChunkRows(500);
  }

  @Override
  String tablePattern(String names) {
    return "inventory\\.(" + names + ")";
  }

  @Override
  String table(String name) {
    return "inventory." + name;
  }

  @Override
  String widenGroup() {
    return "ALTER TABLE " + table("items") + " ALTER COLUMN grp TYPE bigint";
  }

  @Override
  String widenExtraKey() {
    return "ALTER TABLE inventory.extra ALTER COLUMN id TYPE bigint";
  }

  @Override
  String insertExtraPastIntRange(int rows) {
    return "INSERT INTO inventory.extra SELECT 3000000000 + i, 'wide ' || i"
        + " FROM generate_series(1, "
        + rows
        + ") i";
  }

  @Override
  String insertItemIfAbsent(long id) {
    // By column: the workload adds a column and drops seen while it runs.
    return "INSERT INTO inventory.items (id, grp, label, amount) VALUES ("
        + id
        + ", 1, 'inserted', 1.00)"
        + " ON CONFLICT DO NOTHING";
  }

  @Override
  int killChunkReaders(Statement admin) throws SQLException {
    try (ResultSet result =
        admin.executeQuery(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                + " WHERE datname = current_database() AND pid <> pg_backend_pid()"
                + " AND backend_type = 'client backend'"
                + " AND query LIKE 'SELECT %FROM \"inventory\".\"items\"%ORDER BY%'"
                + " AND query NOT LIKE '%OFFSET%'")) {
      result.next();
      return result.getInt(1);
    }
  }

  /** Snapshotted on restore, while the tables already snapshotted are not read again. */
  @Override
  void restoresWithAnAddedTable(JobDefinition job, String checkpoint) throws Exception {
    Catalog catalog = job.catalog().loader().loadCatalog();
    long itemsFetched = indexRowsFetched("items");
    JobDefinition wider = job("inventory\\..*", checkpoint);
    JobRunner widerPipeline = new JobRunner(wider);
    running = widerPipeline.start();
    execute("UPDATE inventory.extra SET note = 'changed while read' WHERE id % 10 = 0");
    execute("INSERT INTO inventory.extra VALUES (5000, 'new')");
    awaitRows(catalog, widerPipeline, "inventory_extra", 2001);
    assertThat(indexRowsFetched("items") - itemsFetched)
        .as("rows of inventory.items read again by the restored job")
        .isLessThan(ITEMS / 10);
    execute("UPDATE inventory.items SET label = 'after the restore' WHERE id = 7");
    SourceTables.awaitEqual(
        running,
        connection,
        catalog,
        (DatabaseSource) wider.source(),
        widerPipeline.targets(),
        Duration.ofSeconds(90));
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
}
