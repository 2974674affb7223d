package io.icebergcdc.jobs;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.icebergcdc.cdc.BadRecordPolicy;
import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.ChangeSchema;
import io.icebergcdc.cdc.DeadLetter;
import io.icebergcdc.cdc.debezium.DebeziumJsonParseFunction;
import io.icebergcdc.cdc.debezium.DebeziumJsonParser;
import io.icebergcdc.cdc.debezium.DebeziumSchemas;
import io.icebergcdc.cdc.typeutils.ChangeEventTypeInfo;
import io.icebergcdc.commit.CommitListener;
import io.icebergcdc.sink.CdcTables;
import io.icebergcdc.sink.IcebergCdcSink;
import io.icebergcdc.sink.SinkOptions;
import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.serialization.SimpleStringEncoder;
import org.apache.flink.client.program.StreamContextEnvironment;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.ExternalizedCheckpointRetention;
import org.apache.flink.configuration.ReadableConfig;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.connector.file.sink.FileSink;
import org.apache.flink.connector.file.src.FileSource;
import org.apache.flink.connector.file.src.reader.TextLineInputFormat;
import org.apache.flink.core.fs.Path;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.filesystem.rollingpolicies.OnCheckpointRollingPolicy;
import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.flink.CatalogLoader;
import org.apache.iceberg.flink.TableLoader;

/**
 * Composes and runs an {@link ApplyJob}: a file source, the Debezium JSON parser, and the {@link
 * IcebergCdcSink} (dedup, writers, committer), with the dead-letter outputs of both going to a file
 * sink when one is asked for.
 */
public final class ApplyPipeline {

  private static final ObjectMapper MAPPER = new ObjectMapper();

  private final ApplyJob job;
  private final CommitListener commitListener;

  public ApplyPipeline(ApplyJob job, CommitListener commitListener) {
    this.job = job;
    this.commitListener = commitListener;
  }

  /** The catalog of the job's warehouse. */
  public static CatalogLoader catalogLoader(String warehouse, Map<String, String> properties) {
    Map<String, String> all = new HashMap<>(properties);
    all.put(CatalogProperties.WAREHOUSE_LOCATION, warehouse);
    return CatalogLoader.hadoop("iceberg_cdc", new org.apache.hadoop.conf.Configuration(), all);
  }

  /** Creates the table if it is missing, builds the job graph, and runs it to its end. */
  public JobExecutionResult run() throws Exception {
    CatalogLoader catalogLoader = catalogLoader(job.warehouse(), job.catalogProperties());
    Table table = createOrLoadTable(catalogLoader.loadCatalog());

    StreamExecutionEnvironment env =
        environment(
            job.parallelism(),
            job.checkpointInterval(),
            job.checkpointDirectory(),
            job.stateBackend(),
            job.restartAttempts(),
            null);

    ChangeSchema schema = new ChangeSchema(table.schema());
    String origin = Paths.get(job.changesFile()).getFileName().toString();
    BadRecordPolicy policy =
        job.deadLetterPath() == null ? BadRecordPolicy.FAIL : BadRecordPolicy.DEAD_LETTER;

    FileSource<String> source =
        FileSource.forRecordStreamFormat(
                new TextLineInputFormat(), new Path(Paths.get(job.changesFile()).toUri()))
            .build();
    SingleOutputStreamOperator<ChangeEvent> changes =
        env.fromSource(source, WatermarkStrategy.noWatermarks(), "changes file " + origin)
            .uid("file-source")
            .setParallelism(1)
            .process(
                new DebeziumJsonParseFunction(
                    schema, job.table().toString(), job.sequenceColumn(), origin, policy))
            .returns(ChangeEventTypeInfo.of(schema))
            .name("parse Debezium JSON")
            .uid("parse-debezium-json")
            .setParallelism(1);

    IcebergCdcSink sink =
        IcebergCdcSink.builder()
            .table(TableLoader.fromCatalog(catalogLoader, job.table()))
            .options(job.sinkOptions())
            .commitListener(commitListener)
            .build();
    DataStream<DeadLetter> refused = sink.apply(changes);
    if (job.deadLetterPath() != null) {
      writeDeadLetters(
          changes.getSideOutput(DebeziumJsonParseFunction.DEAD_LETTERS).union(refused),
          job.deadLetterPath());
    }
    return env.execute("iceberg-cdc apply " + origin + " -> " + job.table());
  }

  /**
   * The execution environment of a job: checkpoints at the interval into the directory (kept when
   * the job is cancelled, so that it can resume), the state backend, a fixed-delay restart
   * strategy, and object reuse.
   *
   * @param restoreFrom a checkpoint or savepoint to start from, or null
   */
  public static StreamExecutionEnvironment environment(
      int parallelism,
      Duration checkpointInterval,
      String checkpointDirectory,
      String stateBackend,
      int restartAttempts,
      String restoreFrom) {
    Configuration config = new Configuration();
    if (clusterConfiguration().isEmpty()) {
      // Embedded: this job's own settings. On a cluster its configuration decides, as for any
      // job submitted to it.
      config.set(RestartStrategyOptions.RESTART_STRATEGY, "fixed-delay");
      config.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS, restartAttempts);
      config.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_DELAY, Duration.ofMillis(200));
    }
    config.set(CheckpointingOptions.CHECKPOINT_STORAGE, "filesystem");
    config.set(CheckpointingOptions.CHECKPOINTS_DIRECTORY, directoryUri(checkpointDirectory));
    config.set(
        CheckpointingOptions.EXTERNALIZED_CHECKPOINT_RETENTION,
        ExternalizedCheckpointRetention.RETAIN_ON_CANCELLATION);
    if (stateBackend != null) {
      config.set(StateBackendOptions.STATE_BACKEND, stateBackend);
    }
    if (restoreFrom != null) {
      config.set(StateRecoveryOptions.SAVEPOINT_PATH, restoreFrom);
    }
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(config);
    env.setParallelism(parallelism);
    // No operator of the pipeline keeps or changes a record after passing it on, so chained
    // operators may hand records over without copying them.
    env.getConfig().enableObjectReuse();
    env.enableCheckpointing(checkpointInterval.toMillis());
    return env;
  }

  /**
   * The configuration of the cluster this program was submitted to by Flink's command-line front
   * end ({@code flink run}), or empty when it runs otherwise: on an embedded Flink of its own
   * ({@code java -jar}), or built by a program or test that owns its environment.
   */
  public static Optional<ReadableConfig> clusterConfiguration() {
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
    return env instanceof StreamContextEnvironment
        ? Optional.of(env.getConfiguration())
        : Optional.empty();
  }

  /** A directory given as a path or a URI, as a URI. */
  private static String directoryUri(String directory) {
    return directory.contains("://") || directory.startsWith("file:")
        ? directory
        : Paths.get(directory).toAbsolutePath().toUri().toString();
  }

  private Table createOrLoadTable(Catalog catalog) throws IOException {
    Schema schema = null;
    if (!catalog.tableExists(job.table())) {
      schema = schemaFromFirstEvent();
    }
    return CdcTables.createOrLoad(
        catalog, job.table(), schema, job.partitionBy(), job.formatVersion(), job.primaryKey());
  }

  /** The table schema that the Connect schema of the file's first event describes. */
  private Schema schemaFromFirstEvent() throws IOException {
    try (BufferedReader reader =
        Files.newBufferedReader(Paths.get(job.changesFile()), StandardCharsets.UTF_8)) {
      String line;
      int number = 0;
      while ((line = reader.readLine()) != null) {
        number++;
        if (line.isBlank()) {
          continue;
        }
        JsonNode root = DebeziumJsonParser.readTree(line, job.changesFile() + ":" + number);
        if (root.has("schema") && root.has("payload")) {
          return DebeziumSchemas.toIcebergSchema(root.get("schema"), job.primaryKey());
        }
        break;
      }
    }
    throw new IllegalArgumentException(
        "table "
            + job.table()
            + " does not exist and the first event of "
            + job.changesFile()
            + " carries no schema to create it from; create the table first, or write the"
            + " events with Debezium's schemas enabled");
  }

  /**
   * Applies the changes of several tables, each through its own {@link IcebergCdcSink} (dedup,
   * writers, committer) with operator uids prefixed by the table's name.
   *
   * @param changes each table's changes
   * @param deadLetters the dead letters so far, such as a parser's
   * @return those dead letters and the ones the sinks refused
   */
  public static DataStream<DeadLetter> applyToTables(
      Map<TableIdentifier, DataStream<ChangeEvent>> changes,
      CatalogLoader catalogLoader,
      Configuration sinkOptions,
      DataStream<DeadLetter> deadLetters) {
    for (Map.Entry<TableIdentifier, DataStream<ChangeEvent>> table : changes.entrySet()) {
      Configuration options = new Configuration(sinkOptions);
      options.set(SinkOptions.UID_PREFIX, table.getKey().toString());
      IcebergCdcSink sink =
          IcebergCdcSink.builder()
              .table(TableLoader.fromCatalog(catalogLoader, table.getKey()))
              .options(options)
              .build();
      deadLetters = deadLetters.union(sink.apply(table.getValue()));
    }
    return deadLetters;
  }

  /**
   * Writes dead letters as lines of JSON into files under a directory, finished with each
   * checkpoint.
   */
  public static void writeDeadLetters(DataStream<DeadLetter> deadLetters, String directory) {
    deadLetters
        .map(new DeadLetterToJson())
        .name("dead letters as JSON")
        .sinkTo(
            FileSink.forRowFormat(
                    new Path(Paths.get(directory).toAbsolutePath().toUri()),
                    new SimpleStringEncoder<String>())
                // A file per checkpoint: dead letters are visible once their checkpoint completed,
                // as the table's changes are.
                .withRollingPolicy(OnCheckpointRollingPolicy.build())
                .build())
        .name("dead-letter files")
        .uid("dead-letter-sink");
  }

  /** Writes a dead letter as one line of JSON: its table, origin, reason and record. */
  public static final class DeadLetterToJson implements MapFunction<DeadLetter, String> {
    private static final long serialVersionUID = 1L;

    @Override
    public String map(DeadLetter letter) throws Exception {
      ObjectNode node = MAPPER.createObjectNode();
      node.put("table", letter.table());
      node.put("origin", letter.origin());
      node.put("reason", letter.reason());
      node.put("record", letter.record());
      return MAPPER.writeValueAsString(node);
    }
  }
}
