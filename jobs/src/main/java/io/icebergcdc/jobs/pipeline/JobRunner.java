package io.icebergcdc.jobs.pipeline;

import io.icebergcdc.cdc.DeadLetter;
import io.icebergcdc.cdc.NewSourceTableException;
import io.icebergcdc.commit.CommitListener;
import io.icebergcdc.jobs.Checkpoints;
import io.icebergcdc.jobs.definition.JobDefinition;
import java.util.List;
import java.util.Optional;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.runtime.client.JobExecutionException;
import org.apache.flink.util.ExceptionUtils;
import org.apache.flink.util.SerializedThrowable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs a {@link JobDefinition}: composes it and executes it, to its end ({@link #run()}) or in the
 * background ({@link #start()}).
 *
 * <p>The job's tables follow their sources' schema changes while it runs; a change a table cannot
 * follow (a dropped primary key column, a type Iceberg cannot widen to) ends the job naming the
 * column. A source table or topic that appears while the job runs and that the job cannot take in
 * flight (a table with a writer of its own) ends it with {@link NewSourceTableException}; {@link
 * #run()} composes the job again, with a table for it, and resumes it from its latest checkpoint.
 */
public final class JobRunner {

  private static final Logger LOG = LoggerFactory.getLogger(JobRunner.class);

  private final JobDefinition job;
  private final CommitListener commitListener;
  private volatile List<TableTarget> targets;

  public JobRunner(JobDefinition job) {
    this(job, null);
  }

  /** A runner whose sinks tell a listener of their commits, as tests that inject failures do. */
  public JobRunner(JobDefinition job, CommitListener commitListener) {
    this.job = job;
    this.commitListener = commitListener;
  }

  /** Starts the job and returns at once. */
  public JobClient start() throws Exception {
    PipelineComposer.ComposedJob composed = compose(job);
    return composed.environment().executeAsync(composed.name());
  }

  /**
   * Runs the job only until it has taken a savepoint: starts it and stops it with a savepoint in
   * {@code directory} (null: the cluster's default) as soon as its tasks run, which commits what
   * its committer holds. The state the operators keep of tables the job was not built with is
   * dropped from the savepoint, as from any checkpoint. A stop refused because some task is not
   * running yet is tried again, every second; where the job fails, or does not stop within {@code
   * timeout}, or the wait is interrupted, the job is cancelled, so that it does not go on beside
   * the next.
   *
   * @return the savepoint's path
   */
  public String runToSavepoint(String directory, java.time.Duration timeout) throws Exception {
    JobClient client = start();
    LOG.info("Job {} runs until it has stopped with a savepoint", client.getJobID());
    long deadline = System.nanoTime() + timeout.toNanos();
    String refused = null;
    boolean stopped = false;
    try {
      while (System.nanoTime() < deadline) {
        org.apache.flink.api.common.JobStatus status = client.getJobStatus().get();
        if (status.isGloballyTerminalState()) {
          stopped = true;
          // A failure ends the job; its cause reaches the caller from the result.
          client.getJobExecutionResult().get();
          throw new IllegalStateException("the job ended (" + status + ") before its savepoint");
        }
        if (status == org.apache.flink.api.common.JobStatus.RUNNING) {
          try {
            String savepoint =
                client
                    .stopWithSavepoint(
                        false,
                        directory,
                        org.apache.flink.core.execution.SavepointFormatType.DEFAULT)
                    .get(
                        Math.max(1, deadline - System.nanoTime()),
                        java.util.concurrent.TimeUnit.NANOSECONDS);
            stopped = true;
            return savepoint;
          } catch (java.util.concurrent.ExecutionException e) {
            if (!notAllTasksRunning(e)) {
              throw e;
            }
            refused = e.getCause().getMessage();
          }
        }
        Thread.sleep(1000);
      }
      throw new java.util.concurrent.TimeoutException(
          "the job took no savepoint within "
              + timeout
              + (refused == null ? " (it did not run)" : " (last refusal: " + refused + ")"));
    } finally {
      if (!stopped) {
        cancelQuietly(client);
      }
    }
  }

  /** Whether a stop with a savepoint was refused only because some task is not running yet. */
  private static boolean notAllTasksRunning(Throwable failure) {
    for (Throwable t = failure; t != null; t = t.getCause()) {
      if (t instanceof org.apache.flink.runtime.checkpoint.CheckpointException checkpoint
          && checkpoint.getCheckpointFailureReason()
              == org.apache.flink.runtime.checkpoint.CheckpointFailureReason
                  .NOT_ALL_REQUIRED_TASKS_RUNNING) {
        return true;
      }
      // Through a cluster's REST API, the failure arrives as its text.
      if (t.getMessage() != null
          && t.getMessage()
              .contains(
                  org.apache.flink.runtime.checkpoint.CheckpointFailureReason
                      .NOT_ALL_REQUIRED_TASKS_RUNNING
                      .message())) {
        return true;
      }
      if (t.getCause() == t) {
        break;
      }
    }
    return false;
  }

  private static void cancelQuietly(JobClient client) {
    try {
      client.cancel().get(60, java.util.concurrent.TimeUnit.SECONDS);
      LOG.info("Cancelled job {}", client.getJobID());
    } catch (Exception e) {
      LOG.warn(
          "Could not cancel job {}; cancel it before the job is started again: {}",
          client.getJobID(),
          e.toString());
    }
  }

  /**
   * Runs the job until it ends, fails or is cancelled. When it ends because a source table or topic
   * appeared, composes it again, with that table, and runs it from the ended job's latest completed
   * checkpoint (or, if it completed none, from where it was itself started).
   *
   * @return how the run ended, or, submitted detached ({@code flink run -d}), the job it left
   *     running
   */
  public Outcome run() throws Exception {
    JobDefinition current = job;
    String previousNewSource = null;
    while (true) {
      try {
        PipelineComposer.ComposedJob composed = compose(current);
        org.apache.flink.api.common.JobExecutionResult result =
            composed.environment().execute(composed.name());
        if (!result.isJobExecutionResult()) {
          // Submitted detached (flink run -d), the job has no result yet.
          return new Outcome(result.getJobID(), true, 0);
        }
        Object counted = result.getAccumulatorResult(DeadLetter.ACCUMULATOR);
        return new Outcome(
            result.getJobID(), false, counted instanceof Number n ? n.longValue() : 0);
      } catch (Exception e) {
        NewSourceTableException newSource = cause(e, NewSourceTableException.class);
        if (newSource != null) {
          if (newSource.source().equals(previousNewSource)) {
            // Built again for it, the job still has no table for it.
            throw e;
          }
          previousNewSource = newSource.source();
          String checkpoint =
              resumePoint(
                  current.runtime().checkpointDirectory(),
                  current.runtime().restoreFrom(),
                  newSource,
                  e);
          LOG.info(
              "Source {} appeared; building the job again with its table, resuming from {}",
              newSource.source(),
              checkpoint == null ? "the start, no checkpoint was completed" : checkpoint);
          current = current.restoringFrom(checkpoint);
          continue;
        }
        throw e;
      }
    }
  }

  /**
   * How a run ended.
   *
   * @param job the Flink job that ran last
   * @param detached whether it was submitted detached and runs on
   * @param deadLettered how many records the source's parser wrote to the dead-letter output,
   *     instead of failing, in the run that ended (earlier runs count again from their checkpoint);
   *     0 for a job submitted detached
   */
  public record Outcome(
      org.apache.flink.api.common.JobID job, boolean detached, long deadLettered) {}

  /** The tables the job writes; known once it is composed. */
  public List<TableTarget> targets() {
    List<TableTarget> known = targets;
    if (known == null) {
      throw new IllegalStateException("the job is not composed yet");
    }
    return known;
  }

  private PipelineComposer.ComposedJob compose(JobDefinition definition) throws Exception {
    PipelineComposer.ComposedJob composed = PipelineComposer.compose(definition, commitListener);
    targets = composed.targets();
    return composed;
  }

  /**
   * Where a job that ended resumes: its own latest completed checkpoint, else (it completed none)
   * where it was restored from itself, else the start.
   *
   * @throws IllegalStateException where the ended job's checkpoints cannot be seen from here (a
   *     directory that only the cluster mounts, a file system only it has): resuming from where it
   *     was started would read again, or skip, what it did since
   */
  static String resumePoint(
      String checkpointDirectory,
      String restoredFrom,
      NewSourceTableException newSource,
      Exception failure) {
    JobExecutionException execution =
        ExceptionUtils.findThrowable(failure, JobExecutionException.class).orElse(null);
    String jobId = execution == null ? null : execution.getJobID().toString();
    // Flink makes the job's directory when the job starts, and keeps it after a failure; an object
    // store shows it only once a checkpoint wrote there, so there the checkpoint directory being
    // seen is enough. Otherwise they are where only the cluster sees them.
    if (execution == null
        || !(Checkpoints.visible(
                new org.apache.flink.core.fs.Path(checkpointDirectory, jobId).toString())
            || (Checkpoints.isObjectStore(checkpointDirectory)
                && Checkpoints.visible(checkpointDirectory)))) {
      throw new IllegalStateException(
          "source "
              + newSource.source()
              + " appeared, and the job ended to be built again with a table for it, but its"
              + " checkpoints cannot be seen from here"
              + (execution == null ? "" : " (under " + checkpointDirectory + ")")
              + ": run it again with --restore-from and the job's latest checkpoint");
    }
    Optional<String> own = Checkpoints.latestOf(checkpointDirectory, jobId);
    return own.orElse(restoredFrom);
  }

  /**
   * The exception of the given type among the causes of a job's failure, also where it reached the
   * client serialized; or null.
   */
  public static <T extends Throwable> T cause(Throwable failure, Class<T> type) {
    for (Throwable t = failure; t != null; t = t.getCause()) {
      if (type.isInstance(t)) {
        return type.cast(t);
      }
      if (t instanceof SerializedThrowable serialized
          && type.getName().equals(serialized.getOriginalErrorClassName())) {
        Throwable original = serialized.deserializeError(type.getClassLoader());
        if (type.isInstance(original)) {
          return type.cast(original);
        }
      }
      if (t.getCause() == t) {
        break;
      }
    }
    return null;
  }
}
