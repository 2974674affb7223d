package io.icebergcdc.bench;

import io.debezium.embedded.Connect;
import io.debezium.engine.DebeziumEngine;
import io.debezium.engine.RecordChangeEvent;
import io.debezium.engine.format.ChangeEventFormat;
import io.icebergcdc.cdc.SourceSequence;
import io.icebergcdc.commit.SnapshotSummaryKeys;
import io.icebergcdc.jobs.capture.SourceTables;
import io.icebergcdc.jobs.definition.DatabaseSource;
import io.icebergcdc.jobs.definition.DeadLetterOutput;
import io.icebergcdc.jobs.definition.JobDefinition;
import io.icebergcdc.jobs.definition.RuntimeDefinition;
import io.icebergcdc.jobs.definition.TableDefinition;
import io.icebergcdc.jobs.pipeline.JobRunner;
import io.icebergcdc.sink.CatalogDefinition;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.source.SourceRecord;

/**
 * Measures the PostgreSQL capture path end to end: a live PostgreSQL table, the capture job ({@code
 * apply --source postgres} as a library call, local Flink) and its Iceberg table.
 *
 * <ol>
 *   <li><b>Snapshot</b>: {@code rows} rows exist before the job starts; the time until they are all
 *       committed to Iceberg, from the job's submission.
 *   <li><b>Full speed</b>: one connection updates the table as fast as PostgreSQL takes it, in
 *       transactions of {@code batch} rows, for {@code seconds}; the rate at which the changes
 *       reach Iceberg commits.
 *   <li><b>Steady load</b>: the same transactions at {@code rate} rows per second for {@code
 *       seconds}; the lag from each transaction's commit in PostgreSQL to the commit of the Iceberg
 *       snapshot that holds it.
 * </ol>
 *
 * <p>A transaction is held by a snapshot once the snapshot's source position reaches the WAL
 * position read just before the transaction's last statement, a single-row update: that change, the
 * last of the transaction, comes at or after it. Both clocks are this machine's. At the end the
 * Iceberg table must equal the source table (row count and the sum of a column that every update
 * changes), or the benchmark fails.
 *
 * <p>With {@code --flink-cdc true} the same phases run against a peer instead of the capture job:
 * Flink CDC's {@code postgres-cdc} source into Iceberg's upsert table through Flink SQL, in a JVM
 * of its own on Flink 1.20 ({@code bench/peers/flink-cdc-postgres}, which {@code bench/capture.sh}
 * builds). Its snapshots carry no source position, so a transaction is held by the first snapshot
 * whose {@code total-records} count every row inserted and updated up to it: the upsert sink writes
 * each insert and each update as one data record and one equality delete of its key.
 */
public final class CaptureBenchmark {

  private static final String DATABASE = "icebergcdc_bench";
  private static final String SLOT = "icebergcdc_bench";
  private static final String FLINK_CDC_SLOT = "flinkcdc_bench";

  /** The benchmark's options; each is described in {@code bench/capture.sh}. */
  static final Set<String> OPTIONS =
      Set.of(
          "rows",
          "batch",
          "seconds",
          "rate",
          "parallelism",
          "checkpoint-interval",
          "out",
          "snapshot-chunk-rows",
          "engine-only",
          "truncate",
          "fail-halfway",
          "count-reads",
          "flink-cdc");

  private final long rows;
  private final int batch;
  private final Duration phase;
  private final int parallelism;
  private final Duration interval;
  private final long rate;
  private final Path out;
  private final boolean failHalfway;
  private final boolean engineOnly;
  private final boolean truncate;
  private final boolean countReads;
  private final int snapshotChunkRows;

  /**
   * One write transaction: where its last change is at least, how many rows the table had taken in
   * and updated up to and including it, and when it committed.
   */
  private record Transaction(long lsnBeforeLast, long rowsThrough, long committedMillis) {}

  /** The job under measurement, ours or the peer's. */
  private interface Running extends AutoCloseable {
    /** Throws if the job ended. */
    void check() throws Exception;
  }

  /** Whether the peer runs instead of the capture job; see the class comment. */
  private final boolean flinkCdc;

  /** Rows inserted before the job and updated since, over every phase so far. */
  private long rowsWritten;

  /** Reads and checks every option before the benchmark touches the database. */
  private CaptureBenchmark(BenchOptions options) {
    rows = options.getLong("rows", 200000);
    batch = options.getInt("batch", 1000);
    phase = options.duration("seconds", "60s");
    flinkCdc = options.getBoolean("flink-cdc", false);
    parallelism = options.getInt("parallelism", 2);
    interval = options.checkpointInterval("1s");
    rate = options.getLong("rate", 10000);
    out =
        Paths.get(
            options.get(
                "out",
                "bench/results/capture-"
                    + (flinkCdc ? "postgres-flink-cdc-" : "postgres-")
                    + LocalDate.now()
                    + ".md"));
    failHalfway = options.getBoolean("fail-halfway", false);
    engineOnly = options.getBoolean("engine-only", false);
    truncate = options.getBoolean("truncate", false);
    countReads = options.getBoolean("count-reads", failHalfway);
    snapshotChunkRows =
        options.getInt("snapshot-chunk-rows", DatabaseSource.DEFAULT_SNAPSHOT_CHUNK_ROWS);
    if (rows < 1 || batch < 1 || parallelism < 1 || rate < 1 || snapshotChunkRows < 0) {
      throw new IllegalArgumentException(
          "need --rows, --batch, --parallelism and --rate >= 1, and --snapshot-chunk-rows >= 0");
    }
    if (phase.toMillis() < 1) {
      throw new IllegalArgumentException("--seconds is above 0, not " + options.get("seconds"));
    }
    if (batch > rows) {
      throw new IllegalArgumentException(
          "--batch (" + batch + ") updates rows of the table: at most --rows (" + rows + ")");
    }
    if (engineOnly && (truncate || failHalfway || options.has("count-reads"))) {
      throw new IllegalArgumentException(
          "--engine-only reads into nothing: it has no table to truncate (--truncate), no chunk"
              + " readers to fail (--fail-halfway) and no snapshot reads to count (--count-reads)");
    }
    if (flinkCdc && (failHalfway || engineOnly || truncate)) {
      throw new IllegalArgumentException(
          "--flink-cdc runs the peer instead of the capture job: it takes neither --fail-halfway"
              + " nor --engine-only nor --truncate (Flink CDC's source skips truncates)");
    }
  }

  public static void main(String[] args) throws Exception {
    CaptureBenchmark benchmark;
    try {
      benchmark = new CaptureBenchmark(BenchOptions.parse(args, OPTIONS, OPTIONS));
    } catch (IllegalArgumentException e) {
      // (An invalid --out path too: InvalidPathException is one.)
      System.err.println("error: CaptureBenchmark: " + e.getMessage());
      System.exit(2);
      return;
    }
    try {
      benchmark.run();
    } finally {
      // A replication slot left behind keeps the server's WAL for as long as the machine runs.
      dropSource();
    }
  }

  private void run() throws Exception {
    Path work = Files.createTempDirectory("iceberg-cdc-capture-bench");
    createSourceTable();

    DatabaseSource source =
        new DatabaseSource(
                DatabaseSource.Kind.POSTGRES,
                "127.0.0.1",
                5432,
                "postgres",
                null,
                DATABASE,
                List.of("bench\\.items"),
                SLOT,
                SLOT,
                0,
                "bench")
            .withSnapshotChunkRows(snapshotChunkRows);
    if (engineOnly) {
      runEngineOnly(source, out);
      return;
    }
    JobDefinition job =
        new JobDefinition(
            source,
            CatalogDefinition.hadoop(work.resolve("warehouse").toString()),
            new TableDefinition("cdc.{table}", List.of(), null, 3),
            new Configuration(),
            DeadLetterOutput.NONE,
            new RuntimeDefinition(
                parallelism,
                interval,
                work.resolve("checkpoints").toString(),
                "hashmap",
                null,
                failHalfway ? 5 : 0));
    Catalog catalog = job.catalog().loader().loadCatalog();
    if (countReads) {
      // A vacuum of the freshly loaded table during the snapshot would change what the chunks'
      // boundaries cost (their index scans then fetch no row), and with it the count.
      try (Connection connection = connect();
          Statement statement = connection.createStatement()) {
        statement.execute("ALTER TABLE bench.items SET (autovacuum_enabled = false)");
      }
    }
    long readsBefore = countReads ? rowsReadFromTable() : 0;
    long submitted = System.currentTimeMillis();
    try (Running client = flinkCdc ? startFlinkCdc(work, parallelism, interval) : startJob(job);
        Connection connection = connect()) {
      // Loaded anew at each look: a Table held across the job's commits may name a metadata file
      // that the job's maintenance has since removed, which Hadoop tables cannot refresh past.
      Supplier<Table> tables = () -> catalog.loadTable(TableIdentifier.of("cdc", "items"));
      java.util.concurrent.CompletableFuture<Long> failedAt =
          failHalfway
              ? java.util.concurrent.CompletableFuture.supplyAsync(
                  () -> failChunkReadersHalfway(tables))
              : java.util.concurrent.CompletableFuture.completedFuture(-1L);
      long snapshotDone = awaitRecords(client, tables, rows);
      double snapshotSeconds = (snapshotDone - submitted) / 1000.0;
      String failure = "";
      if (failHalfway) {
        long appliedTwice = 0;
        for (Snapshot snapshot : tables.get().snapshots()) {
          appliedTwice +=
              Long.parseLong(
                  snapshot.summary().getOrDefault(SnapshotSummaryKeys.DUPLICATES_DROPPED, "0"));
        }
        failure =
            String.format(
                Locale.ROOT,
                "A failure was injected during the snapshot, when the table held %,d rows: the"
                    + " connections of the chunk readers were ended, the job failed and resumed"
                    + " from its last checkpoint. Rows the dedup dropped as already applied (read"
                    + " again after they were committed): %,d.%n%n",
                failedAt.get(),
                appliedTwice);
      }
      if (countReads) {
        // A connection reports what it read when its transaction ends, at most once a second,
        // and an idle one within 10 s.
        Thread.sleep(11_000);
        long read = rowsReadFromTable() - readsBefore;
        try (Statement statement = connection.createStatement()) {
          statement.execute("ALTER TABLE bench.items RESET (autovacuum_enabled)");
        }
        failure +=
            String.format(
                Locale.ROOT,
                "PostgreSQL read %,d rows of bench.items from the job's submission until 11 s"
                    + " after its snapshot was committed (pg_stat_user_tables: seq_tup_read +"
                    + " idx_tup_fetch; the table not vacuumed meanwhile), %,d beyond one read of"
                    + " each of its %,d rows: what the chunks' boundaries cost (an index range"
                    + " query of a chunk's rows each)%s.%n%n",
                read,
                read - rows,
                rows,
                failHalfway ? ", and the rows read again after the failure" : "");
      }

      List<Transaction> fullSpeed = write(connection, Long.MAX_VALUE);
      // The steady phase starts once the backlog of the full-speed phase is applied.
      awaitHeld(client, tables, last(fullSpeed));
      List<Transaction> steady = write(connection, rate);
      List<long[]> snapshots = awaitHeld(client, tables, last(steady));

      long fullSpeedRows = fullSpeed.size() * (long) batch;
      long fullSpeedStart = fullSpeed.get(0).committedMillis();
      double writeSeconds = (last(fullSpeed).committedMillis() - fullSpeedStart) / 1000.0;
      double appliedSeconds = (heldAt(snapshots, last(fullSpeed)) - fullSpeedStart) / 1000.0;
      long[] lags =
          steady.stream()
              .mapToLong(t -> heldAt(snapshots, t) - t.committedMillis())
              .sorted()
              .toArray();
      double steadyRate =
          steady.size()
              * (double) batch
              / ((last(steady).committedMillis() - steady.get(0).committedMillis()) / 1000.0);
      String check = compare(connection, tables);
      String truncated = truncate ? truncate(client, connection, tables, interval) : "";

      StringBuilder report = new StringBuilder();
      report.append(
          String.format(
              Locale.ROOT,
              "PostgreSQL capture benchmark, %s: %s; table bench.items (id bigint, v text, n"
                  + " bigint), %,d rows; %s; write transactions of %d rows; parallelism %d,"
                  + " checkpoints every %d ms, format version %d; PostgreSQL, Debezium and Flink"
                  + " on one machine of %d cores, Java %s.%n%n",
              LocalDate.now(),
              flinkCdc
                  ? "Flink CDC 3.5.0's postgres-cdc source into Iceberg's upsert table (Flink SQL,"
                      + " Flink 1.20, a JVM of its own)"
                  : "the capture job (apply --source postgres)",
              rows,
              flinkCdc
                  ? "Flink CDC's incremental snapshot"
                  : source.snapshotChunkRows() == 0
                      ? "Debezium's own snapshot"
                      : String.format(
                          Locale.ROOT,
                          "snapshot read by the job in chunks of %,d rows",
                          source.snapshotChunkRows()),
              batch,
              parallelism,
              interval.toMillis(),
              flinkCdc ? 2 : 3,
              Runtime.getRuntime().availableProcessors(),
              System.getProperty("java.version")));
      report.append(
          "| phase | rows | source rows/s | applied rows/s | lag p50 / p95 / max (s) |\n");
      report.append("| --- | ---: | ---: | ---: | --- |\n");
      report.append(
          String.format(
              Locale.ROOT,
              "| initial snapshot (from job submission) | %,d | - | %,.0f | - |%n",
              rows,
              rows / snapshotSeconds));
      report.append(
          String.format(
              Locale.ROOT,
              "| full-speed updates | %,d | %,.0f | %,.0f | - |%n",
              fullSpeedRows,
              fullSpeedRows / writeSeconds,
              fullSpeedRows / appliedSeconds));
      report.append(
          String.format(
              Locale.ROOT,
              "| steady updates | %,d | %,.0f | %,.0f | %.2f / %.2f / %.2f |%n",
              steady.size() * (long) batch,
              steadyRate,
              steadyRate,
              percentile(lags, 0.50) / 1000.0,
              percentile(lags, 0.95) / 1000.0,
              lags[lags.length - 1] / 1000.0));
      report.append("\n").append(failure).append(check).append("\n");
      report.append(truncated);
      Files.createDirectories(out.toAbsolutePath().getParent());
      Files.writeString(out, report.toString(), StandardCharsets.UTF_8);
      System.out.println(report);
    }
  }

  private static Running startJob(JobDefinition job) throws Exception {
    JobClient client = new JobRunner(job).start();
    return new Running() {
      @Override
      public void check() throws Exception {
        if (client.getJobStatus().get().isGloballyTerminalState()) {
          client.getJobExecutionResult().get();
          throw new IllegalStateException("the capture job ended: " + client.getJobStatus().get());
        }
      }

      @Override
      public void close() throws Exception {
        client.cancel().get();
      }
    };
  }

  /**
   * Starts the peer in a JVM of its own, with this JVM's options and the class path that {@code
   * bench/capture.sh} built for it; its output goes to a log file in {@code work}.
   */
  private static Running startFlinkCdc(Path work, int parallelism, Duration interval)
      throws Exception {
    Path project = Paths.get("bench/peers/flink-cdc-postgres/target");
    Path classpath = project.resolve("classpath.txt");
    if (!Files.exists(classpath)) {
      throw new IllegalStateException(
          classpath + " is missing: run the benchmark through bench/capture.sh, which builds it");
    }
    List<String> command = new ArrayList<>();
    command.add(ProcessHandle.current().info().command().orElse("java"));
    // Flink's --add-opens and the same heap as ours; not a profiler or debugger of this JVM.
    for (String argument :
        java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments()) {
      if (argument.startsWith("--add-opens") || argument.startsWith("-Xmx")) {
        command.add(argument);
      }
    }
    command.addAll(
        List.of(
            "-cp",
            project.resolve("classes").toAbsolutePath()
                + java.io.File.pathSeparator
                + Files.readString(classpath).trim(),
            "io.icebergcdc.peers.FlinkCdcPostgresToIceberg",
            "--database",
            DATABASE,
            "--schema",
            "bench",
            "--table",
            "items",
            "--slot",
            FLINK_CDC_SLOT,
            "--warehouse",
            work.resolve("warehouse").toAbsolutePath().toString(),
            "--checkpoints",
            work.resolve("checkpoints").toAbsolutePath().toString(),
            "--parallelism",
            Integer.toString(parallelism),
            "--checkpoint-interval-ms",
            Long.toString(interval.toMillis())));
    Path log = work.resolve("flink-cdc.log");
    Process process =
        new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    System.out.println("Flink CDC peer started; its output: " + log);
    return new Running() {
      @Override
      public void check() throws Exception {
        if (!process.isAlive()) {
          throw new IllegalStateException(
              "the Flink CDC peer ended with exit code "
                  + process.exitValue()
                  + "; its output: "
                  + log);
        }
      }

      @Override
      public void close() throws Exception {
        process.destroy();
        if (!process.waitFor(20, java.util.concurrent.TimeUnit.SECONDS)) {
          process.destroyForcibly().waitFor();
        }
      }
    };
  }

  /**
   * Debezium's embedded engine alone, with the capture job's connector properties and offsets in
   * memory, through the same snapshot and full-speed phases into nothing: the limit of the decoding
   * and of Debezium itself on this machine, beside which the capture job is measured.
   */
  private void runEngineOnly(DatabaseSource source, Path out) throws Exception {
    Properties properties = new Properties();
    properties.putAll(source.debeziumProperties(SourceTables.discover(source)));
    properties.put("offset.storage", "org.apache.kafka.connect.storage.MemoryOffsetBackingStore");
    properties.put("schema.history.internal", "io.debezium.relational.history.MemorySchemaHistory");
    properties.put("offset.flush.interval.ms", "60000");
    AtomicLong records = new AtomicLong();
    AtomicLong lastLsn = new AtomicLong();
    long started = System.currentTimeMillis();
    ExecutorService thread = Executors.newSingleThreadExecutor();
    try (DebeziumEngine<RecordChangeEvent<SourceRecord>> engine =
            DebeziumEngine.create(ChangeEventFormat.of(Connect.class))
                .using(properties)
                .notifying(
                    (batch, committer) -> {
                      for (RecordChangeEvent<SourceRecord> event : batch) {
                        if (event.record().value() instanceof Struct value
                            && value.schema().field("source") != null) {
                          records.incrementAndGet();
                          Object lsn = value.getStruct("source").get("lsn");
                          if (lsn instanceof Long position) {
                            lastLsn.set(position);
                          }
                        }
                        committer.markProcessed(event);
                      }
                      committer.markBatchFinished();
                    })
                .build();
        Connection connection = connect()) {
      thread.execute(engine);
      while (records.get() < rows) {
        Thread.sleep(20);
      }
      double snapshotSeconds = (System.currentTimeMillis() - started) / 1000.0;
      List<Transaction> fullSpeed = write(connection, Long.MAX_VALUE);
      Transaction last = last(fullSpeed);
      while (Long.compareUnsigned(lastLsn.get(), last.lsnBeforeLast()) < 0) {
        Thread.sleep(20);
      }
      long readMillis = System.currentTimeMillis();
      long fullSpeedRows = fullSpeed.size() * (long) batch;
      long fullSpeedStart = fullSpeed.get(0).committedMillis();
      String report =
          String.format(
              Locale.ROOT,
              "Debezium's embedded engine alone, %s: table bench.items, %,d rows; write"
                  + " transactions of %d rows; one machine of %d cores, Java %s.%n%n"
                  + "| phase | rows | source rows/s | read rows/s |%n| --- | ---: | ---: | ---: |%n"
                  + "| initial snapshot (from the engine's start) | %,d | - | %,.0f |%n"
                  + "| full-speed updates | %,d | %,.0f | %,.0f |%n",
              LocalDate.now(),
              rows,
              batch,
              Runtime.getRuntime().availableProcessors(),
              System.getProperty("java.version"),
              rows,
              rows / snapshotSeconds,
              fullSpeedRows,
              fullSpeedRows / ((last.committedMillis() - fullSpeedStart) / 1000.0),
              fullSpeedRows / ((readMillis - fullSpeedStart) / 1000.0));
      Files.createDirectories(out.toAbsolutePath().getParent());
      Files.writeString(out, report, StandardCharsets.UTF_8);
      System.out.println(report);
    } finally {
      thread.shutdownNow();
    }
  }

  /**
   * The rows PostgreSQL has read from bench.items so far, by sequential and index scans, as its
   * statistics have them.
   */
  private static long rowsReadFromTable() throws SQLException {
    try (Connection connection = connect();
        Statement statement = connection.createStatement();
        ResultSet read =
            statement.executeQuery(
                "SELECT coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0)"
                    + " FROM pg_stat_user_tables WHERE schemaname = 'bench' AND relname = 'items'")) {
      return read.next() ? read.getLong(1) : 0;
    }
  }

  private static Connection connect() throws SQLException {
    return DriverManager.getConnection(
        "jdbc:postgresql://127.0.0.1:5432/" + DATABASE, "postgres", "");
  }

  /** Drops the benchmark's replication slots and database, those of an earlier run too. */
  private static void dropSource() throws SQLException {
    BenchPostgres.drop(DATABASE, SLOT, FLINK_CDC_SLOT);
  }

  private void createSourceTable() throws SQLException {
    BenchPostgres.recreate(DATABASE, SLOT, FLINK_CDC_SLOT);
    try (Connection connection = connect();
        Statement statement = connection.createStatement()) {
      statement.execute("CREATE SCHEMA bench");
      statement.execute("CREATE TABLE bench.items (id bigint PRIMARY KEY, v text, n bigint)");
      statement.execute(
          "INSERT INTO bench.items SELECT i, md5(i::text), 0 FROM generate_series(0, "
              + (rows - 1)
              + ") i");
    }
    rowsWritten = rows;
  }

  /**
   * Updates the table for one phase in transactions of {@code batch} rows, at most {@code
   * rowsPerSecond}, cycling through the keys.
   */
  private List<Transaction> write(Connection connection, long rowsPerSecond) throws SQLException {
    List<Transaction> done = new ArrayList<>();
    connection.setAutoCommit(false);
    long start = System.nanoTime();
    long end = start + phase.toNanos();
    long first = 0;
    try (Statement statement = connection.createStatement()) {
      while (System.nanoTime() < end) {
        long last = first + batch - 1;
        statement.executeUpdate(
            "UPDATE bench.items SET n = n + 1, v = md5((n + 1)::text) WHERE id >= "
                + first
                + " AND id < "
                + last);
        long lsn;
        try (ResultSet result = statement.executeQuery("SELECT pg_current_wal_insert_lsn()")) {
          result.next();
          lsn = SourceSequence.parseLsn(result.getString(1));
        }
        statement.executeUpdate("UPDATE bench.items SET n = n + 1 WHERE id = " + last);
        connection.commit();
        rowsWritten += batch;
        done.add(new Transaction(lsn, rowsWritten, System.currentTimeMillis()));
        first = last + 1 >= rows - batch ? 0 : last + 1;
        if (rowsPerSecond != Long.MAX_VALUE) {
          long due = start + done.size() * batch * 1_000_000_000L / rowsPerSecond;
          long wait = due - System.nanoTime();
          if (wait > 0) {
            try {
              Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
              throw new IllegalStateException(e);
            }
          }
        }
      }
    } finally {
      connection.setAutoCommit(true);
    }
    return done;
  }

  /** Waits until the table holds {@code expected} records, and returns when that was committed. */
  /**
   * Once the table holds half the rows, ends the connections of the job's chunk readers (their
   * queries read bench.items by key), which fails the job's source; returns the rows held then.
   */
  private long failChunkReadersHalfway(Supplier<Table> tables) {
    try (Connection admin = connect();
        java.sql.Statement statement = admin.createStatement()) {
      while (true) {
        Snapshot current = tables.get().currentSnapshot();
        long held =
            current == null
                ? 0
                : Long.parseLong(current.summary().getOrDefault("total-records", "0"));
        if (held >= rows) {
          throw new IllegalStateException("the snapshot ended before a chunk reader was failed");
        }
        if (held >= rows / 2) {
          try (java.sql.ResultSet result =
              statement.executeQuery(
                  "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                      + " WHERE datname = current_database() AND pid <> pg_backend_pid()"
                      + " AND backend_type = 'client backend'"
                      + " AND query LIKE 'SELECT %FROM \"bench\".\"items\"%ORDER BY%'"
                      + " AND query NOT LIKE '%OFFSET%'")) {
            result.next();
            if (result.getLong(1) > 0) {
              return held;
            }
          }
        }
        Thread.sleep(20);
      }
    } catch (Exception e) {
      throw new IllegalStateException("cannot fail the chunk readers: " + e.getMessage(), e);
    }
  }

  private static long awaitRecords(Running client, Supplier<Table> tables, long expected)
      throws Exception {
    while (true) {
      client.check();
      Table table;
      try {
        table = tables.get();
      } catch (org.apache.iceberg.exceptions.NoSuchTableException notYet) {
        // The peer creates its table once it runs; the capture job's exists before.
        Thread.sleep(100);
        continue;
      }
      Snapshot current = table.currentSnapshot();
      if (current != null
          && Long.parseLong(current.summary().getOrDefault("total-records", "0")) >= expected) {
        for (Snapshot snapshot : table.snapshots()) {
          if (Long.parseLong(snapshot.summary().getOrDefault("total-records", "0")) >= expected) {
            return snapshot.timestampMillis();
          }
        }
      }
      Thread.sleep(100);
    }
  }

  /**
   * Waits until a snapshot holds the transaction, and returns every snapshot as (commit time,
   * progress), oldest first: the progress is the source position, or for the peer the records its
   * data files count.
   */
  private List<long[]> awaitHeld(Running client, Supplier<Table> tables, Transaction last)
      throws Exception {
    long deadline = System.currentTimeMillis() + 600_000;
    while (System.currentTimeMillis() < deadline) {
      client.check();
      Table table = tables.get();
      List<long[]> snapshots = new ArrayList<>();
      for (Snapshot snapshot : table.snapshots()) {
        if (flinkCdc) {
          String records = snapshot.summary().getOrDefault("total-records", "0");
          snapshots.add(new long[] {snapshot.timestampMillis(), Long.parseLong(records)});
          continue;
        }
        String position = snapshot.summary().get(SnapshotSummaryKeys.SOURCE_POSITION);
        if (position != null && position.startsWith("lsn=")) {
          String lsn = position.substring(4).split(" ")[0];
          snapshots.add(new long[] {snapshot.timestampMillis(), SourceSequence.parseLsn(lsn)});
        }
      }
      if (!snapshots.isEmpty() && heldAt(snapshots, last) > 0) {
        return snapshots;
      }
      Thread.sleep(100);
    }
    throw new IllegalStateException("the changes did not reach Iceberg within 10 minutes");
  }

  /**
   * Truncates the source table, then inserts one row in a transaction of its own, and waits for the
   * first Iceberg snapshot that holds that row's transaction: the truncate's rows deleted, the row
   * added. Returns the report's paragraph on it, once the tables compare equal.
   */
  private String truncate(
      Running client, Connection connection, Supplier<Table> tables, Duration interval)
      throws Exception {
    long held = CountAndSum.of(connection, "bench.items").rows();
    long truncatedMillis;
    long lsn;
    try (Statement statement = connection.createStatement()) {
      statement.execute("TRUNCATE bench.items");
      truncatedMillis = System.currentTimeMillis();
      try (ResultSet result = statement.executeQuery("SELECT pg_current_wal_insert_lsn()")) {
        result.next();
        lsn = SourceSequence.parseLsn(result.getString(1));
      }
      statement.execute("INSERT INTO bench.items VALUES (" + rows + ", 'after', 1)");
    }
    Transaction truncated = new Transaction(lsn, rowsWritten, truncatedMillis);
    long appliedMillis = heldAt(awaitHeld(client, tables, truncated), truncated);
    // The snapshots from the truncate's to the row's, which may be one.
    long[] totals = new long[5];
    int commits = 0;
    for (Snapshot snapshot : tables.get().snapshots()) {
      if (snapshot.timestampMillis() > truncatedMillis
          && snapshot.timestampMillis() <= appliedMillis) {
        commits++;
        String[] keys = {
          SnapshotSummaryKeys.ROWS_DELETED,
          "added-position-deletes",
          "added-delete-files",
          "removed-delete-files",
          "deleted-data-files"
        };
        for (int i = 0; i < keys.length; i++) {
          totals[i] += Long.parseLong(snapshot.summary().getOrDefault(keys[i], "0"));
        }
      }
    }
    String check = compare(connection, tables);
    return String.format(
        Locale.ROOT,
        "%nA TRUNCATE of the %,d rows the table held, then one row inserted: the Iceberg"
            + " snapshot that holds both was committed %.2f s after the TRUNCATE (checkpoints"
            + " every %d ms; the steady lag above is the usual wait). Its %d commit(s) since the"
            + " TRUNCATE deleted %,d rows by %,d position deletes, adding %,d delete files and"
            + " removing %,d, and removed %,d data files. %s%n",
        held,
        (appliedMillis - truncatedMillis) / 1000.0,
        interval.toMillis(),
        commits,
        totals[0],
        totals[1],
        totals[2],
        totals[3],
        totals[4],
        check);
  }

  /** When the first snapshot that holds the transaction was committed, or 0 if none does. */
  private long heldAt(List<long[]> snapshots, Transaction transaction) {
    long mark = flinkCdc ? transaction.rowsThrough() : transaction.lsnBeforeLast();
    for (long[] snapshot : snapshots) {
      if (Long.compareUnsigned(snapshot[1], mark) >= 0) {
        return snapshot[0];
      }
    }
    return 0;
  }

  /** Compares the Iceberg table with the source table; fails if they differ. */
  private static String compare(Connection connection, Supplier<Table> tables) throws Exception {
    CountAndSum source = CountAndSum.of(connection, "bench.items");
    CountAndSum iceberg = CountAndSum.of(tables.get());
    if (!iceberg.equals(source)) {
      throw new IllegalStateException(
          String.format(
              "the Iceberg table differs from the source: %d rows with sum(n) %d, against %d"
                  + " with %d",
              iceberg.rows(), iceberg.sum(), source.rows(), source.sum()));
    }
    return String.format(
        Locale.ROOT,
        "Checked at the end: the Iceberg table and the source table both hold %,d rows with"
            + " sum(n) = %,d.",
        source.rows(),
        source.sum());
  }

  private static Transaction last(List<Transaction> transactions) {
    return transactions.get(transactions.size() - 1);
  }

  private static long percentile(long[] sorted, double p) {
    return sorted[Math.min(sorted.length - 1, (int) Math.floor(p * sorted.length))];
  }
}
