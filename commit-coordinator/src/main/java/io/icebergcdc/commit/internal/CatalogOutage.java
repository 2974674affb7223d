package io.icebergcdc.commit.internal;

import java.io.InterruptedIOException;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.time.Duration;
import org.apache.iceberg.exceptions.CommitStateUnknownException;
import org.apache.iceberg.exceptions.ServiceFailureException;
import org.apache.iceberg.exceptions.ServiceUnavailableException;

/**
 * How the committer rides out a catalog it cannot reach for a while (a REST catalog restarting, a
 * metastore failing over): a commit that fails because the catalog did not answer, or answered that
 * it is unavailable, is tried again with a growing pause (1 s, doubling, at most 15 s) until the
 * catalog answers or {@code timeout} has passed since the first failure; then the job fails as for
 * any other commit error.
 *
 * <p>A commit whose outcome is unknown (the request may have reached the catalog) is not sent again
 * blindly: before each new attempt the committer reads the table's snapshot log, and a checkpoint
 * found there is done. So a checkpoint is committed once however often the catalog drops a
 * connection.
 *
 * <p>The timeout should stay below Flink's checkpoint timeout (10 min by default): while the
 * committer waits, checkpoints cannot complete.
 *
 * <p>The tables a committer of several commits for one checkpoint share a {@link Round}: the time
 * runs from the first failure of any of them, so that an outage ends the job after the timeout, not
 * after the timeout once for each batch of tables the commit threads take in turn.
 */
final class CatalogOutage {

  private static final long FIRST_PAUSE_MS = 1_000;
  private static final long LONGEST_PAUSE_MS = 15_000;

  private final long timeoutNanos;
  private final Round round;
  private long deadline;
  private long pauseMs;
  private int failures;

  CatalogOutage(Duration timeout) {
    this(timeout, null);
  }

  /**
   * @param round the commits this one's outage is timed with, from the first failure of any of
   *     them; null for its own time
   */
  CatalogOutage(Duration timeout, Round round) {
    this.timeoutNanos = timeout.toNanos();
    this.round = round;
  }

  /**
   * The commits of several tables for one checkpoint, on several threads: the catalog's outage
   * counts from the first failure of any of them.
   */
  static final class Round {
    private boolean failed;
    private long firstFailure;

    /** When an outage first met at {@code now} ends the commits of the round. */
    synchronized long deadline(long now, long timeoutNanos) {
      if (!failed) {
        failed = true;
        firstFailure = now;
      }
      return firstFailure + timeoutNanos;
    }

    /** A commit went through after failures: a later outage counts from its own first failure. */
    synchronized void reached() {
      failed = false;
    }
  }

  /** Tells the round, if any, that the catalog answered after this outage's failures. */
  void reached() {
    if (round != null && failures > 0) {
      round.reached();
    }
  }

  /**
   * Whether a failure is the catalog's being out of reach, as opposed to a refusal (a conflict, a
   * missing table, a wrong credential), which another attempt would only meet again.
   */
  static boolean isOutage(Throwable failure) {
    for (Throwable t = failure; t != null; t = t.getCause()) {
      if (t instanceof ConnectException
          || t instanceof NoRouteToHostException
          || t instanceof UnknownHostException
          || t instanceof SocketTimeoutException
          // A connection reset or broken mid-request (a pooled connection the server closed):
          // whether a commit landed is then unknown, as after CommitStateUnknownException.
          || t instanceof java.net.SocketException
          || t instanceof InterruptedIOException
          || t instanceof ServiceUnavailableException
          || t instanceof ServiceFailureException
          || t instanceof CommitStateUnknownException
          || t.getClass().getName().endsWith("NoHttpResponseException")
          || t.getClass().getName().endsWith("ConnectionClosedException")) {
        return true;
      }
      if (t.getCause() == t) {
        break;
      }
    }
    return false;
  }

  /**
   * Called with each failed attempt: returns normally after the pause if another attempt is due,
   * and rethrows the failure if it is no outage or the time is up.
   */
  void pauseOrThrow(RuntimeException failure) {
    if (!isOutage(failure)) {
      throw failure;
    }
    long now = System.nanoTime();
    if (failures++ == 0) {
      deadline = round == null ? now + timeoutNanos : round.deadline(now, timeoutNanos);
      pauseMs = FIRST_PAUSE_MS;
    }
    if (now - deadline >= 0) {
      throw failure;
    }
    try {
      // Never past the deadline, and not short of it either: the next failure then ends it.
      Thread.sleep(Math.min(pauseMs, (deadline - now) / 1_000_000 + 1));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw failure;
    }
    pauseMs = Math.min(pauseMs * 2, LONGEST_PAUSE_MS);
  }

  /** How many attempts failed so far. */
  int failures() {
    return failures;
  }
}
