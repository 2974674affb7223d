package io.icebergcdc.jobs;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.flink.configuration.Configuration;
import org.apache.iceberg.catalog.TableIdentifier;

/**
 * What an {@code apply --source file} job does: which changelog it reads, which table it writes,
 * and how.
 *
 * @param changesFile a file of Debezium JSON change events, one per line
 * @param warehouse the Hadoop catalog's warehouse directory
 * @param catalogProperties further properties of the catalog (such as {@code io-impl})
 * @param table the table to write; created from the first event's schema if missing
 * @param primaryKey the key columns
 * @param partitionBy the partition spec of a table to create, or null
 * @param formatVersion the format version of a table to create
 * @param parallelism the parallelism of dedup and writers
 * @param checkpointInterval how often to checkpoint, and so to commit
 * @param sequenceColumn a column that orders the changes of a key, or null for source positions
 * @param deadLetterPath a directory for records that cannot be applied, or null to fail on them
 * @param restartAttempts how often the job restarts after a failure before it gives up
 * @param sinkOptions sink and dedup options
 * @param checkpointDirectory where checkpoints are kept
 * @param stateBackend Flink's state backend: {@code hashmap} (on the heap) or {@code rocksdb}
 */
public record ApplyJob(
    String changesFile,
    String warehouse,
    Map<String, String> catalogProperties,
    TableIdentifier table,
    List<String> primaryKey,
    String partitionBy,
    int formatVersion,
    int parallelism,
    Duration checkpointInterval,
    String sequenceColumn,
    String deadLetterPath,
    int restartAttempts,
    Configuration sinkOptions,
    String checkpointDirectory,
    String stateBackend) {}
