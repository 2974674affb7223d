package io.icebergcdc.it;

import io.icebergcdc.jobs.pipeline.JobRunner;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.flink.client.program.ClusterClient;
import org.apache.flink.runtime.client.JobStatusMessage;

/**
 * {@link JobRunner#run()} on a thread of its own, for tests of jobs that end and are built again
 * while they run (schema changes, new tables and topics). Closing it cancels every job still
 * running on the cluster, which ends the run, and waits for that.
 */
final class BackgroundRun implements AutoCloseable {

  private final ClusterClient<?> cluster;
  private final ExecutorService thread = Executors.newSingleThreadExecutor();
  private final Future<?> run;

  private BackgroundRun(JobRunner runner, ClusterClient<?> cluster) {
    this.cluster = cluster;
    this.run =
        thread.submit(
            () -> {
              runner.run();
              return null;
            });
  }

  static BackgroundRun start(JobRunner runner, ClusterClient<?> cluster) {
    return new BackgroundRun(runner, cluster);
  }

  /** Throws if the run has ended: its failure, or an AssertionError if it ended without one. */
  void check() throws Exception {
    if (run.isDone()) {
      run.get();
      throw new AssertionError("the job ended");
    }
  }

  /** {@link #check()}, for the waits that take a check. */
  Callable<?> running() {
    return () -> {
      check();
      return null;
    };
  }

  /**
   * Cancels the cluster's running jobs until the run has ended (a run that was building its job
   * again may submit one more after a look), and waits for that; a failure of the test is what it
   * reports, not the run's end by cancellation.
   *
   * @throws AssertionError if the run has not ended a minute after the first cancellation
   */
  @Override
  public void close() throws Exception {
    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
    try {
      while (!run.isDone()) {
        for (JobStatusMessage status : cluster.listJobs().get()) {
          if (!status.getJobState().isGloballyTerminalState()) {
            cluster.cancel(status.getJobId()).get();
          }
        }
        if (System.nanoTime() > deadline) {
          throw new AssertionError(
              "the job runner did not end within a minute of its cancellation");
        }
        Thread.sleep(100);
      }
    } finally {
      thread.shutdownNow();
    }
  }
}
