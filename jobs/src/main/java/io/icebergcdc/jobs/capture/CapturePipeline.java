package io.icebergcdc.jobs.capture;

import io.icebergcdc.cdc.BadRecordPolicy;
import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.ChangeSchema;
import io.icebergcdc.cdc.DeadLetter;
import io.icebergcdc.cdc.debezium.DebeziumJsonParseFunction;
import io.icebergcdc.cdc.source.DebeziumRecord;
import io.icebergcdc.cdc.source.DebeziumRouter;
import io.icebergcdc.cdc.source.DebeziumSource;
import io.icebergcdc.cdc.typeutils.ChangeEventTypeInfo;
import io.icebergcdc.jobs.ApplyPipeline;
import io.icebergcdc.sink.CdcTables;
import io.icebergcdc.sink.IcebergCdcSink;
import io.icebergcdc.sink.SinkOptions;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.flink.CatalogLoader;
import org.apache.iceberg.flink.TableLoader;

/**
 * Composes a capture job: the Debezium source (one reader, parallelism 1), a router that parses
 * each record for its table, and one {@link IcebergCdcSink} per captured table, each with its own
 * dedup, writers and committer and its own operator uids ({@code <iceberg table>/...}). Tables
 * missing in the catalog are created from the source's schema before the job starts.
 */
public final class CapturePipeline {

  private final CaptureJob job;
  private Map<CapturedTable, TableIdentifier> targets;

  public CapturePipeline(CaptureJob job) {
    this.job = job;
  }

  /** Starts the job and returns at once. */
  public JobClient start() throws Exception {
    return build().executeAsync(jobName());
  }

  /** Runs the job until it fails or is cancelled. */
  public void run() throws Exception {
    build().execute(jobName());
  }

  /** The captured tables and their Iceberg tables; known once the job is built. */
  public Map<CapturedTable, TableIdentifier> targets() {
    if (targets == null) {
      throw new IllegalStateException("the capture job is not built yet");
    }
    return targets;
  }

  private String jobName() {
    return "iceberg-cdc capture " + job.source().origin();
  }

  StreamExecutionEnvironment build() {
    DatabaseSource source = job.source();
    List<CapturedTable> tables = SourceTables.discover(source);
    targets = new LinkedHashMap<>();
    for (CapturedTable table : tables) {
      targets.put(table, TableIdentifier.parse(job.targetName(table)));
    }
    CatalogLoader catalogLoader = ApplyPipeline.catalogLoader(job.warehouse(), Map.of());
    Catalog catalog = catalogLoader.loadCatalog();

    Map<String, ChangeSchema> schemas = new LinkedHashMap<>();
    Map<String, String> tableNames = new LinkedHashMap<>();
    Map<String, TableIdentifier> byTopic = new LinkedHashMap<>();
    for (Map.Entry<CapturedTable, TableIdentifier> entry : targets.entrySet()) {
      CapturedTable table = entry.getKey();
      String topic = table.topic(source.name());
      org.apache.iceberg.Table iceberg =
          CdcTables.createOrLoad(
              catalog,
              entry.getValue(),
              table.schema(),
              null,
              job.formatVersion(),
              table.primaryKey());
      schemas.put(topic, new ChangeSchema(iceberg.schema()));
      tableNames.put(topic, table.qualifiedName());
      byTopic.put(topic, entry.getValue());
    }

    StreamExecutionEnvironment env =
        ApplyPipeline.environment(
            job.parallelism(),
            job.checkpointInterval(),
            job.checkpointDirectory(),
            job.stateBackend(),
            job.restartAttempts(),
            job.restoreFrom());
    BadRecordPolicy policy =
        job.deadLetterPath() == null ? BadRecordPolicy.FAIL : BadRecordPolicy.DEAD_LETTER;

    DataStream<DebeziumRecord> records =
        env.fromSource(
                new DebeziumSource(source.debeziumProperties(tables)),
                WatermarkStrategy.noWatermarks(),
                "Debezium " + source.origin())
            .uid("debezium-source")
            .setParallelism(1);
    DebeziumRouter router = new DebeziumRouter(schemas, tableNames, source.origin(), policy);
    SingleOutputStreamOperator<ChangeEvent> routed =
        records
            .process(router)
            .returns(ChangeEventTypeInfo.of(schemas.values().iterator().next()))
            .name("parse and route Debezium changes")
            .uid("route-debezium")
            .setParallelism(1);

    DataStream<DeadLetter> deadLetters =
        routed.getSideOutput(DebeziumJsonParseFunction.DEAD_LETTERS);
    for (Map.Entry<String, TableIdentifier> target : byTopic.entrySet()) {
      Configuration options = new Configuration(job.sinkOptions());
      options.set(SinkOptions.UID_PREFIX, target.getValue().toString());
      IcebergCdcSink sink =
          IcebergCdcSink.builder()
              .table(TableLoader.fromCatalog(catalogLoader, target.getValue()))
              .options(options)
              .build();
      deadLetters =
          deadLetters.union(sink.apply(routed.getSideOutput(router.outputOf(target.getKey()))));
    }
    if (job.deadLetterPath() != null) {
      ApplyPipeline.writeDeadLetters(deadLetters, job.deadLetterPath());
    }
    return env;
  }
}
