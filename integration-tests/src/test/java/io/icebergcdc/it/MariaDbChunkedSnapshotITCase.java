package io.icebergcdc.it;

import io.icebergcdc.jobs.definition.DatabaseSource;
import io.icebergcdc.jobs.definition.JobDefinition;
import io.icebergcdc.jobs.pipeline.JobRunner;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.iceberg.catalog.Catalog;

/**
 * {@link ChunkedSnapshotScenario} on the machine's MariaDB: the chunk readers' connections are
 * killed with {@code KILL}; a table added to the job's tables on restore is snapshotted while the
 * others stream on: the connector's schema history in the state knows it, as it records every table
 * of the database.
 */
class MariaDbChunkedSnapshotITCase extends ChunkedSnapshotScenario {

  @Override
  Connection createDatabase() throws Exception {
    connection = connect();
    execute(
        "DROP DATABASE IF EXISTS " + DATABASE,
        "CREATE DATABASE " + DATABASE,
        "USE " + DATABASE,
        "CREATE TABLE items (id bigint PRIMARY KEY, grp int NOT NULL, label text,"
            + " amount decimal(12,2), seen timestamp(6) NULL)",
        "INSERT INTO items SELECT seq, seq % 17, CONCAT('item ', seq), seq * 1.25,"
            + " TIMESTAMP '2026-01-01 00:00:00' + INTERVAL seq SECOND FROM seq_1_to_"
            + ITEMS,
        "CREATE TABLE codes (region int, code varchar(20), qty int NOT NULL,"
            + " PRIMARY KEY (region, code))",
        "INSERT INTO codes SELECT r.seq, CONCAT('code-', c.seq), r.seq * c.seq"
            + " FROM seq_1_to_6 r, seq_1_to_5000 c",
        "CREATE TABLE extra (id int PRIMARY KEY, note text)",
        "INSERT INTO extra SELECT seq, CONCAT('extra ', seq) FROM seq_1_to_2000");
    return connection;
  }

  @Override
  Connection connect() throws SQLException {
    return DriverManager.getConnection(
        "jdbc:mysql://127.0.0.1:3306/?tinyInt1isBit=false", "root", "");
  }

  @Override
  DatabaseSource source(String tables) {
    return new DatabaseSource(
            DatabaseSource.Kind.MARIADB,
            "127.0.0.1",
            3306,
            "root",
            null,
            DATABASE,
            List.of(tables),
            null,
            null,
            5402,
            "maria")
        // MariaDB shows a query while it sends its rows: chunks big enough to outlast the socket's
        // buffers stay visible to the test's KILL while the reader takes their rows.
        .withSnapshotChunkRows(10_000);
  }

  @Override
  String tablePattern(String names) {
    return DATABASE + "\\.(" + names + ")";
  }

  @Override
  String table(String name) {
    return DATABASE + "." + name;
  }

  @Override
  String widenExtraKey() {
    return "ALTER TABLE " + table("extra") + " MODIFY COLUMN id BIGINT NOT NULL";
  }

  @Override
  String insertExtraPastIntRange(int rows) {
    return "INSERT INTO "
        + table("extra")
        + " SELECT 3000000000 + seq, CONCAT('wide ', seq) FROM seq_1_to_"
        + rows;
  }

  @Override
  String widenGroup() {
    return "ALTER TABLE " + table("items") + " MODIFY COLUMN grp BIGINT NOT NULL";
  }

  @Override
  String insertItemIfAbsent(long id) {
    // By column: the workload adds a column and drops seen while it runs.
    return "INSERT IGNORE INTO "
        + table("items")
        + " (id, grp, label, amount) VALUES ("
        + id
        + ", 1, 'inserted', 1.00)";
  }

  @Override
  int killChunkReaders(Statement admin) throws SQLException {
    List<Long> ids = new ArrayList<>();
    try (ResultSet result =
        admin.executeQuery(
            "SELECT id FROM information_schema.processlist WHERE id <> connection_id()"
                + " AND info LIKE 'SELECT %FROM `"
                + DATABASE
                + "`.`items`%ORDER BY%' AND info NOT LIKE '%OFFSET%'")) {
      while (result.next()) {
        ids.add(result.getLong(1));
      }
    }
    int killed = 0;
    for (long id : ids) {
      try {
        admin.execute("KILL " + id);
        killed++;
      } catch (SQLException e) {
        // Ended meanwhile.
      }
    }
    return killed;
  }

  @Override
  void restoresWithAnAddedTable(JobDefinition job, String checkpoint) throws Exception {
    Catalog catalog = job.catalog().loader().loadCatalog();
    JobDefinition wider = job(DATABASE + "\\..*", checkpoint);
    JobRunner widerPipeline = new JobRunner(wider);
    running = widerPipeline.start();
    execute("UPDATE " + table("extra") + " SET note = 'changed while read' WHERE id % 10 = 0");
    execute("INSERT INTO " + table("extra") + " VALUES (5000, 'new')");
    awaitRows(catalog, widerPipeline, DATABASE + "_extra", 2001);
    execute("UPDATE " + table("items") + " SET label = 'after the restore' WHERE id = 7");
    SourceTables.awaitEqual(
        running,
        connection,
        catalog,
        (DatabaseSource) wider.source(),
        widerPipeline.targets(),
        Duration.ofSeconds(90));
  }
}
