package io.icebergcdc.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.icebergcdc.jobs.Checkpoints;
import io.icebergcdc.jobs.definition.DatabaseSource;
import io.icebergcdc.jobs.definition.DeadLetterOutput;
import io.icebergcdc.jobs.definition.JobDefinition;
import io.icebergcdc.jobs.definition.RuntimeDefinition;
import io.icebergcdc.jobs.definition.TableDefinition;
import io.icebergcdc.jobs.pipeline.JobRunner;
import io.icebergcdc.jobs.pipeline.PipelineComposer;
import io.icebergcdc.jobs.pipeline.TableTarget;
import io.icebergcdc.sink.CatalogDefinition;
import java.nio.file.Path;
import java.sql.Connection;
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
 * The job's own chunked snapshot: tables split into small chunks by primary key (an int key and a
 * composite key with text), read by two readers beside the log while a workload updates, deletes,
 * inserts and re-keys rows inside and between the chunks being read, with the readers' connections
 * killed in the middle of chunks so that the job fails and resumes from its last checkpoint; each
 * Iceberg table must end equal to its source table, each checkpoint committed once; meanwhile a
 * column of {@code items} is widened (the last keys' values then past the int range), a column is
 * added and {@code seen} dropped, which the job follows. Then the job is restored with one more
 * table in its tables ({@link #restoresWithAnAddedTable}). Apart, the int key of {@code extra} is
 * widened as its snapshot starts, with keys past the int range added.
 *
 * <p>Each database's test creates {@code items} ({@code id} bigint key, {@code grp}, {@code label},
 * {@code amount}, {@code seen}) with {@link #ITEMS} rows, {@code codes} ({@code region} int and
 * {@code code} text as key, {@code qty}) and {@code extra} ({@code id}, {@code note}), and kills
 * its chunk readers' connections its own way.
 */
abstract class ChunkedSnapshotScenario {

  static final String DATABASE = "icebergcdc_chunks";
  static final int ITEMS = 100_000;

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

  /** A connection to the test's database, which the test creates anew with its tables. */
  abstract Connection createDatabase() throws Exception;

  /** The source of the job, capturing the tables matching {@code tables}. */
  abstract DatabaseSource source(String tables);

  /** The qualified name of a source table in SQL. */
  abstract String table(String name);

  /** Ends the connections of chunk readers reading {@code items}; returns how many. */
  abstract int killChunkReaders(Statement admin) throws SQLException;

  /** SQL that inserts a row of {@code items} unless its key exists. */
  abstract String insertItemIfAbsent(long id);

  /** SQL that widens {@code grp} of {@code items} from int to bigint. */
  abstract String widenGroup();

  /** Restores the job of the first part with {@code extra} added to its tables. */
  abstract void restoresWithAnAddedTable(JobDefinition job, String checkpoint) throws Exception;

  /** SQL that widens the int key {@code id} of {@code extra} to bigint. */
  abstract String widenExtraKey();

  /** SQL that inserts {@code rows} rows into {@code extra} with keys past the int range. */
  abstract String insertExtraPastIntRange(int rows);

  @BeforeEach
  void setUp() throws Exception {
    connection = createDatabase();
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

  JobDefinition job(String tables, String restoreFrom) {
    return job(source(tables), restoreFrom);
  }

  JobDefinition job(DatabaseSource source, String restoreFrom) {
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
    JobDefinition job = job(tablePattern("items|codes"), null);
    JobRunner pipeline = new JobRunner(job);
    AtomicBoolean done = new AtomicBoolean();
    AtomicInteger killed = new AtomicInteger();
    ExecutorService background = Executors.newFixedThreadPool(2);
    try {
      running = pipeline.start();
      Future<?> workload = background.submit(() -> workload(done, killed));
      Future<?> killer = background.submit(() -> killChunkReaders(job, killed, 3, done));
      workload.get(3, TimeUnit.MINUTES);
      killer.get(3, TimeUnit.MINUTES);
    } finally {
      done.set(true);
      background.shutdownNow();
    }
    // The readers were killed in the middle of chunks, and the job went on from its checkpoints.
    assertThat(killed.get()).isPositive();
    awaitEqualAndEachCheckpointCommittedOnce(job, pipeline.targets());

    JobClients.cancelAndAwait(running);
    running = null;
    restoresWithAnAddedTable(
        job, Checkpoints.latest(job.runtime().checkpointDirectory()).orElseThrow().toString());
  }

  /**
   * The int key of {@code extra} widened to bigint after the job took its schema and before it
   * runs, with keys past the int range added: the chunks the job plans are bounded by keys of
   * either width, and the table equals its source.
   */
  @Test
  void aKeyWidenedWhileItsTableIsReadInChunksEqualsTheSource() throws Exception {
    JobDefinition job = job(source(tablePattern("extra")).withSnapshotChunkRows(200), null);
    // Built (its schema taken) before the key is widened, run after.
    PipelineComposer.ComposedJob composed = PipelineComposer.compose(job);
    execute(widenExtraKey(), insertExtraPastIntRange(1_000));
    running = composed.environment().executeAsync(composed.name());
    execute("UPDATE " + table("extra") + " SET note = 'changed' WHERE id % 7 = 0");
    awaitEqualAndEachCheckpointCommittedOnce(job, composed.targets());
  }

  /** Waits for the job's tables to equal their sources, then checks each commit was made once. */
  private void awaitEqualAndEachCheckpointCommittedOnce(
      JobDefinition job, java.util.List<TableTarget> targets) throws Exception {
    Catalog catalog = job.catalog().loader().loadCatalog();
    SourceTables.awaitEqual(
        running,
        connection,
        catalog,
        (DatabaseSource) job.source(),
        targets,
        Duration.ofSeconds(120));
    for (TableTarget target : targets) {
      Commits.jobsThatCommittedEachCheckpointOnce(catalog.loadTable(target.table()));
    }
  }

  /** The pattern of {@code --tables} for the tables {@code names} (a regex alternation). */
  abstract String tablePattern(String names);

  /** Small transactions over the whole key space while the snapshot runs. */
  abstract Connection connect() throws SQLException;

  private Void workload(AtomicBoolean done, AtomicInteger killed) throws SQLException {
    Random random = new Random(42);
    boolean widened = false;
    try (Connection writer = connect();
        Statement statement = writer.createStatement()) {
      int next = ITEMS + 1;
      for (int i = 0; i < 1_500 && !done.get(); i++) {
        long id = 1 + random.nextInt(ITEMS);
        // The items' schema changes while they are read: the job follows it in flight, the
        // chunks read from then on read the columns the table has.
        if (!widened && (killed.get() > 0 || i == 1_000)) {
          // Only a type widened: the same columns. A key of every chunk then needs 64 bits, so
          // that the chunks read before the next change of columns (those the job reads again
          // after the readers were killed) read them.
          widened = true;
          statement.execute(widenGroup());
          statement.execute(
              "UPDATE " + table("items") + " SET grp = 5000000000 + id WHERE id % 250 = 7");
        }
        if (i == 400) {
          statement.execute("ALTER TABLE " + table("items") + " ADD COLUMN note2 varchar(40)");
        } else if (i == 700) {
          statement.execute("ALTER TABLE " + table("items") + " DROP COLUMN seen");
        }
        switch (random.nextInt(6)) {
          case 0:
          case 1:
            statement.execute(
                "UPDATE "
                    + table("items")
                    + " SET label = 'updated "
                    + i
                    + "', amount = amount + 1"
                    + (i >= 400 ? ", note2 = 'n" + i + "'" : "")
                    + " WHERE id = "
                    + id);
            break;
          case 2:
            statement.execute("DELETE FROM " + table("items") + " WHERE id = " + id);
            break;
          case 3:
            statement.execute(insertItemIfAbsent(next++));
            break;
          case 4:
            // A new key no other statement makes: (i + 1) millions above the item ids.
            statement.execute(
                "UPDATE "
                    + table("items")
                    + " SET id = id + "
                    + 1_000_000L * (i + 1)
                    + " WHERE id = "
                    + id);
            break;
          default:
            statement.execute(
                "UPDATE "
                    + table("codes")
                    + " SET qty = qty + 1 WHERE region = "
                    + (1 + random.nextInt(6))
                    + " AND code = 'code-"
                    + (1 + random.nextInt(5000))
                    + "'");
        }
        if (i % 100 == 0) {
          statement.execute(
              "DELETE FROM " + table("codes") + " WHERE region = 3 AND code = 'code-" + i + "'");
        }
      }
    }
    return null;
  }

  /**
   * Ends the connections of the source's chunk readers while they are in a chunk of {@code items},
   * once the job has completed a checkpoint (so that it resumes from the middle of the snapshot),
   * up to {@code times} times.
   */
  private Void killChunkReaders(
      JobDefinition job, AtomicInteger killed, int times, AtomicBoolean done) throws Exception {
    try (Connection admin = connect();
        Statement statement = admin.createStatement()) {
      // The snapshot of items takes a few seconds; after it there is nothing to kill.
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
      while (killed.get() < times && System.nanoTime() < deadline && !done.get()) {
        if (Checkpoints.latest(job.runtime().checkpointDirectory()).isPresent()
            && killChunkReaders(statement) > 0) {
          killed.incrementAndGet();
          Thread.sleep(1_000);
        }
        Thread.sleep(10);
      }
    }
    return null;
  }

  Table awaitRows(Catalog catalog, JobRunner pipeline, String name, int rows) throws Exception {
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

  void execute(String... statements) throws SQLException {
    try (Statement statement = connection.createStatement()) {
      for (String sql : statements) {
        statement.execute(sql);
      }
    }
  }
}
