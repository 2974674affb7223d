package io.icebergcdc.jobs.definition;

/**
 * Where a job's changes come from: a file of Debezium JSON change events, a database captured
 * through Debezium, or Kafka topics of change events. A new source is one more permitted type and
 * one translator in {@code io.icebergcdc.jobs.pipeline}.
 */
public sealed interface SourceDefinition permits ChangelogFile, DatabaseSource, KafkaTopics {

  /** The source, for messages and the job's name; never holds a secret. */
  String origin();
}
