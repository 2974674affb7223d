package io.icebergcdc.bench;

import io.icebergcdc.sink.DeleteMode;
import java.io.IOException;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.flink.api.common.JobExecutionResult;

/**
 * One measured run of the suite, in a JVM of its own that {@link BenchSuite} forks: a warm-up of
 * the same writer on a tenth of the same input, then the measured job, then the figures of its
 * table, written to a properties file for the suite to collect.
 *
 * <p>Figures: the job's net runtime (from Flink, without the local cluster's start), the JVM's
 * process CPU time over the measured job, the full size of the job's last checkpoint, each commit's
 * latency (its snapshot's time minus the time its checkpoint's barrier left the source, {@link
 * BarrierClock}), files added per commit, and the time of a warm read of the table (the first read
 * checks every row against the input, the second is timed). The plain table is not measured as a
 * writer: only its read, the reference.
 */
public final class SuiteRun {

  private SuiteRun() {}

  public static void main(String[] args) throws Exception {
    BenchOptions options =
        BenchOptions.parse(
            args,
            Set.of(
                "workload",
                "writer",
                "changes",
                "keys",
                "parallelism",
                "checkpoint-interval",
                "work",
                "result"));
    Writer writer = Writer.of(options.get("writer"));
    Input input =
        new Input(
            Workload.of(options.get("workload")),
            options.getLong("changes", 0),
            options.getLong("keys", 0));
    Path work = Paths.get(options.get("work"));
    Properties result;
    try (BenchJobs jobs =
        new BenchJobs(
            work.resolve("warehouse"),
            (int) options.getLong("parallelism", 2),
            options.millis("checkpoint-interval", "2s"))) {
      result = run(jobs, writer, input);
    } finally {
      delete(work);
    }
    try (OutputStream out = Files.newOutputStream(Paths.get(options.get("result")))) {
      result.store(out, writer.label() + ", " + input.workload().description());
    }
    // The MiniCluster's pools may hold non-daemon threads; the run is over.
    System.exit(0);
  }

  private static Properties run(BenchJobs jobs, Writer writer, Input input) throws Exception {
    if (input.workload() == Workload.DEBEZIUM_JSON) {
      DebeziumInput.generate(input);
    }
    Properties result = new Properties();
    result.setProperty("stateBackend", BenchJobs.STATE_BACKEND);
    if (writer != Writer.PLAIN) {
      System.out.println("Warm-up: " + writer.label() + ", " + input.tenth().label());
      jobs.job(writer, input.tenth(), "warm_up").env().execute("warm-up");
    }
    BarrierClock.reset();
    CheckpointSizeReporter.reset();
    BenchJobs.Job job = jobs.job(writer, input, "measured");
    System.out.println("Running: " + writer.label() + ", " + input.label());
    com.sun.management.OperatingSystemMXBean os =
        (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    ScheduledExecutorService sampler = Executors.newSingleThreadScheduledExecutor();
    sampler.scheduleAtFixedRate(CheckpointSizeReporter::sample, 100, 100, TimeUnit.MILLISECONDS);
    long cpuBefore = os.getProcessCpuTime();
    JobExecutionResult executed;
    try {
      executed = job.env().execute(writer.label());
    } finally {
      sampler.shutdownNow();
    }
    long cpu = os.getProcessCpuTime() - cpuBefore;
    CheckpointSizeReporter.sample();
    double seconds = executed.getNetRuntime(TimeUnit.MILLISECONDS) / 1000.0;
    System.out.printf(
        Locale.ROOT, "  %.1f s, %,.0f changes/s%n", seconds, input.changes() / seconds);
    result.setProperty("seconds", Double.toString(seconds));
    result.setProperty("cpuSeconds", Double.toString(cpu / 1e9));
    result.setProperty("checkpointBytes", Long.toString(CheckpointSizeReporter.last()));
    result.setProperty("checkpointMaxBytes", Long.toString(CheckpointSizeReporter.max()));

    BenchTable table = job.table();
    commits(table.commits(), result);
    Input rows = writer == Writer.ICEBERG_APPEND ? input.appended() : input;
    table.read(rows, true);
    double read = table.read(rows, false);
    System.out.printf(Locale.ROOT, "  warm read %.2f s (%,d rows)%n", read, input.finalRows());
    result.setProperty("readSeconds", Double.toString(read));
    if (table instanceof IcebergBenchTable iceberg && iceberg.table().currentSnapshot() != null) {
      // Rows in the table's data files, deleted or not: what a reader scans.
      Map<String, String> summary = iceberg.table().currentSnapshot().summary();
      result.setProperty("storedRows", summary.getOrDefault("total-records", "0"));
      // Delete files a reader may have to open, and the positions they hold.
      result.setProperty("liveDeleteFiles", summary.getOrDefault("total-delete-files", "0"));
      result.setProperty(
          "livePositionDeletes", summary.getOrDefault("total-position-deletes", "0"));
    }
    if (writer.ours()) {
      DeleteMode mode = writer == Writer.OURS_EQUALITY ? DeleteMode.EQUALITY : DeleteMode.POSITION;
      result.setProperty("stateEstimateBytesPerKey", Long.toString(StateSize.bytesPerKey(mode)));
    }
    return result;
  }

  /** Files added per commit and the latency of each checkpoint's first commit. */
  private static void commits(List<BenchTable.Commit> commits, Properties result) {
    long data = 0;
    long deletes = 0;
    List<Long> latencies = new ArrayList<>();
    Set<Long> seen = new HashSet<>();
    for (BenchTable.Commit commit : commits) {
      data += commit.dataFiles();
      deletes += commit.deleteFiles();
      Long injected = BarrierClock.injectedAt(commit.checkpointId());
      if (injected != null && seen.add(commit.checkpointId())) {
        latencies.add(commit.timeMillis() - injected);
      }
    }
    int count = Math.max(1, commits.size());
    result.setProperty("commits", Integer.toString(commits.size()));
    result.setProperty("dataFilesPerCommit", Double.toString((double) data / count));
    result.setProperty("deleteFilesPerCommit", Double.toString((double) deletes / count));
    result.setProperty("latencyCommits", Integer.toString(latencies.size()));
    if (!latencies.isEmpty()) {
      latencies.sort(Comparator.naturalOrder());
      result.setProperty("latencyMedianMs", Long.toString(latencies.get(latencies.size() / 2)));
      result.setProperty("latencyMaxMs", Long.toString(latencies.get(latencies.size() - 1)));
    }
  }

  private static void delete(Path root) throws IOException {
    if (!Files.exists(root)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(root)) {
      for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(path);
      }
    }
  }
}
