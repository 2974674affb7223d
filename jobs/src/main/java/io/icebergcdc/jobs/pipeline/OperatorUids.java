package io.icebergcdc.jobs.pipeline;

/**
 * The uids and names of the operators the composer adds around the sinks. A savepoint maps its
 * state to operators by uid: a changed uid here is a breaking change of restore, and the README
 * says so. The uids are those of earlier versions of the job jar.
 *
 * <p>The sink's own operators (dedup, writers, committer) take their uids from the sink, prefixed
 * per table with the Iceberg table's name ({@code db.table/...}) when a job writes several tables;
 * the single table of a file job has no prefix, as before. A job that writes several tables dedups
 * and writes them with one operator, {@link #WRITER} (but for tables it cannot take, which keep
 * their own), and commits them with one committer, {@link #COMMITTER}.
 */
final class OperatorUids {

  private OperatorUids() {}

  static final String FILE_SOURCE = "file-source";
  static final String PARSE_DEBEZIUM_JSON = "parse-debezium-json";
  static final String DEBEZIUM_SOURCE = "debezium-source";
  static final String ROUTE_DEBEZIUM = "route-debezium";
  static final String KAFKA_SOURCE = "kafka-source";
  static final String ROUTE_KAFKA = "route-kafka";
  static final String DEAD_LETTER_FILES = "dead-letter-sink";
  static final String DEAD_LETTER_TOPIC = "dead-letter-topic";

  /** The dedup and writer of the tables of a job that writes several (capture, Kafka). */
  static final String WRITER = "tables-writer";

  /** The committer of all tables of a job that writes several (capture, Kafka). */
  static final String COMMITTER = "tables-committer";

  static final String PARSE_DEBEZIUM_JSON_NAME = "parse Debezium JSON";
  static final String ROUTE_DEBEZIUM_NAME = "route captured changes";
  static final String ROUTE_KAFKA_NAME = "parse and route Kafka changes";
  static final String DEAD_LETTERS_AS_JSON_NAME = "dead letters as JSON";
  static final String DEAD_LETTER_FILES_NAME = "dead-letter files";
}
