package io.icebergcdc.it;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.runtime.client.JobCancellationException;
import org.apache.flink.util.ExceptionUtils;

/**
 * Stopping a job the way a test must before it reads the job's checkpoints again or deletes its
 * directories: {@link JobClient#cancel()} completes once the cluster has accepted the request,
 * while the job's tasks may still be ending, committing or writing a checkpoint.
 */
final class JobClients {

  private static final Duration TIMEOUT = Duration.ofSeconds(60);

  private JobClients() {}

  /**
   * Cancels the job, then waits until it has ended: every task has ended, and with it any commit in
   * flight. Then waits until nothing writes in {@code dirs} any more (a checkpoint being discarded,
   * files of a commit the cancel interrupted), so that they can be deleted. A job that had already
   * ended by a failure fails the caller with that failure, as {@link JobClient#cancel()} does.
   */
  static void cancelAndAwait(JobClient client, Path... dirs) throws Exception {
    client.cancel().get();
    try {
      client.getJobExecutionResult().get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (ExecutionException ended) {
      if (ExceptionUtils.findThrowable(ended, JobCancellationException.class).isEmpty()) {
        throw ended;
      }
    }
    for (Path dir : dirs) {
      awaitNoMoreWrites(dir);
    }
  }

  private static void awaitNoMoreWrites(Path dir) throws InterruptedException {
    long deadline = System.nanoTime() + TIMEOUT.toNanos();
    String last = null;
    while (System.nanoTime() < deadline) {
      String now = listing(dir);
      if (now.equals(last)) {
        return;
      }
      last = now;
      Thread.sleep(500);
    }
  }

  private static String listing(Path dir) {
    if (!Files.exists(dir)) {
      return "";
    }
    StringBuilder state = new StringBuilder();
    try (Stream<Path> files = Files.walk(dir)) {
      for (Path file : files.sorted().toList()) {
        state.append(file).append(' ').append(file.toFile().length()).append('\n');
      }
    } catch (UncheckedIOException | IOException changing) {
      return "changing " + System.nanoTime();
    }
    return state.toString();
  }
}
