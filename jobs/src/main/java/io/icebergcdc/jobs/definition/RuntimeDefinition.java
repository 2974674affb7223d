package io.icebergcdc.jobs.definition;

import java.time.Duration;

/**
 * How a job runs on Flink.
 *
 * @param parallelism the parallelism of dedup and writers (and of a Kafka source)
 * @param checkpointInterval how often to checkpoint, and so to commit
 * @param checkpointDirectory where checkpoints are kept: a path or a URI ({@code s3://...} with
 *     Flink's S3 file system plugin on the cluster)
 * @param stateBackend {@code hashmap} (on the heap) or {@code rocksdb}; null to take the cluster's
 * @param restoreFrom a checkpoint or savepoint to resume from, or null
 * @param restartAttempts how often the job restarts after a failure before it gives up, when it
 *     runs on its own embedded Flink (on a cluster, the cluster's restart strategy decides)
 * @param allowNonRestoredState whether a restore may leave state of the checkpoint or savepoint
 *     that no operator of the job claims (Flink refuses it otherwise)
 */
public record RuntimeDefinition(
    int parallelism,
    Duration checkpointInterval,
    String checkpointDirectory,
    String stateBackend,
    String restoreFrom,
    int restartAttempts,
    boolean allowNonRestoredState) {

  /** A job whose restore claims all the state it restores. */
  public RuntimeDefinition(
      int parallelism,
      Duration checkpointInterval,
      String checkpointDirectory,
      String stateBackend,
      String restoreFrom,
      int restartAttempts) {
    this(
        parallelism,
        checkpointInterval,
        checkpointDirectory,
        stateBackend,
        restoreFrom,
        restartAttempts,
        false);
  }

  /** The same, resuming from a checkpoint (or from the start if null). */
  public RuntimeDefinition restoringFrom(String checkpoint) {
    return new RuntimeDefinition(
        parallelism,
        checkpointInterval,
        checkpointDirectory,
        stateBackend,
        checkpoint,
        restartAttempts,
        allowNonRestoredState);
  }

  /** The same, with {@code attempts} restarts after a failure. */
  public RuntimeDefinition withRestartAttempts(int attempts) {
    return new RuntimeDefinition(
        parallelism,
        checkpointInterval,
        checkpointDirectory,
        stateBackend,
        restoreFrom,
        attempts,
        allowNonRestoredState);
  }

  /** The same, with a restore that may leave state no operator claims. */
  public RuntimeDefinition allowingNonRestoredState() {
    return new RuntimeDefinition(
        parallelism,
        checkpointInterval,
        checkpointDirectory,
        stateBackend,
        restoreFrom,
        restartAttempts,
        true);
  }
}
