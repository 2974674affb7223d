package io.icebergcdc.jobs.pipeline;

import io.icebergcdc.cdc.DeadLetter;
import io.icebergcdc.commit.CommitListener;
import io.icebergcdc.jobs.definition.JobDefinition;
import io.icebergcdc.sink.CatalogDefinition;
import io.icebergcdc.sink.SharedCatalog;
import java.util.List;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.flink.CatalogLoader;

/**
 * Builds the Flink job of a {@link JobDefinition}, stage by stage: the tables made ready in the
 * catalog, then {@code source -> parse/route} ({@link SourceTranslator}), {@code dedup -> write ->
 * commit} ({@link SinkTranslator}), and the dead letters ({@link DeadLetterTranslator}), in the
 * environment of its runtime definition ({@link RuntimeTranslator}). The operators' uids come from
 * {@link OperatorUids} and the sink.
 */
public final class PipelineComposer {

  private PipelineComposer() {}

  /** A composed job: its environment, ready to execute, its name, and the tables it writes. */
  public record ComposedJob(
      StreamExecutionEnvironment environment, String name, List<TableTarget> targets) {}

  /** Prepares the job's tables and builds its job graph. */
  public static ComposedJob compose(JobDefinition job) throws Exception {
    return compose(job, null);
  }

  /**
   * Prepares the job's tables and builds its job graph, with a listener of every table's commits
   * (tests use it to inject failures around commits), or null.
   */
  public static ComposedJob compose(JobDefinition job, CommitListener commitListener)
      throws Exception {
    SourceTranslator source = SourceTranslator.of(job);
    CatalogLoader catalogLoader = job.catalog().loader();
    List<TableTarget> targets;
    Catalog catalog = job.catalog().connect();
    TablePreparation preparation = new TablePreparation(catalog, job.catalog());
    SinkTranslator sinks;
    try {
      targets = source.prepareTables(preparation);
      preparation.probeStorage(targets);
      // Checks the targets (two sources named into one table, say) before the tables stay.
      sinks =
          SinkTranslator.of(
              targets,
              new SharedCatalog(catalogLoader, job.catalog().writersLoader()),
              job.sinkOptions(),
              source.prefixesSinkUids(),
              source.readsInSourceOrder(),
              commitListener,
              source.topicIdsOfNewTables());
    } catch (Exception e) {
      preparation.rollback();
      throw e;
    } finally {
      CatalogDefinition.close(catalog);
    }
    StreamExecutionEnvironment env =
        RuntimeTranslator.environment(job.runtime(), sinks.writerOperators());
    RoutedChanges routed =
        source.translate(
            env,
            targets,
            sinks.writtenTogether(),
            sinks.followingSchemaChanges(),
            sinks.applyingTruncates());
    DataStream<DeadLetter> deadLetters =
        sinks.apply(routed, targets, catalogLoader, source.takesNewTables(sinks.writtenTogether()));
    DeadLetterTranslator.write(deadLetters, job.deadLetters(), job.source());
    return new ComposedJob(env, source.jobName(targets), targets);
  }
}
