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
   * Runs the job until it ends, fails or is cancelled. When it ends because a source table or topic
   * appeared, composes it again, with that table, and runs it from the ended job's latest completed
   * checkpoint (or, if it completed none, from where it was itself started).
   *
   * @return how many records the source's parser wrote to the dead-letter output, instead of
   *     failing, in the run that ended (earlier runs count again from their checkpoint); 0 for a
   *     job submitted detached, whose run has not ended
   */
  public long run() throws Exception {
    JobDefinition current = job;
    String previousNewSource = null;
    while (true) {
      try {
        PipelineComposer.ComposedJob composed = compose(current);
        org.apache.flink.api.common.JobExecutionResult result =
            composed.environment().execute(composed.name());
        // Submitted detached (flink run -d), the job has no result yet.
        Object counted =
            result.isJobExecutionResult()
                ? result.getAccumulatorResult(DeadLetter.ACCUMULATOR)
                : null;
        return counted instanceof Number n ? n.longValue() : 0;
      } catch (Exception e) {
        NewSourceTableException newSource = cause(e, NewSourceTableException.class);
        if (newSource != null) {
          if (newSource.source().equals(previousNewSource)) {
            // Built again for it, the job still has no table for it.
            throw e;
          }
          previousNewSource = newSource.source();
          String checkpoint = resumePoint(current, e);
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
   * Where a job that ended resumes: its own latest completed checkpoint, else where it was restored
   * from itself, else the start.
   */
  private static String resumePoint(JobDefinition ended, Exception failure) {
    JobExecutionException execution =
        ExceptionUtils.findThrowable(failure, JobExecutionException.class).orElse(null);
    if (execution != null) {
      Optional<String> own =
          Checkpoints.latestOf(
              ended.runtime().checkpointDirectory(), execution.getJobID().toString());
      if (own.isPresent()) {
        return own.get();
      }
    }
    return ended.runtime().restoreFrom();
  }

  /**
   * The exception of the given type among the causes of a job's failure, also where it reached the
   * client serialized; or null.
   */
  static <T extends Throwable> T cause(Throwable failure, Class<T> type) {
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
