package io.icebergcdc.bench;

import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.ChangeSchema;
import io.icebergcdc.cdc.Operation;
import io.icebergcdc.cdc.SourceSequence;
import io.icebergcdc.cdc.typeutils.ChangeEventTypeInfo;
import io.icebergcdc.jobs.ApplyPipeline;
import io.icebergcdc.sink.DeleteMode;
import io.icebergcdc.sink.IcebergCdcSink;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.types.RowKind;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.flink.CatalogLoader;
import org.apache.iceberg.flink.FlinkSchemaUtil;
import org.apache.iceberg.flink.TableLoader;
import org.apache.iceberg.flink.sink.FlinkSink;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.types.Types;

/**
 * Applies one generated stream of upserts to Iceberg several ways, side by side in one run, and
 * reads the resulting tables back:
 *
 * <ul>
 *   <li>this project's sink with position deletes (the default) and with equality deletes;
 *   <li>Iceberg's own {@code FlinkSink} in upsert mode;
 *   <li>Iceberg's {@code FlinkSink} appending as many rows (the practical ceiling of any writer);
 *   <li>a plain table holding only the final rows, whose read time is the reference.
 * </ul>
 *
 * <p>The upserts go to {@code keys} keys in order: change {@code i} sets key {@code (i * 7919) mod
 * keys}, so every key is updated about {@code changes / keys} times. All jobs read the same
 * generated sequence with a source of parallelism 1 and write with the same parallelism and
 * checkpoint interval.
 */
public final class ApplyBenchmark {

  private static final Schema SCHEMA =
      new Schema(
          List.of(
              Types.NestedField.required(1, "id", Types.LongType.get()),
              Types.NestedField.optional(2, "payload", Types.StringType.get()),
              Types.NestedField.optional(3, "amount", Types.LongType.get()),
              Types.NestedField.optional(4, "seq", Types.LongType.get())),
          java.util.Set.of(1));

  private final long changes;
  private final long keys;
  private final int parallelism;
  static long checkpointMillis = 2_000;
  private final Path warehouse;
  private final CatalogLoader catalogLoader;
  static String stateBackend = System.getProperty("bench.state-backend", "hashmap");
  private final Catalog catalog;

  private ApplyBenchmark(long changes, long keys, int parallelism, Path warehouse) {
    this.changes = changes;
    this.keys = keys;
    this.parallelism = parallelism;
    this.warehouse = warehouse;
    this.catalogLoader = ApplyPipeline.catalogLoader(warehouse.toString(), Map.of());
    this.catalog = catalogLoader.loadCatalog();
  }

  public static void main(String[] args) throws Exception {
    Map<String, String> options = new LinkedHashMap<>();
    for (int i = 0; i + 1 < args.length; i += 2) {
      options.put(args[i].replaceFirst("^--", ""), args[i + 1]);
    }
    long changes = Long.parseLong(options.getOrDefault("changes", "2000000"));
    long keys = Long.parseLong(options.getOrDefault("keys", "200000"));
    int parallelism = Integer.parseInt(options.getOrDefault("parallelism", "2"));
    checkpointMillis =
        org.apache.flink.util.TimeUtils.parseDuration(
                options.getOrDefault("checkpoint-interval", "2s"))
            .toMillis();
    Path out =
        Paths.get(options.getOrDefault("out", "bench/results/apply-" + LocalDate.now() + ".md"));
    Path warehouse = Files.createTempDirectory("iceberg-cdc-bench");
    ApplyBenchmark benchmark = new ApplyBenchmark(changes, keys, parallelism, warehouse);
    String only = options.get("only");
    if (only != null) {
      // One writer, after the warm-up, without reads: for profiling.
      benchmark.warmUp();
      benchmark.single(only);
    } else {
      benchmark.run(out);
    }
  }

  private record Result(String name, long changes, double applySeconds, Table table) {}

  private void run(Path out) throws Exception {
    warmUp();
    List<Result> results = new ArrayList<>();
    results.add(ours("iceberg-cdc, position deletes", "ours_position", DeleteMode.POSITION, 2));
    results.add(ours("iceberg-cdc, deletion vectors (v3)", "ours_dv", DeleteMode.POSITION, 3));
    results.add(ours("iceberg-cdc, equality deletes", "ours_equality", DeleteMode.EQUALITY, 2));
    results.add(icebergUpsert());
    results.add(icebergAppend());
    PaimonResult paimon = paimon();
    Table plain = plainTable();

    double plainRead = readSeconds(plain, keys);
    StringBuilder report = new StringBuilder();
    report.append(
        String.format(
            Locale.ROOT,
            "Apply benchmark, %s: %,d upserts over %,d keys, parallelism %d, checkpoints every"
                + " %d ms; %d cores, Java %s.%n%n",
            LocalDate.now(),
            changes,
            keys,
            parallelism,
            checkpointMillis,
            Runtime.getRuntime().availableProcessors(),
            System.getProperty("java.version")));
    report.append(
        "| writer | changes/s | table read (s) | read vs plain | data files | delete files"
            + " (equality) |\n");
    report.append("| --- | ---: | ---: | ---: | ---: | ---: |\n");
    for (Result r : results) {
      boolean append = r.name().contains("append");
      double read = readSeconds(r.table(), append ? changes : keys);
      long[] files = files(r.table());
      report.append(
          String.format(
              Locale.ROOT,
              "| %s | %,.0f | %.2f | %s | %d | %d (%d) |%n",
              r.name(),
              r.changes() / r.applySeconds(),
              read,
              append
                  ? "(all " + changes + " rows)"
                  : String.format(Locale.ROOT, "%.2fx", read / plainRead),
              files[0],
              files[1],
              files[2]));
    }
    report.append(
        String.format(
            Locale.ROOT,
            "| Paimon 1.3, primary-key table, %d buckets (its own format, read by its own"
                + " reader) | %,.0f | %.2f | %.2fx | %d | - |%n",
            parallelism,
            paimon.changes() / paimon.applySeconds(),
            paimon.readSeconds(),
            paimon.readSeconds() / plainRead,
            paimon.dataFiles()));
    report.append(
        String.format(
            Locale.ROOT,
            "| plain table of the final rows | - | %.2f | 1.00x | %d | 0 |%n",
            plainRead,
            files(plain)[0]));
    report.append(
        String.format(
            Locale.ROOT,
            "%nState per key of iceberg-cdc in position mode, as its serializers write it: %s.%n",
            StateSize.describe(catalog.loadTable(TableIdentifier.of("bench", "ours_position")))));
    System.out.print(report);
    Files.createDirectories(out.toAbsolutePath().getParent());
    Files.writeString(out, report.toString(), StandardCharsets.UTF_8);
    System.out.println("\nWritten to " + out);
  }

  private Result single(String writer) throws Exception {
    switch (writer) {
      case "ours-position":
        return ours("iceberg-cdc, position deletes", "ours_position", DeleteMode.POSITION, 2);
      case "ours-dv":
        return ours("iceberg-cdc, deletion vectors (v3)", "ours_dv", DeleteMode.POSITION, 3);
      case "ours-equality":
        return ours("iceberg-cdc, equality deletes", "ours_equality", DeleteMode.EQUALITY, 2);
      case "iceberg-upsert":
        return icebergUpsert();
      case "iceberg-append":
        return icebergAppend();
      case "paimon":
        paimon();
        return null;
      case "ours-dv-disordered":
        Result result =
            ours(
                "iceberg-cdc, deletion vectors (v3), 10% out of order, 2% twice",
                "ours_dv_disordered", DeleteMode.POSITION, 3, true);
        double read = readSeconds(result.table(), keys);
        System.out.printf(Locale.ROOT, "  table read %.2f s (%d rows)%n", read, keys);
        return result;
      default:
        throw new IllegalArgumentException(
            "--only takes ours-position, ours-dv, ours-dv-disordered, ours-equality,"
                + " iceberg-upsert, iceberg-append or paimon, not "
                + writer);
    }
  }

  /** Runs each kind of job once on a tenth of the input, so that no measured run pays for JIT. */
  private void warmUp() throws Exception {
    ApplyBenchmark small =
        new ApplyBenchmark(Math.max(1, changes / 10), keys, parallelism, warehouse);
    small.ours("warm-up", "warm_up_ours", DeleteMode.POSITION, 3);
    small.icebergUpsert();
  }

  private Table create(String name, int formatVersion) {
    TableIdentifier id = TableIdentifier.of("bench", name);
    if (catalog.tableExists(id)) {
      catalog.dropTable(id, true);
    }
    return catalog.createTable(
        id,
        SCHEMA,
        PartitionSpec.unpartitioned(),
        Map.of(TableProperties.FORMAT_VERSION, Integer.toString(formatVersion)));
  }

  private StreamExecutionEnvironment env() {
    Configuration config = new Configuration();
    config.set(
        org.apache.flink.configuration.CheckpointingOptions.CHECKPOINT_STORAGE, "filesystem");
    config.set(
        org.apache.flink.configuration.CheckpointingOptions.CHECKPOINTS_DIRECTORY,
        warehouse.resolveSibling(warehouse.getFileName() + "-checkpoints").toUri().toString());
    config.set(org.apache.flink.configuration.StateBackendOptions.STATE_BACKEND, stateBackend);
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(config);
    env.setParallelism(parallelism);
    env.getConfig().enableObjectReuse();
    env.enableCheckpointing(checkpointMillis);
    return env;
  }

  private Result ours(String label, String name, DeleteMode mode, int formatVersion)
      throws Exception {
    return ours(label, name, mode, formatVersion, false);
  }

  /**
   * @param disordered whether the changes arrive 10% out of order and 2% twice (the sequence column
   *     orders them, so the final table is the same)
   */
  private Result ours(
      String label, String name, DeleteMode mode, int formatVersion, boolean disordered)
      throws Exception {
    Table table = create(name, formatVersion);
    StreamExecutionEnvironment env = env();
    ChangeSchema schema = new ChangeSchema(table.schema());
    DataStream<ChangeEvent> changesStream =
        env.fromSequence(0, changes - 1)
            .setParallelism(1)
            .flatMap(new ToChangeEvents(schema, keys, disordered, changes))
            .returns(ChangeEventTypeInfo.of(schema))
            .setParallelism(1);
    Configuration options = new Configuration();
    options.setString("sink.delete-mode", mode.name());
    IcebergCdcSink.builder()
        .table(TableLoader.fromCatalog(catalogLoader, TableIdentifier.of("bench", name)))
        .options(options)
        .build()
        .apply(changesStream);
    return timed(label, env, changes, table);
  }

  private Result icebergUpsert() throws Exception {
    Table table = create("iceberg_upsert", 2);
    StreamExecutionEnvironment env = env();
    FlinkSink.forRowData(rows(env, 0, changes - 1, keys))
        .tableLoader(
            TableLoader.fromCatalog(catalogLoader, TableIdentifier.of("bench", "iceberg_upsert")))
        .upsert(true)
        .equalityFieldColumns(List.of("id"))
        .writeParallelism(parallelism)
        .append();
    return timed("Iceberg FlinkSink, upsert", env, changes, table);
  }

  private Result icebergAppend() throws Exception {
    Table table = create("iceberg_append", 2);
    StreamExecutionEnvironment env = env();
    FlinkSink.forRowData(rows(env, 0, changes - 1, Long.MAX_VALUE))
        .tableLoader(
            TableLoader.fromCatalog(catalogLoader, TableIdentifier.of("bench", "iceberg_append")))
        .writeParallelism(parallelism)
        .append();
    return timed("Iceberg FlinkSink, append (ceiling)", env, changes, table);
  }

  private record PaimonResult(
      long changes, double applySeconds, double readSeconds, long dataFiles) {}

  /**
   * The same upserts into a Paimon primary-key table (deduplicate merge engine: the last row of a
   * key wins) with one bucket per writer, written by Paimon's own Flink sink with the same
   * parallelism and checkpoints, and read back whole by Paimon's reader.
   */
  private PaimonResult paimon() throws Exception {
    org.apache.paimon.catalog.Catalog paimonCatalog =
        org.apache.paimon.catalog.CatalogFactory.createCatalog(
            org.apache.paimon.catalog.CatalogContext.create(
                new org.apache.paimon.fs.Path(warehouse.resolve("paimon").toUri())));
    org.apache.paimon.catalog.Identifier id =
        org.apache.paimon.catalog.Identifier.create("bench", "paimon");
    paimonCatalog.createDatabase("bench", true);
    paimonCatalog.dropTable(id, true);
    paimonCatalog.createTable(
        id,
        org.apache.paimon.schema.Schema.newBuilder()
            .column("id", org.apache.paimon.types.DataTypes.BIGINT().notNull())
            .column("payload", org.apache.paimon.types.DataTypes.STRING())
            .column("amount", org.apache.paimon.types.DataTypes.BIGINT())
            .column("seq", org.apache.paimon.types.DataTypes.BIGINT())
            .primaryKey("id")
            .option("bucket", Integer.toString(parallelism))
            .build(),
        false);
    org.apache.paimon.table.Table table = paimonCatalog.getTable(id);
    StreamExecutionEnvironment env = env();
    new org.apache.paimon.flink.sink.FlinkSinkBuilder(table)
        .forRowData(rows(env, 0, changes - 1, keys))
        .parallelism(parallelism)
        .build();
    System.out.println("Running: Paimon");
    long start = System.nanoTime();
    env.execute("Paimon primary-key table");
    double seconds = (System.nanoTime() - start) / 1e9;
    System.out.printf(Locale.ROOT, "  %.1f s, %,.0f changes/s%n", seconds, changes / seconds);

    table = paimonCatalog.getTable(id);
    double best = Double.MAX_VALUE;
    long files = 0;
    for (int run = 0; run < 3; run++) {
      long begin = System.nanoTime();
      org.apache.paimon.table.source.ReadBuilder read = table.newReadBuilder();
      List<org.apache.paimon.table.source.Split> splits = read.newScan().plan().splits();
      long[] rows = {0};
      try (org.apache.paimon.reader.RecordReader<org.apache.paimon.data.InternalRow> reader =
          read.newRead().createReader(splits)) {
        reader.forEachRemaining(row -> rows[0]++);
      }
      best = Math.min(best, (System.nanoTime() - begin) / 1e9);
      if (rows[0] != keys) {
        throw new IllegalStateException("Paimon has " + rows[0] + " rows, expected " + keys);
      }
      files = 0;
      for (org.apache.paimon.table.source.Split split : splits) {
        files += ((org.apache.paimon.table.source.DataSplit) split).dataFiles().size();
      }
    }
    paimonCatalog.close();
    return new PaimonResult(changes, seconds, best, files);
  }

  /** The final rows of the upserts, appended once: what a perfectly compacted table holds. */
  private Table plainTable() throws Exception {
    Table table = create("plain", 2);
    StreamExecutionEnvironment env = env();
    FlinkSink.forRowData(rows(env, Math.max(0, changes - keys), changes - 1, keys))
        .tableLoader(TableLoader.fromCatalog(catalogLoader, TableIdentifier.of("bench", "plain")))
        .writeParallelism(parallelism)
        .append();
    env.execute("plain table");
    table.refresh();
    return table;
  }

  /** Changes {@code first} to {@code last} as Flink rows, read with parallelism 1. */
  private static DataStream<RowData> rows(
      StreamExecutionEnvironment env, long first, long last, long keys) {
    RowType rowType = FlinkSchemaUtil.convert(SCHEMA);
    return env.fromSequence(first, last)
        .setParallelism(1)
        .map(new ToRow(keys))
        .returns(InternalTypeInfo.of(rowType))
        .setParallelism(1);
  }

  private Result timed(String name, StreamExecutionEnvironment env, long count, Table table)
      throws Exception {
    System.out.println("Running: " + name);
    long start = System.nanoTime();
    env.execute(name);
    double seconds = (System.nanoTime() - start) / 1e9;
    table.refresh();
    System.out.printf(Locale.ROOT, "  %.1f s, %,.0f changes/s%n", seconds, count / seconds);
    return new Result(name, count, seconds, table);
  }

  /** The best of three full reads through Iceberg's generic reader, deletes applied. */
  private static double readSeconds(Table table, long expectedRows) throws IOException {
    double best = Double.MAX_VALUE;
    for (int run = 0; run < 3; run++) {
      long start = System.nanoTime();
      long rows = 0;
      try (CloseableIterable<Record> records = IcebergGenerics.read(table).build()) {
        for (Record ignored : records) {
          rows++;
        }
      }
      best = Math.min(best, (System.nanoTime() - start) / 1e9);
      if (rows != expectedRows) {
        throw new IllegalStateException(
            table.name() + " has " + rows + " rows, expected " + expectedRows);
      }
    }
    return best;
  }

  /** Data files, delete files and equality delete files of the table's current snapshot. */
  private static long[] files(Table table) throws IOException {
    long data = 0;
    java.util.Set<String> deletes = new java.util.HashSet<>();
    long equality = 0;
    try (CloseableIterable<FileScanTask> tasks = table.newScan().planFiles()) {
      for (FileScanTask task : tasks) {
        data++;
        for (DeleteFile delete : task.deletes()) {
          if (deletes.add(delete.location())
              && delete.content() == org.apache.iceberg.FileContent.EQUALITY_DELETES) {
            equality++;
          }
        }
      }
    }
    return new long[] {data, deletes.size(), equality};
  }

  static long keyOf(long i, long keys) {
    return keys == Long.MAX_VALUE ? i : Math.floorMod(i * 7919L, keys);
  }

  /**
   * The changes as the job receives them: in order, or with one change in ten delivered ten places
   * late (in each block of 20, the 4th and the 14th swap) and one in fifty delivered twice.
   */
  static final class ToChangeEvents
      implements org.apache.flink.api.common.functions.FlatMapFunction<Long, ChangeEvent> {
    private static final long serialVersionUID = 1L;
    private final ChangeSchema schema;
    private final long keys;
    private final boolean disordered;
    private final long changes;

    ToChangeEvents(ChangeSchema schema, long keys, boolean disordered, long changes) {
      this.schema = schema;
      this.keys = keys;
      this.disordered = disordered;
      this.changes = changes;
    }

    @Override
    public void flatMap(Long delivered, org.apache.flink.util.Collector<ChangeEvent> out) {
      long i = delivered;
      if (disordered) {
        // Change j and change j + keys set the same key: for one j in ten, the later one comes
        // first and the earlier one, now stale, a round of all keys later.
        boolean evenRound = (delivered / keys) % 2 == 0;
        if (evenRound && delivered % 10 == 3 && delivered + keys < changes) {
          i = delivered + keys;
        } else if (!evenRound && (delivered - keys) % 10 == 3) {
          i = delivered - keys;
        }
      }
      GenericRowData row = row(i, keys);
      ChangeEvent change =
          new ChangeEvent(
              "bench",
              Operation.UPDATE,
              schema.keyOf(row),
              null,
              row,
              SourceSequence.column(i),
              0L);
      out.collect(change);
      if (disordered && delivered % 50 == 7) {
        GenericRowData copy = row(i, keys);
        out.collect(
            new ChangeEvent(
                "bench",
                Operation.UPDATE,
                schema.keyOf(copy),
                null,
                copy,
                SourceSequence.column(i),
                0L));
      }
    }
  }

  /** Change {@code i} as a Flink row: an upsert for Iceberg's upsert mode, else an insert. */
  static final class ToRow implements MapFunction<Long, RowData> {
    private static final long serialVersionUID = 1L;
    private final long keys;

    ToRow(long keys) {
      this.keys = keys;
    }

    @Override
    public RowData map(Long i) {
      GenericRowData row = row(i, keys);
      row.setRowKind(keys == Long.MAX_VALUE ? RowKind.INSERT : RowKind.UPDATE_AFTER);
      return row;
    }
  }

  static GenericRowData row(long i, long keys) {
    return GenericRowData.of(
        keyOf(i, keys), StringData.fromString("payload-" + i + "-" + (i * 31 % 1000)), i * 3, i);
  }
}
