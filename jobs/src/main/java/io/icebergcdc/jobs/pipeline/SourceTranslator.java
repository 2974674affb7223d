package io.icebergcdc.jobs.pipeline;

import io.icebergcdc.jobs.definition.ChangelogFile;
import io.icebergcdc.jobs.definition.DatabaseSource;
import io.icebergcdc.jobs.definition.JobDefinition;
import io.icebergcdc.jobs.definition.KafkaTopics;
import java.util.List;
import java.util.Set;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

/**
 * The first stage of a job: the tables its source feeds, made ready in the catalog, and the source
 * with its parser or router, which splits the changes by table.
 */
interface SourceTranslator {

  /** The translator of a job's source. */
  static SourceTranslator of(JobDefinition job) {
    if (job.source() instanceof ChangelogFile file) {
      return new FileSourceTranslator(job, file);
    }
    if (job.source() instanceof DatabaseSource database) {
      return new DatabaseSourceTranslator(job, database);
    }
    return new KafkaSourceTranslator(job, (KafkaTopics) job.source());
  }

  /**
   * Creates the tables that are missing (from the source's schema) and loads the others; called
   * before anything is added to the job.
   */
  List<TableTarget> prepareTables(TablePreparation preparation) throws Exception;

  /**
   * Adds the source and its parser to the job.
   *
   * @param writtenTogether the routes of the tables that one writer takes ({@link
   *     RoutedChanges#together}); empty for a source of one table
   * @param followingSchemaChanges the routes of the tables whose writer takes the changes of a
   *     schema the table took while the job runs ({@link SinkTranslator#followingSchemaChanges}):
   *     the source evolves those tables in flight; a schema change of another table ends the job
   * @param applyingTruncates the routes of the tables whose writer applies their truncates ({@link
   *     SinkTranslator#applyingTruncates}); a truncate of another table is a bad record
   */
  RoutedChanges translate(
      StreamExecutionEnvironment env,
      List<TableTarget> targets,
      Set<String> writtenTogether,
      Set<String> followingSchemaChanges,
      Set<String> applyingTruncates);

  /**
   * Whether each table's sink takes the table's name as uid prefix: every source but the file,
   * whose one table's operators had unprefixed uids in earlier versions.
   */
  boolean prefixesSinkUids();

  /**
   * Whether the source delivers each table's changes in the order of their source positions, so
   * that a job without state may drop those at or before the table's position (a file, a database's
   * log): a Kafka topic's partitions interleave, so its jobs start from the table's offsets
   * instead.
   */
  default boolean readsInSourceOrder() {
    return true;
  }

  /**
   * Whether the source reads the tables that appear while the job runs (a topic created for a
   * pattern) into the one writer of {@code writtenTogether}, which then writes and commits them
   * too, without ending the job; else a new table ends the job, and {@link JobRunner} builds it
   * again with the table.
   */
  default boolean takesNewTables(Set<String> writtenTogether) {
    return false;
  }

  /**
   * The ids of the Kafka topics of the tables that appear while the job runs, which their
   * committers record with their offsets; null for a source without topics that appear.
   */
  default io.icebergcdc.sink.NewTables.KafkaTopicIds topicIdsOfNewTables() {
    return null;
  }

  /** The Flink job's name. */
  String jobName(List<TableTarget> targets);
}
