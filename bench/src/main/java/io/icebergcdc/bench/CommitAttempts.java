package io.icebergcdc.bench;

import java.util.Map;
import java.util.TreeMap;
import org.apache.iceberg.metrics.CommitReport;
import org.apache.iceberg.metrics.CounterResult;
import org.apache.iceberg.metrics.MetricsReport;
import org.apache.iceberg.metrics.MetricsReporter;

/**
 * Counts Iceberg's commit reports in this JVM, as the catalog's {@code metrics-reporter-impl}: per
 * operation, the commits and the attempts beyond the first that each needed (a commit whose
 * metadata changed under it is retried by Iceberg on the new metadata).
 */
public final class CommitAttempts implements MetricsReporter {

  private static final Map<String, long[]> BY_OPERATION = new TreeMap<>();

  static synchronized void reset() {
    BY_OPERATION.clear();
  }

  /** Per operation: commits, commits that needed more than one attempt, extra attempts. */
  static synchronized Map<String, long[]> snapshot() {
    Map<String, long[]> copy = new TreeMap<>();
    BY_OPERATION.forEach((k, v) -> copy.put(k, v.clone()));
    return copy;
  }

  @Override
  public void report(MetricsReport report) {
    if (report instanceof CommitReport commit) {
      CounterResult attempts = commit.commitMetrics().attempts();
      long n = attempts == null ? 1 : attempts.value();
      synchronized (CommitAttempts.class) {
        long[] counts = BY_OPERATION.computeIfAbsent(commit.operation(), o -> new long[3]);
        counts[0]++;
        if (n > 1) {
          counts[1]++;
          counts[2] += n - 1;
        }
      }
    }
  }
}
