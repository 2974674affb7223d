package io.icebergcdc.bench;

import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.ChangeSchema;
import io.icebergcdc.sink.CatalogDefinition;
import io.icebergcdc.sink.DeleteMode;
import io.icebergcdc.sink.IcebergCdcSink;
import java.nio.file.Path;
import java.util.Map;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.data.RowData;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.flink.CatalogLoader;
import org.apache.iceberg.flink.TableLoader;
import org.apache.iceberg.flink.sink.FlinkSink;
import org.apache.paimon.catalog.CatalogContext;
import org.apache.paimon.catalog.CatalogFactory;
import org.apache.paimon.catalog.Identifier;
import org.apache.paimon.flink.sink.FlinkSinkBuilder;
import org.apache.paimon.types.DataTypes;

/**
 * Builds the benchmarks' jobs: each writer's, on a new table of a warehouse in a temporary folder,
 * all with the same parallelism, checkpoint interval and state backend, on a local MiniCluster. The
 * input comes from a source of parallelism 1 ({@link GeneratedChanges}, {@link DebeziumInput}).
 */
final class BenchJobs implements AutoCloseable {

  /** The state backend, {@code hashmap} unless the JVM is given {@code -Dbench.state-backend}. */
  static final String STATE_BACKEND = System.getProperty("bench.state-backend", "hashmap");

  private final Path warehouse;
  private final int parallelism;
  private final long checkpointMillis;
  private final CatalogLoader catalogLoader;
  private final Catalog catalog;
  private final org.apache.paimon.catalog.Catalog paimonCatalog;

  BenchJobs(Path warehouse, int parallelism, long checkpointMillis) {
    this.warehouse = warehouse;
    this.parallelism = parallelism;
    this.checkpointMillis = checkpointMillis;
    this.catalogLoader = CatalogDefinition.hadoop(warehouse.toString()).loader();
    this.catalog = catalogLoader.loadCatalog();
    this.paimonCatalog =
        CatalogFactory.createCatalog(
            CatalogContext.create(
                new org.apache.paimon.fs.Path(warehouse.resolve("paimon").toUri())));
  }

  int parallelism() {
    return parallelism;
  }

  long checkpointMillis() {
    return checkpointMillis;
  }

  /** A job ready to execute and the table it writes. */
  record Job(StreamExecutionEnvironment env, BenchTable table) {}

  /** The job of {@code writer} applying {@code input} to a new table called {@code name}. */
  Job job(Writer writer, Input input, String name) throws Exception {
    StreamExecutionEnvironment env = env();
    BenchTable table;
    switch (writer) {
      case OURS_DV -> table = ours(env, input, name, DeleteMode.POSITION, 3);
      case OURS_POSITION -> table = ours(env, input, name, DeleteMode.POSITION, 2);
      case OURS_EQUALITY -> table = ours(env, input, name, DeleteMode.EQUALITY, 2);
      case ICEBERG_UPSERT -> table = icebergUpsert(env, input, name);
      case ICEBERG_APPEND ->
          table =
              icebergAppend(
                  env,
                  name,
                  input,
                  GeneratedChanges.rows(env, input.appended(), 0, input.changes() - 1, true));
      case PLAIN ->
          table =
              icebergAppend(
                  env,
                  name,
                  input,
                  GeneratedChanges.rows(
                      env, input, input.firstFinalChange(), input.changes() - 1, true));
      case PAIMON -> table = paimon(env, input, name);
      default -> throw new IllegalArgumentException(writer.id());
    }
    return new Job(env, table);
  }

  private StreamExecutionEnvironment env() {
    Configuration config = new Configuration();
    config.set(CheckpointingOptions.CHECKPOINT_STORAGE, "filesystem");
    config.set(
        CheckpointingOptions.CHECKPOINTS_DIRECTORY,
        warehouse.resolveSibling(warehouse.getFileName() + "-checkpoints").toUri().toString());
    config.set(StateBackendOptions.STATE_BACKEND, STATE_BACKEND);
    CheckpointSizeReporter.configure(config);
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(config);
    env.setParallelism(parallelism);
    env.getConfig().enableObjectReuse();
    env.enableCheckpointing(checkpointMillis);
    return env;
  }

  private Table create(String name, Input input, int formatVersion) {
    TableIdentifier id = TableIdentifier.of("bench", name);
    if (catalog.tableExists(id)) {
      catalog.dropTable(id, true);
    }
    return catalog.createTable(
        id,
        input.workload().schema(),
        input.workload().spec(),
        Map.of(TableProperties.FORMAT_VERSION, Integer.toString(formatVersion)));
  }

  private TableLoader loader(String name) {
    return TableLoader.fromCatalog(catalogLoader, TableIdentifier.of("bench", name));
  }

  private static final String SINK_OPTION_PREFIX = "bench.sink.";

  /**
   * For experiments: the sink options given as system properties {@code
   * bench.sink.<option>=<value>} ({@code BENCH_JAVA_OPTS}), by option; they override the
   * benchmark's own.
   */
  static java.util.SortedMap<String, String> sinkOptionsOfSystemProperties() {
    java.util.SortedMap<String, String> given = new java.util.TreeMap<>();
    for (String property : System.getProperties().stringPropertyNames()) {
      if (property.startsWith(SINK_OPTION_PREFIX)) {
        given.put(property.substring(SINK_OPTION_PREFIX.length()), System.getProperty(property));
      }
    }
    return given;
  }

  /** {@code options} as the {@code -D} flags that give them; "" for none. */
  static String asSystemProperties(java.util.Map<String, String> options) {
    StringBuilder flags = new StringBuilder();
    options.forEach(
        (option, value) ->
            flags
                .append(flags.length() == 0 ? "" : " ")
                .append("-D")
                .append(SINK_OPTION_PREFIX)
                .append(option)
                .append('=')
                .append(value));
    return flags.toString();
  }

  private BenchTable ours(
      StreamExecutionEnvironment env, Input input, String name, DeleteMode mode, int version) {
    Table table = create(name, input, version);
    ChangeSchema schema = new ChangeSchema(table.schema());
    DataStream<ChangeEvent> changes =
        input.workload() == Workload.DEBEZIUM_JSON
            ? DebeziumInput.events(env, input, schema)
            : GeneratedChanges.events(env, input, schema);
    Configuration options = new Configuration();
    options.setString("sink.delete-mode", mode.name());
    sinkOptionsOfSystemProperties().forEach(options::setString);
    IcebergCdcSink.builder().table(loader(name)).options(options).build().apply(changes);
    return new IcebergBenchTable(table);
  }

  /** Iceberg's upsert mode, with the key (and the partition column) as equality fields. */
  private BenchTable icebergUpsert(StreamExecutionEnvironment env, Input input, String name) {
    Table table = create(name, input, 2);
    FlinkSink.forRowData(peerRows(env, input))
        .tableLoader(loader(name))
        .upsert(true)
        .equalityFieldColumns(input.workload().keyColumns())
        .writeParallelism(parallelism)
        .append();
    return new IcebergBenchTable(table);
  }

  private BenchTable icebergAppend(
      StreamExecutionEnvironment env, String name, Input input, DataStream<RowData> rows) {
    Table table = create(name, input, 2);
    FlinkSink.forRowData(rows).tableLoader(loader(name)).writeParallelism(parallelism).append();
    return new IcebergBenchTable(table);
  }

  /** The input as the peers take it: generated rows, or Debezium JSON parsed by Flink's format. */
  private static DataStream<RowData> peerRows(StreamExecutionEnvironment env, Input input) {
    return input.workload() == Workload.DEBEZIUM_JSON
        ? DebeziumInput.rows(env, input)
        : GeneratedChanges.rows(env, input, 0, input.changes() - 1, input.insertOnly());
  }

  /**
   * A Paimon primary-key table (deduplicate merge engine: the last row of a key wins) with one
   * bucket per writer (per partition, if partitioned), written by Paimon's own Flink sink.
   */
  private BenchTable paimon(StreamExecutionEnvironment env, Input input, String name)
      throws Exception {
    Identifier id = Identifier.create("bench", name);
    paimonCatalog.createDatabase("bench", true);
    paimonCatalog.dropTable(id, true);
    org.apache.paimon.schema.Schema.Builder schema =
        org.apache.paimon.schema.Schema.newBuilder()
            .column("id", DataTypes.BIGINT().notNull())
            .column("payload", DataTypes.STRING())
            .column("amount", DataTypes.BIGINT())
            .column("seq", DataTypes.BIGINT())
            .option("bucket", Integer.toString(parallelism));
    if (input.workload() == Workload.PARTITIONED) {
      schema.column("day", DataTypes.DATE().notNull()).partitionKeys("day");
    }
    paimonCatalog.createTable(id, schema.primaryKey(input.workload().keyColumns()).build(), false);
    new FlinkSinkBuilder(paimonCatalog.getTable(id))
        .forRowData(peerRows(env, input))
        .parallelism(parallelism)
        .build();
    return new PaimonBenchTable(paimonCatalog, id);
  }

  /** The Iceberg table called {@code name}. */
  Table icebergTable(String name) {
    return catalog.loadTable(TableIdentifier.of("bench", name));
  }

  @Override
  public void close() throws Exception {
    paimonCatalog.close();
  }
}
