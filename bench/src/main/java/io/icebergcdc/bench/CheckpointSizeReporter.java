package io.icebergcdc.bench;

import java.util.Properties;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.Metric;
import org.apache.flink.metrics.MetricConfig;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.metrics.reporter.MetricReporter;
import org.apache.flink.metrics.reporter.MetricReporterFactory;

/**
 * Catches the JobManager's gauge of the last completed checkpoint's full size, so that a benchmark
 * can read the size of the state its job checkpointed. The benchmark's MiniCluster runs in its JVM,
 * so the gauge is held in a static field; {@link #sample()} reads it (the benchmark calls it while
 * its job runs), and its last value is read again when the job removes it.
 */
public final class CheckpointSizeReporter implements MetricReporter {

  private static final String FULL_SIZE = "lastCheckpointFullSize";
  private static final AtomicReference<Gauge<?>> GAUGE = new AtomicReference<>();
  private static final AtomicLong LAST = new AtomicLong();
  private static final AtomicLong MAX = new AtomicLong();

  /** Adds this reporter to a job's configuration. */
  static void configure(Configuration config) {
    config.setString("metrics.reporter.bench.factory.class", Factory.class.getName());
  }

  /** Forgets the sizes of earlier jobs. */
  static void reset() {
    LAST.set(0);
    MAX.set(0);
  }

  /** Reads the gauge, if a job has one. */
  static void sample() {
    Gauge<?> gauge = GAUGE.get();
    if (gauge != null && gauge.getValue() instanceof Number size && size.longValue() > 0) {
      LAST.set(size.longValue());
      MAX.accumulateAndGet(size.longValue(), Math::max);
    }
  }

  /** The full size of the last checkpoint seen, in bytes. */
  static long last() {
    return LAST.get();
  }

  /** The largest full size of a checkpoint seen, in bytes. */
  static long max() {
    return MAX.get();
  }

  @Override
  public void open(MetricConfig config) {}

  @Override
  public void close() {}

  @Override
  public void notifyOfAddedMetric(Metric metric, String name, MetricGroup group) {
    if (FULL_SIZE.equals(name) && metric instanceof Gauge<?> gauge) {
      GAUGE.set(gauge);
    }
  }

  @Override
  public void notifyOfRemovedMetric(Metric metric, String name, MetricGroup group) {
    if (FULL_SIZE.equals(name) && metric == GAUGE.get()) {
      sample();
      GAUGE.set(null);
    }
  }

  /** Made by Flink's metric registry from {@code metrics.reporter.bench.factory.class}. */
  public static final class Factory implements MetricReporterFactory {
    @Override
    public MetricReporter createMetricReporter(Properties properties) {
      return new CheckpointSizeReporter();
    }
  }
}
