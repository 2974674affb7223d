package io.icebergcdc.jobs.capture;

import java.time.Duration;
import org.apache.flink.configuration.Configuration;

/**
 * What an {@code apply --source postgres|mysql} job does: which database it captures, where the
 * Iceberg tables go, and how it runs.
 *
 * @param source the captured database and tables
 * @param warehouse the Hadoop catalog's warehouse directory
 * @param tableTemplate the Iceberg table of each source table, with {@code {schema}} (the
 *     PostgreSQL schema or the MySQL database), {@code {table}} and {@code {database}}, such as
 *     {@code cdc.{schema}_{table}}; the part before the last dot is the namespace
 * @param formatVersion the format version of tables the job creates
 * @param parallelism the parallelism of dedup and writers
 * @param checkpointInterval how often to checkpoint, and so to commit
 * @param checkpointDirectory where checkpoints are kept
 * @param stateBackend {@code hashmap} or {@code rocksdb}
 * @param sinkOptions sink and dedup options
 * @param deadLetterPath a directory for records that cannot be applied, or null to fail on them
 * @param restoreFrom a checkpoint or savepoint to resume from, or null
 * @param restartAttempts how often the job restarts after a failure before it gives up
 */
public record CaptureJob(
    DatabaseSource source,
    String warehouse,
    String tableTemplate,
    int formatVersion,
    int parallelism,
    Duration checkpointInterval,
    String checkpointDirectory,
    String stateBackend,
    Configuration sinkOptions,
    String deadLetterPath,
    String restoreFrom,
    int restartAttempts) {

  /** The Iceberg table name of a captured table. */
  public String targetName(CapturedTable table) {
    return tableTemplate
        .replace("{schema}", table.namespace())
        .replace("{table}", table.name())
        .replace("{database}", source.database());
  }

  /** The same job, resuming from a checkpoint (or from the start if null). */
  public CaptureJob restoringFrom(String checkpoint) {
    return new CaptureJob(
        source,
        warehouse,
        tableTemplate,
        formatVersion,
        parallelism,
        checkpointInterval,
        checkpointDirectory,
        stateBackend,
        sinkOptions,
        deadLetterPath,
        checkpoint,
        restartAttempts);
  }
}
