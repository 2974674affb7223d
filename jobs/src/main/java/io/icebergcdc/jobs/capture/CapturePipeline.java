package io.icebergcdc.jobs.capture;

import io.icebergcdc.cdc.BadRecordPolicy;
import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.ChangeSchema;
import io.icebergcdc.cdc.DeadLetter;
import io.icebergcdc.cdc.SourceSchemaChangedException;
import io.icebergcdc.cdc.debezium.DebeziumJsonParseFunction;
import io.icebergcdc.cdc.source.DebeziumRecord;
import io.icebergcdc.cdc.source.DebeziumRouter;
import io.icebergcdc.cdc.source.DebeziumSource;
import io.icebergcdc.cdc.typeutils.ChangeEventTypeInfo;
import io.icebergcdc.jobs.ApplyPipeline;
import io.icebergcdc.jobs.Checkpoints;
import io.icebergcdc.sink.CdcTables;
import io.icebergcdc.sink.IcebergCdcSink;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.runtime.client.JobExecutionException;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.util.ExceptionUtils;
import org.apache.flink.util.SerializedThrowable;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.flink.CatalogLoader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Composes a capture job: the Debezium source (one reader, parallelism 1), a router that parses
 * each record for its table, and one {@link IcebergCdcSink} per captured table, each with its own
 * dedup, writers and committer and its own operator uids ({@code <iceberg table>/...}). Tables
 * missing in the catalog are created from the source's schema before the job starts; existing ones
 * are evolved to the source's current schema ({@link CdcTables#evolve}).
 *
 * <p>A source table whose schema changes while the job runs ends the job with {@link
 * SourceSchemaChangedException}. {@link #run()} then evolves the Iceberg table, builds the job
 * again from the new schemas and resumes it from its latest checkpoint.
 */
public final class CapturePipeline {

  private static final Logger LOG = LoggerFactory.getLogger(CapturePipeline.class);

  private final CaptureJob job;
  private volatile Map<CapturedTable, TableIdentifier> targets;

  public CapturePipeline(CaptureJob job) {
    this.job = job;
  }

  /** Starts the job and returns at once. */
  public JobClient start() throws Exception {
    return build().executeAsync(jobName());
  }

  /**
   * Runs the job until it fails or is cancelled. When it ends because a source table's schema
   * changed, evolves the table's Iceberg table and runs the job again, built from the new schemas,
   * from the ended job's latest completed checkpoint (or, if it completed none, from where it was
   * itself started).
   */
  public void run() throws Exception {
    CaptureJob current = job;
    SourceSchemaChangedException previous = null;
    while (true) {
      try {
        build(current).execute(jobName());
        return;
      } catch (Exception e) {
        SourceSchemaChangedException change = schemaChange(e);
        if (change == null
            || change.sourceSchema() == null
            || (previous != null
                && previous.table().equals(change.table())
                && previous.changes().equals(change.changes()))) {
          // Not a schema change, one that cannot be followed, or the same change again after
          // the table was evolved for it: the evolution did not take, and another round would
          // only repeat it.
          throw e;
        }
        previous = change;
        evolve(change);
        String checkpoint = resumePoint(current, e);
        LOG.info(
            "Source table {} changed its schema ({}); resuming from {}",
            change.table(),
            String.join("; ", change.changes()),
            checkpoint == null ? "the start, no checkpoint was completed" : checkpoint);
        current = current.restoringFrom(checkpoint);
      }
    }
  }

  /**
   * Where a job that ended resumes: its own latest completed checkpoint, else where it was restored
   * from itself, else the start.
   */
  private static String resumePoint(CaptureJob ended, Exception failure) {
    JobExecutionException execution =
        ExceptionUtils.findThrowable(failure, JobExecutionException.class).orElse(null);
    if (execution != null) {
      Optional<Path> own =
          Checkpoints.latestOf(ended.checkpointDirectory(), execution.getJobID().toString());
      if (own.isPresent()) {
        return own.get().toString();
      }
    }
    return ended.restoreFrom();
  }

  private void evolve(SourceSchemaChangedException change) {
    for (Map.Entry<CapturedTable, TableIdentifier> target : targets().entrySet()) {
      if (target.getKey().qualifiedName().equals(change.table())) {
        Catalog catalog = ApplyPipeline.catalogLoader(job.warehouse(), Map.of()).loadCatalog();
        List<String> done =
            CdcTables.evolve(catalog.loadTable(target.getValue()), change.sourceSchema(), false);
        LOG.info("Evolved Iceberg table {}: {}", target.getValue(), done);
        return;
      }
    }
    throw new IllegalStateException(
        "the job does not capture table " + change.table() + " that changed", change);
  }

  /** The schema change that ended a job, if that is what ended it. */
  static SourceSchemaChangedException schemaChange(Throwable failure) {
    for (Throwable t = failure; t != null; t = t.getCause()) {
      if (t instanceof SourceSchemaChangedException change) {
        return change;
      }
      if (t instanceof SerializedThrowable serialized
          && SourceSchemaChangedException.class
              .getName()
              .equals(serialized.getOriginalErrorClassName())) {
        Throwable original =
            serialized.deserializeError(SourceSchemaChangedException.class.getClassLoader());
        if (original instanceof SourceSchemaChangedException change) {
          return change;
        }
      }
      if (t.getCause() == t) {
        break;
      }
    }
    return null;
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
    return build(job);
  }

  private StreamExecutionEnvironment build(CaptureJob job) {
    DatabaseSource source = job.source();
    List<CapturedTable> tables = SourceTables.discover(source);
    Map<CapturedTable, TableIdentifier> targets = new LinkedHashMap<>();
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
      List<String> evolved = CdcTables.evolve(iceberg, table.schema(), true);
      if (!evolved.isEmpty()) {
        LOG.info("Evolved Iceberg table {} to its source's schema: {}", entry.getValue(), evolved);
        iceberg.refresh();
      }
      schemas.put(topic, new ChangeSchema(iceberg.schema()));
      tableNames.put(topic, table.qualifiedName());
      byTopic.put(topic, entry.getValue());
    }
    // Known once their tables exist in their current schema.
    this.targets = targets;

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

    Map<TableIdentifier, DataStream<ChangeEvent>> changes = new LinkedHashMap<>();
    byTopic.forEach(
        (topic, table) -> changes.put(table, routed.getSideOutput(router.outputOf(topic))));
    DataStream<DeadLetter> deadLetters =
        ApplyPipeline.applyToTables(
            changes,
            catalogLoader,
            job.sinkOptions(),
            routed.getSideOutput(DebeziumJsonParseFunction.DEAD_LETTERS));
    if (job.deadLetterPath() != null) {
      ApplyPipeline.writeDeadLetters(deadLetters, job.deadLetterPath());
    }
    return env;
  }
}
