package io.icebergcdc.jobs.definition;

import io.icebergcdc.sink.CatalogDefinition;
import io.icebergcdc.sink.SinkOptions;
import org.apache.flink.configuration.Configuration;

/**
 * One job of the job jar, whatever its source: what it reads, which catalog and tables it writes,
 * with which sink options, where its bad records go and how it runs. {@code
 * io.icebergcdc.jobs.pipeline.PipelineComposer} builds the Flink job from it.
 *
 * @param source where the changes come from
 * @param catalog the Iceberg catalog of the tables
 * @param tables the tables' names and how those the job creates look
 * @param sinkOptions sink and dedup options ({@link SinkOptions})
 * @param deadLetters where records that cannot be applied go
 * @param runtime parallelism, checkpoints, state backend and restore
 */
public record JobDefinition(
    SourceDefinition source,
    CatalogDefinition catalog,
    TableDefinition tables,
    Configuration sinkOptions,
    DeadLetterOutput deadLetters,
    RuntimeDefinition runtime) {

  public JobDefinition {
    if (deadLetters.topic() != null && !(source instanceof KafkaTopics)) {
      throw new IllegalArgumentException("a dead-letter topic needs a Kafka source");
    }
  }

  /** The same job, resuming from a checkpoint (or from the start if null). */
  public JobDefinition restoringFrom(String checkpoint) {
    return withRuntime(runtime.restoringFrom(checkpoint));
  }

  /** The same job, run as {@code newRuntime} says. */
  public JobDefinition withRuntime(RuntimeDefinition newRuntime) {
    return new JobDefinition(source, catalog, tables, sinkOptions, deadLetters, newRuntime);
  }
}
