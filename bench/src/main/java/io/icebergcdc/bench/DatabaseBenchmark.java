package io.icebergcdc.bench;

import io.icebergcdc.cdc.SourceSequence;
import io.icebergcdc.commit.SnapshotSummaryKeys;
import io.icebergcdc.jobs.definition.DatabaseSource;
import io.icebergcdc.jobs.definition.DeadLetterOutput;
import io.icebergcdc.jobs.definition.JobDefinition;
import io.icebergcdc.jobs.definition.RuntimeDefinition;
import io.icebergcdc.jobs.definition.TableDefinition;
import io.icebergcdc.jobs.pipeline.PipelineComposer;
import io.icebergcdc.locallake.LocalRestCatalog;
import io.icebergcdc.locallake.LocalS3Store;
import io.icebergcdc.sink.CatalogDefinition;
import io.icebergcdc.sink.SinkOptions;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
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
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.jobgraph.JobVertex;
import org.apache.flink.streaming.api.graph.StreamGraph;
import org.apache.flink.util.TimeUtils;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;

/**
 * Measures one capture job ({@code apply --source postgres} as a library call, local Flink) over a
 * PostgreSQL schema of many tables, beside the same rows and the same changes in one table.
 *
 * <p>The schema has {@code tables} tables: the first {@code large} of {@code large-rows} rows each,
 * the others of {@code small-rows}. Each run:
 *
 * <ol>
 *   <li><b>Snapshot</b>: the rows exist before the job starts; the time until every table holds
 *       them in Iceberg, from the job's submission.
 *   <li><b>Changes</b>: {@code rounds} rounds, each a transaction per table that updates {@code
 *       batch} of its rows (all of a smaller table's), inserts a row and deletes the one its
 *       transaction of the round before inserted, as fast as PostgreSQL takes them; the rate at
 *       which they reach Iceberg: every table's last transaction is held once a snapshot's source
 *       position reaches the WAL position read before its last statement. The time it took to write
 *       them is reported beside: one connection writes them, one transaction at a time, which
 *       bounds the rate of a job that keeps up.
 * </ol>
 *
 * <p>The one-table run has one table with as many rows as all of them and takes the same
 * transactions, of the same sizes, in the same order; it runs first. Reported for each: the job
 * graph's operators and tasks, the most threads the job added to the benchmark's JVM (the embedded
 * Flink runs in it), the JVM's heap after a full collection, and the size of the last checkpoint.
 * At the end every Iceberg table must equal its source table, row for row (every row's columns, by
 * a digest of the table's rows), or the benchmark fails.
 */
public final class DatabaseBenchmark {

  private static final String DATABASE = "icebergcdc_db_bench";
  private static final String SLOT = "icebergcdc_db_bench";

  private final int tables;
  private final int large;
  private final long largeRows;
  private final long smallRows;
  private final int rounds;
  private final int batch;
  private final int parallelism;
  private final Duration interval;

  /**
   * Whether the tables live in a REST catalog: Iceberg's REST server, over a local warehouse or
   * (with {@link #s3}) over S3Proxy through {@code S3FileIO}.
   */
  private final boolean rest;

  /** Whether the REST catalog's warehouse is on S3 (S3Proxy, a process of its own). */
  private final boolean s3;

  /** What S3Proxy adds to each request it answers, as a network would ({@code --s3-latency}). */
  private final Duration s3Latency;

  /** The sink options given as system properties, by option ({@code -Dbench.sink.*}). */
  private final java.util.SortedMap<String, String> givenSinkOptions;

  /** Whether the tables of a checkpoint are committed in one transaction of the REST catalog. */
  private final boolean atomicCommits;

  /** How the tables' changes are spread over the writers: by primary key or by partition. */
  private final io.icebergcdc.sink.Distribution distribution;

  private final io.icebergcdc.sink.DeleteMode deleteMode;

  /** The partition spec of the tables the job creates ({@code --partition-by}); null for none. */
  private final String partitionBy;

  /** What one run measured. */
  private record Result(
      String name,
      int tables,
      long rows,
      long changes,
      int operators,
      int vertices,
      int tasks,
      double snapshotSeconds,
      double writeSeconds,
      double changesSeconds,
      int threadsPeak,
      long heapBytes,
      long checkpointBytes,
      double idleCpuSeconds,
      long idleHeapBytes,
      String check) {}

  /** The options the benchmark takes, without their {@code --}. */
  private static final java.util.Set<String> OPTIONS =
      java.util.Set.of(
          "tables",
          "large",
          "large-rows",
          "small-rows",
          "rounds",
          "batch",
          "parallelism",
          "checkpoint-interval",
          "catalog",
          "s3-latency",
          "atomic-commits",
          "distribution",
          "partition-by",
          "delete-mode",
          "idle-seconds",
          "only",
          "out");

  /**
   * How long the job runs on without changes after its changes are applied, its process's CPU time
   * measured meanwhile (what the job's tables cost while idle); 0: not at all.
   */
  private final int idleSeconds;

  /** The columns of the Iceberg tables the job would create, for those made beforehand. */
  private static final org.apache.iceberg.Schema TABLE_SCHEMA =
      new org.apache.iceberg.Schema(
          List.of(
              org.apache.iceberg.types.Types.NestedField.required(
                  1, "id", org.apache.iceberg.types.Types.LongType.get()),
              org.apache.iceberg.types.Types.NestedField.optional(
                  2, "v", org.apache.iceberg.types.Types.StringType.get()),
              org.apache.iceberg.types.Types.NestedField.optional(
                  3, "n", org.apache.iceberg.types.Types.LongType.get())),
          java.util.Set.of(1));

  /** Which runs: {@code many}, {@code one} or {@code both}. */
  private final String only;

  private DatabaseBenchmark(BenchOptions options) {
    tables = options.getInt("tables", 300);
    large = options.getInt("large", 3);
    largeRows = options.getLong("large-rows", 100000);
    smallRows = options.getLong("small-rows", 100);
    rounds = options.getInt("rounds", 5);
    batch = options.getInt("batch", 100);
    parallelism = options.getInt("parallelism", 2);
    interval = options.checkpointInterval("2s");
    String catalog = options.oneOf("catalog", "hadoop", "hadoop", "rest", "rest-s3");
    rest = !catalog.equals("hadoop");
    s3 = catalog.equals("rest-s3");
    s3Latency = options.duration("s3-latency", "0ms");
    if (options.has("s3-latency") && !s3) {
      throw new IllegalArgumentException("--s3-latency needs --catalog rest-s3");
    }
    if (s3Latency.toNanos() % 1_000_000 != 0) {
      throw new IllegalArgumentException(
          "--s3-latency must be whole milliseconds (S3Proxy's unit): " + s3Latency);
    }
    // The sink options given as system properties, checked before anything starts.
    givenSinkOptions = BenchJobs.sinkOptionsOfSystemProperties();
    SinkOptions.validate(Configuration.fromMap(givenSinkOptions));
    atomicCommits = options.getBoolean("atomic-commits", false);
    distribution =
        io.icebergcdc.sink.Distribution.valueOf(
            options
                .oneOf("distribution", "primary_key", "primary_key", "partition")
                .toUpperCase(Locale.ROOT));
    partitionBy = options.get("partition-by");
    if (partitionBy != null) {
      try {
        io.icebergcdc.sink.CdcTables.parsePartitionSpec(TABLE_SCHEMA, partitionBy);
      } catch (RuntimeException e) {
        throw new IllegalArgumentException("--partition-by: " + e.getMessage(), e);
      }
    }
    deleteMode =
        io.icebergcdc.sink.DeleteMode.valueOf(
            options
                .oneOf("delete-mode", "position", "position", "equality")
                .toUpperCase(Locale.ROOT));
    idleSeconds = options.getInt("idle-seconds", 0);
    only = options.oneOf("only", "both", "both", "many", "one");
    if (atomicCommits && !rest) {
      throw new IllegalArgumentException("--atomic-commits true needs --catalog rest or rest-s3");
    }
    if (tables < 1
        || large < 0
        || large > tables
        || rounds < 1
        || batch < 1
        || parallelism < 1
        || largeRows < 0
        || smallRows < 0
        || idleSeconds < 0) {
      throw new IllegalArgumentException(
          "need --tables >= 1, 0 <= --large <= --tables, --rounds >= 1, --batch >= 1,"
              + " --parallelism >= 1, and --large-rows, --small-rows and --idle-seconds >= 0");
    }
  }

  public static void main(String[] args) throws Exception {
    BenchOptions options;
    DatabaseBenchmark benchmark;
    Path out;
    try {
      options = BenchOptions.parse(args, OPTIONS, OPTIONS);
      benchmark = new DatabaseBenchmark(options);
      out =
          Paths.get(
              options.get("out", "bench/results/database-postgres-" + LocalDate.now() + ".md"));
    } catch (IllegalArgumentException e) {
      // (An invalid --out path too: InvalidPathException is one.)
      System.err.println("error: DatabaseBenchmark: " + e.getMessage());
      System.exit(2);
      return;
    }
    String only = benchmark.only;
    // The one table first: the threads of a cancelled job take a while to end.
    List<Result> results = new ArrayList<>();
    try {
      if (!only.equals("one")) {
        results.add(null);
      }
      if (!only.equals("many")) {
        results.add(benchmark.run(true));
      }
      if (!only.equals("one")) {
        results.set(0, benchmark.run(false));
      }
    } catch (Exception e) {
      // A replication slot left behind keeps the server's WAL for as long as the machine runs.
      dropSource();
      throw e;
    }
    String report = benchmark.report(results);
    Files.createDirectories(out.toAbsolutePath().getParent());
    Files.writeString(out, report, StandardCharsets.UTF_8);
    System.out.println(report);
    System.out.println("Written to " + out);
    // A replication slot left behind keeps the server's WAL for as long as the machine runs.
    dropSource();
    System.exit(0);
  }

  /** The rows of table {@code index} of the many-table schema. */
  private long rowsOf(int index) {
    return index < large ? largeRows : smallRows;
  }

  private long totalRows() {
    long total = 0;
    for (int i = 0; i < tables; i++) {
      total += rowsOf(i);
    }
    return total;
  }

  private static String tableName(int index) {
    return String.format(Locale.ROOT, "t%04d", index);
  }

  private Result run(boolean oneTable) throws Exception {
    Path work = Files.createTempDirectory("iceberg-cdc-database-bench");
    List<String> names = new ArrayList<>();
    Map<String, Long> rows = new LinkedHashMap<>();
    if (oneTable) {
      names.add("one");
      rows.put("one", totalRows());
    } else {
      for (int i = 0; i < tables; i++) {
        names.add(tableName(i));
        rows.put(tableName(i), rowsOf(i));
      }
    }
    createSource(rows);

    LocalS3Store s3Store = s3 ? LocalS3Store.start(s3Latency) : null;
    LocalRestCatalog restServer = null;
    try {
      Map<String, String> fileIo = Map.of();
      String warehouse = work.resolve("warehouse").toString();
      if (s3Store != null) {
        s3Store.createBucket("bench-db");
        fileIo = s3Store.icebergProperties();
        warehouse = "s3://bench-db/warehouse";
      }
      restServer = rest ? LocalRestCatalog.start(warehouse, fileIo) : null;
      return run(oneTable, work, names, rows, restServer, fileIo);
    } finally {
      if (restServer != null) {
        restServer.close();
      }
      if (s3Store != null) {
        s3Store.close();
      }
    }
  }

  private Result run(
      boolean oneTable,
      Path work,
      List<String> names,
      Map<String, Long> rows,
      LocalRestCatalog restServer,
      Map<String, String> fileIo)
      throws Exception {
    Configuration sinkOptions = new Configuration();
    sinkOptions.set(SinkOptions.COMMIT_ATOMIC_ACROSS_TABLES, atomicCommits);
    sinkOptions.set(SinkOptions.DISTRIBUTION, distribution);
    sinkOptions.set(SinkOptions.DELETE_MODE, deleteMode);
    givenSinkOptions.forEach(sinkOptions::setString);
    JobDefinition job =
        new JobDefinition(
            new DatabaseSource(
                DatabaseSource.Kind.POSTGRES,
                "127.0.0.1",
                5432,
                "postgres",
                null,
                DATABASE,
                List.of(oneTable ? "bench\\.one" : "bench\\.t\\d{4}"),
                SLOT,
                SLOT,
                0,
                "bench"),
            restServer == null
                ? CatalogDefinition.hadoop(work.resolve("warehouse").toString())
                : CatalogDefinition.builder()
                    .type("rest")
                    .uri(restServer.uri())
                    .properties(fileIo)
                    .build(),
            new TableDefinition("cdc.{table}", List.of(), null, 3),
            sinkOptions,
            DeadLetterOutput.NONE,
            new RuntimeDefinition(
                parallelism, interval, work.resolve("checkpoints").toString(), "hashmap", null, 0));
    Catalog catalog = job.catalog().loader().loadCatalog();
    if (partitionBy != null) {
      // A capture job creates its tables unpartitioned: partitioned tables are made beforehand, as
      // another engine would, with the columns the job would give them.
      for (String name : names) {
        io.icebergcdc.sink.CdcTables.createOrLoad(
            catalog, TableIdentifier.of("cdc", name), TABLE_SCHEMA, partitionBy, 3, List.of("id"));
      }
    }
    ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    int threadsBefore = threads.getThreadCount();
    threads.resetPeakThreadCount();

    PipelineComposer.ComposedJob composed = PipelineComposer.compose(job);
    StreamGraph graph = composed.environment().getStreamGraph();
    graph.setJobName(composed.name());
    int operators = graph.getStreamNodes().size();
    JobGraph jobGraph = graph.getJobGraph();
    int vertices = jobGraph.getNumberOfVertices();
    int tasks = 0;
    for (JobVertex vertex : jobGraph.getVertices()) {
      tasks += vertex.getParallelism();
    }
    System.out.printf(
        Locale.ROOT,
        "%s: %d tables, %,d rows; %d operators in %d job vertices, %d tasks%n",
        oneTable ? "one table" : "many tables",
        names.size(),
        totalRows(),
        operators,
        vertices,
        tasks);

    long submitted = System.currentTimeMillis();
    JobClient client = composed.environment().executeAsync(graph);
    try (Connection connection = connect()) {
      long snapshotDone = awaitRows(client, catalog, rows);
      double snapshotSeconds = (snapshotDone - submitted) / 1000.0;
      System.out.printf(Locale.ROOT, "snapshot held after %.1f s%n", snapshotSeconds);

      long writeStart = System.currentTimeMillis();
      Map<String, Long> marks = new HashMap<>();
      long changes = write(connection, oneTable, rows, marks);
      double writeSeconds = (System.currentTimeMillis() - writeStart) / 1000.0;
      System.out.printf(Locale.ROOT, "%,d changes written in %.1f s%n", changes, writeSeconds);
      long held = awaitHeld(client, catalog, marks);
      double changesSeconds = (held - writeStart) / 1000.0;
      System.out.printf(Locale.ROOT, "changes held after %.1f s%n", changesSeconds);

      long checkpointBytes = lastCheckpointBytes(work.resolve("checkpoints"));
      int threadsPeak = threads.getPeakThreadCount() - threadsBefore;
      System.gc();
      long heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
      // After the figures above, so that they compare with runs without an idle phase.
      double idleCpuSeconds = -1;
      long idleHeap = -1;
      if (idleSeconds > 0) {
        com.sun.management.OperatingSystemMXBean os =
            (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        long before = os.getProcessCpuTime();
        Thread.sleep(idleSeconds * 1000L);
        idleCpuSeconds = (os.getProcessCpuTime() - before) / 1e9;
        System.out.printf(Locale.ROOT, "idle for %d s: %.1f CPU s%n", idleSeconds, idleCpuSeconds);
        // The heap of the quiet job: what it keeps for its tables, without the changes in flight.
        System.gc();
        idleHeap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
      }
      String check = compare(connection, catalog, names);
      return new Result(
          oneTable ? "one table" : tables + " tables",
          names.size(),
          totalRows(),
          changes,
          operators,
          vertices,
          tasks,
          snapshotSeconds,
          writeSeconds,
          changesSeconds,
          threadsPeak,
          heap,
          checkpointBytes,
          idleCpuSeconds,
          idleHeap,
          check);
    } finally {
      client.cancel().get();
      if (catalog instanceof java.io.Closeable closeable) {
        closeable.close();
      }
    }
  }

  private static Connection connect() throws SQLException {
    return DriverManager.getConnection(
        "jdbc:postgresql://127.0.0.1:5432/" + DATABASE, "postgres", "");
  }

  private static void createSource(Map<String, Long> rows) throws SQLException {
    BenchPostgres.recreate(DATABASE, SLOT);
    createTables(rows);
  }

  /** Drops the benchmark's replication slot and database, those of an earlier run too. */
  private static void dropSource() throws SQLException {
    BenchPostgres.drop(DATABASE, SLOT);
  }

  private static void createTables(Map<String, Long> rows) throws SQLException {
    try (Connection connection = connect();
        Statement statement = connection.createStatement()) {
      statement.execute("CREATE SCHEMA bench");
      for (Map.Entry<String, Long> table : rows.entrySet()) {
        statement.execute(
            "CREATE TABLE bench." + table.getKey() + " (id bigint PRIMARY KEY, v text, n bigint)");
        statement.execute(
            "INSERT INTO bench."
                + table.getKey()
                + " SELECT i, md5(i::text), 0 FROM generate_series(0, "
                + (table.getValue() - 1)
                + ") i");
      }
    }
  }

  /**
   * Writes the rounds of transactions, one per many-table table and round, into the run's tables
   * (the one table takes each transaction at the rows the many-table table's would have had, so
   * that both runs change the same number of rows in the same transactions); returns the rows
   * changed and fills {@code marks} with each table's position to be held.
   */
  private long write(
      Connection connection, boolean oneTable, Map<String, Long> rows, Map<String, Long> marks)
      throws SQLException {
    long changes = 0;
    connection.setAutoCommit(false);
    try (Statement statement = connection.createStatement()) {
      for (int round = 0; round < rounds; round++) {
        long offsetInOne = 0;
        for (int i = 0; i < tables; i++) {
          long tableRows = rowsOf(i);
          long size = Math.min(batch, tableRows);
          long first = (round * size) % (tableRows - size + 1);
          String table = oneTable ? "one" : tableName(i);
          long base = oneTable ? offsetInOne : 0;
          offsetInOne += tableRows;
          long last = base + first + size - 1;
          statement.executeUpdate(
              "UPDATE bench."
                  + table
                  + " SET n = n + 1, v = md5((n + 1)::text) WHERE id >= "
                  + (base + first)
                  + " AND id < "
                  + last);
          // A row inserted, and the one this table's transaction of the round before inserted
          // deleted: each transaction inserts, updates and deletes.
          statement.executeUpdate(
              "INSERT INTO bench."
                  + table
                  + " VALUES ("
                  + insertedId(i, round)
                  + ", md5('"
                  + round
                  + "'), "
                  + round
                  + ")");
          if (round > 0) {
            statement.executeUpdate(
                "DELETE FROM bench." + table + " WHERE id = " + insertedId(i, round - 1));
          }
          long lsn;
          try (ResultSet result = statement.executeQuery("SELECT pg_current_wal_insert_lsn()")) {
            result.next();
            lsn = SourceSequence.parseLsn(result.getString(1));
          }
          statement.executeUpdate("UPDATE bench." + table + " SET n = n + 1 WHERE id = " + last);
          connection.commit();
          changes += size + (round > 0 ? 2 : 1);
          marks.put(table, lsn);
        }
      }
    } finally {
      connection.setAutoCommit(true);
    }
    return changes;
  }

  /**
   * The id of the row that the transaction of many-table table {@code table} (or of its part of the
   * one table) inserts in {@code round}: past every table's rows, and apart for each table.
   */
  private static long insertedId(int table, int round) {
    return 1_000_000_000_000L + (long) table * 1_000_000L + round;
  }

  /** Waits until every table holds its rows; returns when the last of them was committed. */
  private static long awaitRows(JobClient client, Catalog catalog, Map<String, Long> rows)
      throws Exception {
    Map<String, Long> waiting = new LinkedHashMap<>(rows);
    long last = 0;
    long deadline = System.currentTimeMillis() + 3_600_000;
    while (!waiting.isEmpty()) {
      check(client, deadline, "the snapshot of " + waiting.size() + " tables");
      for (var it = waiting.entrySet().iterator(); it.hasNext(); ) {
        Map.Entry<String, Long> table = it.next();
        Table loaded = catalog.loadTable(TableIdentifier.of("cdc", table.getKey()));
        Snapshot current = loaded.currentSnapshot();
        if (current != null && records(current) >= table.getValue()) {
          for (Snapshot snapshot : loaded.snapshots()) {
            if (records(snapshot) >= table.getValue()) {
              last = Math.max(last, snapshot.timestampMillis());
              break;
            }
          }
          it.remove();
        } else {
          // The next look starts at this table: one table loaded a second while the job works,
          // not all of them (the times are the snapshots', whenever they are seen).
          break;
        }
      }
      Thread.sleep(1000);
    }
    return last;
  }

  /**
   * Waits until each table's snapshots reach its mark; returns when the last of them was committed.
   */
  private static long awaitHeld(JobClient client, Catalog catalog, Map<String, Long> marks)
      throws Exception {
    Map<String, Long> waiting = new LinkedHashMap<>(marks);
    long last = 0;
    long deadline = System.currentTimeMillis() + 3_600_000;
    while (!waiting.isEmpty()) {
      check(client, deadline, "the changes of " + waiting.size() + " tables");
      for (var it = waiting.entrySet().iterator(); it.hasNext(); ) {
        Map.Entry<String, Long> table = it.next();
        long heldAt = 0;
        for (Snapshot snapshot :
            catalog.loadTable(TableIdentifier.of("cdc", table.getKey())).snapshots()) {
          String position = snapshot.summary().get(SnapshotSummaryKeys.SOURCE_POSITION);
          if (position != null
              && position.startsWith("lsn=")
              && Long.compareUnsigned(
                      SourceSequence.parseLsn(position.substring(4).split(" ")[0]),
                      table.getValue())
                  >= 0
              && (heldAt == 0 || snapshot.timestampMillis() < heldAt)) {
            heldAt = snapshot.timestampMillis();
          }
        }
        if (heldAt > 0) {
          last = Math.max(last, heldAt);
          it.remove();
        } else {
          break;
        }
      }
      Thread.sleep(1000);
    }
    return last;
  }

  private static void check(JobClient client, long deadline, String what) throws Exception {
    if (client.getJobStatus().get().isGloballyTerminalState()) {
      client.getJobExecutionResult().get();
      throw new IllegalStateException("the capture job ended: " + client.getJobStatus().get());
    }
    if (System.currentTimeMillis() > deadline) {
      throw new IllegalStateException(what + " did not reach Iceberg within an hour");
    }
  }

  private static long records(Snapshot snapshot) {
    return Long.parseLong(snapshot.summary().getOrDefault("total-records", "0"));
  }

  /**
   * The size of the newest completed checkpoint's directory (the hashmap backend writes full ones).
   */
  private static long lastCheckpointBytes(Path checkpoints) throws IOException {
    Path newest = null;
    long newestId = -1;
    try (Stream<Path> jobs = Files.list(checkpoints)) {
      for (Path jobDir : jobs.toList()) {
        try (Stream<Path> entries = Files.list(jobDir)) {
          for (Path entry : entries.toList()) {
            String name = entry.getFileName().toString();
            if (name.startsWith("chk-") && Files.exists(entry.resolve("_metadata"))) {
              long id = Long.parseLong(name.substring(4));
              if (id > newestId) {
                newestId = id;
                newest = entry;
              }
            }
          }
        }
      }
    }
    if (newest == null) {
      return 0;
    }
    try (Stream<Path> files = Files.walk(newest)) {
      return files.filter(Files::isRegularFile).mapToLong(p -> p.toFile().length()).sum();
    }
  }

  /** Compares every Iceberg table with its source table, row by row; fails if one differs. */
  private static String compare(Connection connection, Catalog catalog, List<String> names)
      throws Exception {
    long totalRows = 0;
    for (String name : names) {
      RowsDigest source = RowsDigest.of(connection, "bench." + name);
      RowsDigest iceberg = RowsDigest.of(catalog.loadTable(TableIdentifier.of("cdc", name)));
      if (!iceberg.equals(source)) {
        throw new IllegalStateException(
            String.format(
                "Iceberg table cdc.%s differs from its source: %d rows with digest %016x, against"
                    + " %d with %016x",
                name, iceberg.rows(), iceberg.digest(), source.rows(), source.digest()));
      }
      totalRows += source.rows();
    }
    return String.format(
        Locale.ROOT,
        "every one of the %d Iceberg tables equals its source table (%,d rows in all; every row's"
            + " id, v and n compared, by a digest of the table's rows)",
        names.size(),
        totalRows);
  }

  /**
   * The rows of a table of the benchmark ({@code id bigint, v text, n bigint}) as their count and
   * the sum of a 64-bit hash of each row: equal for two tables of the same rows in any order, and
   * for two of different rows only by a chance of about one in 2<sup>64</sup>.
   */
  record RowsDigest(long rows, long digest) {

    static RowsDigest of(Connection connection, String table) throws SQLException {
      long rows = 0;
      long digest = 0;
      try (Statement statement = connection.createStatement();
          ResultSet result = statement.executeQuery("SELECT id, v, n FROM " + table)) {
        while (result.next()) {
          rows++;
          digest += hash(result.getLong(1), result.getString(2), result.getLong(3));
        }
      }
      return new RowsDigest(rows, digest);
    }

    static RowsDigest of(Table table) throws java.io.IOException {
      long rows = 0;
      long digest = 0;
      try (org.apache.iceberg.io.CloseableIterable<org.apache.iceberg.data.Record> records =
          org.apache.iceberg.data.IcebergGenerics.read(table).build()) {
        for (org.apache.iceberg.data.Record record : records) {
          rows++;
          digest +=
              hash(
                  (Long) record.getField("id"),
                  (String) record.getField("v"),
                  (Long) record.getField("n"));
        }
      }
      return new RowsDigest(rows, digest);
    }

    private static long hash(long id, String v, long n) {
      byte[] text = (id + "|" + v + "|" + n).getBytes(StandardCharsets.UTF_8);
      return io.icebergcdc.cdc.RowKey.hash64(text, text.length);
    }
  }

  private String report(List<Result> results) {
    StringBuilder out = new StringBuilder();
    out.append("# One capture job over a PostgreSQL schema of many tables\n\n");
    out.append(
        String.format(
            Locale.ROOT,
            "`bash bench/database.sh --tables %d --large %d --large-rows %d --small-rows %d"
                + " --rounds %d --batch %d --parallelism %d --checkpoint-interval %s%s%s%s%s%s`,"
                + " %s.\n\n",
            tables,
            large,
            largeRows,
            smallRows,
            rounds,
            batch,
            parallelism,
            TimeUtils.formatWithHighestUnit(interval).replace(" ", ""),
            rest
                ? " --catalog "
                    + (s3 ? "rest-s3 --s3-latency " + s3Latency.toMillis() + "ms" : "rest")
                    + " --atomic-commits "
                    + atomicCommits
                : "",
            distribution == io.icebergcdc.sink.Distribution.PRIMARY_KEY
                ? ""
                : " --distribution " + distribution.name().toLowerCase(Locale.ROOT),
            (partitionBy == null ? "" : " --partition-by '" + partitionBy + "'")
                + (deleteMode == io.icebergcdc.sink.DeleteMode.POSITION
                    ? ""
                    : " --delete-mode " + deleteMode.name().toLowerCase(Locale.ROOT)),
            idleSeconds > 0 ? " --idle-seconds " + idleSeconds : "",
            only.equals("both") ? "" : " --only " + only,
            LocalDate.now()));
    if (!givenSinkOptions.isEmpty()) {
      out.append(
          "With sink options set as system properties: `BENCH_JAVA_OPTS='"
              + BenchJobs.asSystemProperties(givenSinkOptions)
              + "'`.\n\n");
    }
    out.append(
        "| run | tables | rows | operators | job vertices | tasks | snapshot s | snapshot rows/s"
            + " | changes | written in s | applied in s | changes/s | threads (peak, added) | heap after"
            + " GC (MB) | last"
            + " checkpoint (KB) |\n");
    out.append(
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    out.append(" ---: | ---: | ---: |\n");
    for (Result r : results) {
      out.append(
          String.format(
              Locale.ROOT,
              "| %s | %d | %,d | %d | %d | %d | %.1f | %,.0f | %,d | %.1f | %.1f | %,.0f | %d | %,d |"
                  + " %,d |\n",
              r.name(),
              r.tables(),
              r.rows(),
              r.operators(),
              r.vertices(),
              r.tasks(),
              r.snapshotSeconds(),
              r.rows() / r.snapshotSeconds(),
              r.changes(),
              r.writeSeconds(),
              r.changesSeconds(),
              r.changes() / r.changesSeconds(),
              r.threadsPeak(),
              r.heapBytes() >> 20,
              r.checkpointBytes() >> 10));
    }
    out.append('\n');
    if (results.size() == 2) {
      Result many = results.get(0);
      Result one = results.get(1);
      out.append(
          String.format(
              Locale.ROOT,
              "Many tables against one: snapshot rows/s %.2fx, changes/s %.2fx; heap %+,d MB and"
                  + " checkpoint %+,d KB in all, %+.1f KB heap and %+.1f KB checkpoint per"
                  + " table.\n\n",
              one.snapshotSeconds() / many.snapshotSeconds(),
              one.changesSeconds() / many.changesSeconds(),
              (many.heapBytes() - one.heapBytes()) >> 20,
              (many.checkpointBytes() - one.checkpointBytes()) >> 10,
              (many.heapBytes() - one.heapBytes()) / 1024.0 / many.tables(),
              (many.checkpointBytes() - one.checkpointBytes()) / 1024.0 / many.tables()));
    }
    for (Result r : results) {
      if (r.idleCpuSeconds() >= 0) {
        out.append(
            String.format(
                Locale.ROOT,
                "Idle for %d s after its changes were applied, the %s run's process (the job and"
                    + " the benchmark's sleeping thread) used %.1f CPU s, %.2f a minute; its heap"
                    + " after GC at the end, %,d MB.\n",
                idleSeconds,
                r.name(),
                r.idleCpuSeconds(),
                r.idleCpuSeconds() * 60 / idleSeconds,
                r.idleHeapBytes() >> 20));
      }
    }
    if (idleSeconds > 0) {
      out.append('\n');
    }
    for (Result r : results) {
      out.append("Checked at the end of the ").append(r.name()).append(" run: ");
      out.append(r.check()).append(".\n");
    }
    return out.toString();
  }
}
