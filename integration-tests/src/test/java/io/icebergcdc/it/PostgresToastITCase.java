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
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * A PostgreSQL table with the default replica identity and large text and binary values stored out
 * of line (TOASTed): updates that leave them unchanged arrive without them (Debezium's
 * placeholder), and the writers fill them from each key's current row. The table is captured by the
 * chunked snapshot while a workload updates rows already read and rows not read yet (whose updates
 * wait for their read), changes primary keys, deletes and inserts, with the chunk readers'
 * connections ended once mid-snapshot; then streamed with updates over several checkpoints; then
 * the job is restored from its last checkpoint, where no row is held in memory and the values come
 * from the data files; then a column is added (followed in flight) with changes of key, and a table
 * created while the job runs is taken in flight and has its keys changed, the values those changes
 * of key left out read in each change's own schema. The Iceberg tables must equal the source tables
 * after each phase, each checkpoint committed once. A second job takes Debezium's own snapshot
 * instead of the chunked one, and has keys changed after it.
 */
class PostgresToastITCase {

  private static final String DATABASE = "icebergcdc_toast";
  private static final String SLOT = "icebergcdc_toast";
  private static final int ROWS = 6_000;

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

  @org.junit.jupiter.api.AfterAll
  static void dropDatabase() throws Exception {
    PostgresDatabases.drop(DATABASE, SLOT);
  }

  @BeforeEach
  void createDatabase() throws Exception {
    PostgresDatabases.recreate(DATABASE, SLOT);
    connection = connect();
    execute(
        "CREATE TABLE public.docs (id bigint PRIMARY KEY, version int NOT NULL, doc text NOT NULL,"
            + " blob bytea)",
        // Out of line and uncompressed, so that every value here is TOASTed.
        "ALTER TABLE public.docs ALTER COLUMN doc SET STORAGE EXTERNAL,"
            + " ALTER COLUMN blob SET STORAGE EXTERNAL",
        "INSERT INTO public.docs SELECT i, 0, "
            + doc("i")
            + ", "
            + blob("i")
            + " FROM"
            + " generate_series(1, "
            + ROWS
            + ") i");
  }

  @AfterEach
  void stop() throws Exception {
    if (running != null) {
      JobClients.cancelAndAwait(running, dir);
    }
    if (connection != null) {
      connection.close();
    }
  }

  /** A text of 3,200 characters particular to the value of the SQL expression {@code seed}. */
  private static String doc(String seed) {
    return "repeat(md5((" + seed + ")::text), 100)";
  }

  /** 2,400 bytes particular to {@code seed}. */
  private static String blob(String seed) {
    return "decode(repeat(md5((" + seed + ")::text || 'b'), 150), 'hex')";
  }

  @Test
  void unchangedToastedValuesAreFilledThroughTheSnapshotStreamingAndARestore() throws Exception {
    assertThat(unchangedToastDatumsOfAnUpdate())
        .as("values PostgreSQL leaves out of an update of this table")
        .isEqualTo(2);
    JobDefinition job = job(null);
    JobRunner pipeline = new JobRunner(job);
    running = pipeline.start();
    Catalog catalog = job.catalog().loader().loadCatalog();

    // While the chunks are read: updates of rows read and not read yet, new values, deletes,
    // inserts and changes of key, and the chunk readers' connections ended once.
    long deadline = System.nanoTime() + 60_000_000_000L;
    while (Checkpoints.latest(checkpoints()).isEmpty() && System.nanoTime() < deadline) {
      Thread.sleep(50);
    }
    Random random = new Random(7);
    boolean killed = false;
    long next = ROWS + 1;
    for (int i = 0; i < 1_200; i++) {
      long id = 1 + random.nextInt(ROWS);
      switch (random.nextInt(10)) {
        case 0:
          execute("UPDATE public.docs SET doc = " + doc(i + " * 7919") + " WHERE id = " + id);
          break;
        case 1:
          execute("UPDATE public.docs SET blob = " + blob("-" + i) + " WHERE id = " + id);
          break;
        case 2:
          execute("DELETE FROM public.docs WHERE id = " + id);
          break;
        case 3:
          execute(
              "INSERT INTO public.docs VALUES ("
                  + next
                  + ", 0, "
                  + doc(Long.toString(next++))
                  + ", NULL)");
          break;
        case 4:
          // A new key: (i + 1) millions above every other.
          execute(
              "UPDATE public.docs SET id = id + "
                  + 1_000_000L * (i + 1)
                  + ", version = version + 1 WHERE id = "
                  + id);
          break;
        default:
          // Chunks are read in key order: the last keys are the likeliest not to be read yet.
          long late = random.nextBoolean() ? ROWS - random.nextInt(ROWS / 3) : id;
          execute("UPDATE public.docs SET version = version + 1 WHERE id = " + late);
      }
      if (!killed && i % 20 == 0) {
        killed = killChunkReaders() > 0;
      }
    }
    assertThat(killed).as("chunk readers ended mid-snapshot").isTrue();
    awaitEqual(catalog, job, pipeline);

    // Streaming: rows updated again and again across checkpoints, their values held in memory.
    for (int round = 0; round < 5; round++) {
      execute("UPDATE public.docs SET version = version + 1 WHERE id % 7 = " + round);
      Thread.sleep(400);
    }
    awaitEqual(catalog, job, pipeline);

    // Restored from its last checkpoint, the job holds no rows in memory: it reads the files.
    JobClients.cancelAndAwait(running);
    JobDefinition restored = job(Checkpoints.latest(checkpoints()).orElseThrow().toString());
    JobRunner restoredPipeline = new JobRunner(restored);
    running = restoredPipeline.start();
    execute("UPDATE public.docs SET version = version + 1 WHERE id % 3 = 0");
    execute("UPDATE public.docs SET id = -id WHERE id % 11 = 0");
    awaitEqual(catalog, restored, restoredPipeline);
    // A nullable column dropped, which the job keeps (null from then on): a change of key then
    // reads its left-out values of the columns the source still has.
    execute(
        "ALTER TABLE public.docs DROP COLUMN blob",
        "UPDATE public.docs SET id = id - 100000000 WHERE id % 13 = 1");
    awaitEqual(catalog, restored, restoredPipeline);

    // A column added, which the job follows in flight (its rows of the table's new schema from
    // then on), and changes of key in the same transaction: their left-out values are read into
    // the new schema's rows.
    execute(
        "ALTER TABLE public.docs ADD COLUMN tag text",
        "UPDATE public.docs SET id = id - 200000000, tag = 'moved' WHERE id % 17 = 2");
    awaitEqual(catalog, restored, restoredPipeline);

    // A table created while the job runs, taken in flight (its rows carry its schema's id): its
    // changes of key are filled too.
    execute(
        "CREATE TABLE public.notes (id bigint PRIMARY KEY, version int NOT NULL, doc text NOT NULL)",
        "ALTER TABLE public.notes ALTER COLUMN doc SET STORAGE EXTERNAL",
        "INSERT INTO public.notes SELECT i, 0, "
            + doc("i * 31")
            + " FROM generate_series(1, 300) i");
    TableIdentifier notes = TableIdentifier.of("cdc", "public_notes");
    deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
    while (!catalog.tableExists(notes) || catalog.loadTable(notes).currentSnapshot() == null) {
      assertThat(running.getJobStatus().get().isGloballyTerminalState()).isFalse();
      assertThat(System.nanoTime()).as("a commit to %s", notes).isLessThan(deadline);
      Thread.sleep(200);
    }
    List<TableTarget> all = new java.util.ArrayList<>(restoredPipeline.targets());
    all.add(new TableTarget("public.notes", null, notes, null));
    // Its snapshot read whole first, so that no chunk read later lends a changed key its values.
    awaitEqual(catalog, restored, all);
    execute(
        "UPDATE public.notes SET id = id + 1000000, version = version + 1 WHERE id % 3 = 0",
        "UPDATE public.docs SET id = id - 300000000 WHERE id % 19 = 3");
    awaitEqual(catalog, restored, all);
    assertThat(restoredPipeline.targets()).as("the job was not built again").hasSize(1);
    for (TableTarget target : all) {
      Commits.jobsThatCommittedEachCheckpointOnce(catalog.loadTable(target.table()));
    }
  }

  /**
   * With Debezium's own snapshot instead of the chunked one: the values that changes of key leave
   * out are read from the database as well.
   */
  @Test
  void changesOfKeyAreFilledAfterDebeziumsOwnSnapshot() throws Exception {
    JobDefinition job = job(null, 0);
    JobRunner pipeline = new JobRunner(job);
    running = pipeline.start();
    Catalog catalog = job.catalog().loader().loadCatalog();
    awaitEqual(catalog, job, pipeline);
    execute(
        "UPDATE public.docs SET id = -id WHERE id % 11 = 0",
        "UPDATE public.docs SET id = id + 100000, version = version + 1 WHERE id % 13 = 1",
        "UPDATE public.docs SET version = version + 1 WHERE id % 5 = 0");
    awaitEqual(catalog, job, pipeline);
    Commits.jobsThatCommittedEachCheckpointOnce(
        catalog.loadTable(pipeline.targets().get(0).table()));
  }

  private void awaitEqual(Catalog catalog, JobDefinition job, JobRunner pipeline) throws Exception {
    awaitEqual(catalog, job, pipeline.targets());
  }

  private void awaitEqual(Catalog catalog, JobDefinition job, List<TableTarget> targets)
      throws Exception {
    SourceTables.awaitEqual(
        running,
        connection,
        catalog,
        (DatabaseSource) job.source(),
        targets,
        Duration.ofSeconds(120));
  }

  /**
   * Updates a row's version through a probe slot of {@code test_decoding} and counts the columns
   * its change left out as unchanged TOASTed values.
   */
  private int unchangedToastDatumsOfAnUpdate() throws SQLException {
    execute("SELECT pg_create_logical_replication_slot('icebergcdc_toast_probe', 'test_decoding')");
    try {
      execute("UPDATE public.docs SET version = 0 WHERE id = 1");
      try (Statement statement = connection.createStatement();
          ResultSet result =
              statement.executeQuery(
                  "SELECT data FROM pg_logical_slot_get_changes('icebergcdc_toast_probe', NULL,"
                      + " NULL) WHERE data LIKE 'table public.docs: UPDATE%'")) {
        assertThat(result.next()).isTrue();
        String data = result.getString(1);
        return data.split("unchanged-toast-datum", -1).length - 1;
      }
    } finally {
      execute("SELECT pg_drop_replication_slot('icebergcdc_toast_probe')");
    }
  }

  private int killChunkReaders() throws SQLException {
    try (Statement statement = connection.createStatement();
        ResultSet result =
            statement.executeQuery(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                    + " WHERE datname = current_database() AND pid <> pg_backend_pid()"
                    + " AND backend_type = 'client backend'"
                    + " AND query LIKE 'SELECT %FROM \"public\".\"docs\"%ORDER BY%'")) {
      result.next();
      return result.getInt(1);
    }
  }

  private String checkpoints() {
    return dir.resolve("checkpoints").toString();
  }

  private JobDefinition job(String restoreFrom) {
    return job(restoreFrom, 50);
  }

  private JobDefinition job(String restoreFrom, int snapshotChunkRows) {
    return new JobDefinition(
        new DatabaseSource(
                DatabaseSource.Kind.POSTGRES,
                "127.0.0.1",
                5432,
                "postgres",
                null,
                DATABASE,
                List.of("public\\.(docs|notes)"),
                SLOT,
                "icebergcdc_toast",
                0,
                "pg")
            .withSnapshotChunkRows(snapshotChunkRows)
            // Debezium's own snapshot takes no tables in flight.
            .withTableDiscoveryInterval(
                snapshotChunkRows == 0 ? Duration.ZERO : Duration.ofSeconds(1)),
        CatalogDefinition.hadoop(dir.resolve("warehouse").toString()),
        new TableDefinition("cdc.{schema}_{table}", List.of(), null, 2),
        new Configuration(),
        DeadLetterOutput.NONE,
        new RuntimeDefinition(
            2, Duration.ofMillis(300), checkpoints(), "hashmap", restoreFrom, 20));
  }

  private Connection connect() throws SQLException {
    return DriverManager.getConnection(
        "jdbc:postgresql://127.0.0.1:5432/" + DATABASE, "postgres", "");
  }

  private void execute(String... statements) throws SQLException {
    try (Statement statement = connection.createStatement()) {
      for (String sql : statements) {
        statement.execute(sql);
      }
    }
  }
}
