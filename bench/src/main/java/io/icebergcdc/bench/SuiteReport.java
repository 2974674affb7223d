package io.icebergcdc.bench;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** Writes the suite's results as markdown: one table per workload and one of the scaling runs. */
final class SuiteReport {

  private static final Map<String, String> NOTES =
      Map.of(
          "upserts",
          "The append writes every change as a new row: the most any writer can do, and its table"
              + " holds all the changes. Paimon's table is no Iceberg table: its read is Paimon's"
              + " own reader, for reference. The RocksDB row is the same writer with RocksDB state"
              + " (full checkpoints).",
          "disordered",
          "Ours only: Iceberg's upsert and Paimon keep the last arrival of a key, so they cannot"
              + " apply this input correctly (their tables would hold stale rows). The table was"
              + " checked row by row against the model of the input.",
          "inserts",
          "Every change is a new key; the appended table holds exactly the final rows, so it is"
              + " the read reference.",
          "partitioned",
          "A DATE column derived from the key (a key stays in one of 30 partitions); Iceberg's"
              + " upsert and Paimon have the day in their key, as they require.",
          "debezium-json",
          "The events are generated in memory before the job, without the schema part. Ours"
              + " parses them with the project's DebeziumJsonParser (as its Kafka job does); the"
              + " peers with Flink's debezium-json format, which makes an update-before and an"
              + " update-after row of each update. Parsing runs beside the source, at parallelism 1.");

  private final List<BenchSuite.Result> results;
  private final int parallelism;
  private final String checkpointInterval;
  private final double minutes;

  SuiteReport(
      List<BenchSuite.Result> results, int parallelism, String checkpointInterval, double minutes) {
    this.results = results;
    this.parallelism = parallelism;
    this.checkpointInterval = checkpointInterval;
    this.minutes = minutes;
  }

  /** A size as a short label: 5000000 and 500000 as {@code 5m-500k}. */
  static String size(long changes, long keys) {
    return count(changes) + "-" + count(keys);
  }

  static String count(long n) {
    if (n >= 1_000_000 && n % 100_000 == 0) {
      return (n % 1_000_000 == 0 ? Long.toString(n / 1_000_000) : (n / 100_000) / 10.0) + "m";
    }
    return n >= 1000 && n % 1000 == 0 ? n / 1000 + "k" : Long.toString(n);
  }

  void write(Path out) throws IOException {
    StringBuilder md = new StringBuilder();
    md.append("# Benchmark suite, ").append(LocalDate.now()).append("\n\n");
    md.append(
        String.format(
            Locale.ROOT,
            "Machine: %d cores (%s), %.0f GiB of memory, Java %s (%s), JVM options of"
                + " bench/java.sh%s. Parallelism %d, checkpoints every %s. The suite took %.0f"
                + " minutes.%n%n",
            Runtime.getRuntime().availableProcessors(),
            cpuModel(),
            ((com.sun.management.OperatingSystemMXBean)
                        ManagementFactory.getOperatingSystemMXBean())
                    .getTotalMemorySize()
                / (double) (1L << 30),
            System.getProperty("java.version"),
            System.getProperty("java.vm.name"),
            collector(),
            parallelism,
            checkpointInterval,
            minutes));
    md.append(
        "Each row is a JVM of its own that first runs the same writer on a tenth of the input"
            + " (warm-up). changes/s: over the job's net runtime as Flink reports it. CPU: the"
            + " process's CPU time over the measured job, per million changes. State: our"
            + " serializers' bytes per key (heap estimate), and the full size of the job's largest"
            + " checkpoint per key. Files: added per commit (snapshot). Commit latency: snapshot"
            + " time minus the time its checkpoint's barrier left the source, median / max."
            + " Read: the second full read of the table through Iceberg's generic reader (deletes"
            + " applied), the first having checked every row against the input; vs plain: over"
            + " the read of a plain table of the same final rows.\n\n");
    Map<String, List<BenchSuite.Result>> groups = new LinkedHashMap<>();
    for (BenchSuite.Result result : results) {
      groups.computeIfAbsent(result.run().group(), g -> new ArrayList<>()).add(result);
    }
    for (Map.Entry<String, List<BenchSuite.Result>> group : groups.entrySet()) {
      if (!group.getKey().equals("scaling")) {
        workload(md, group.getValue());
      }
    }
    scaling(md);
    Files.createDirectories(out.toAbsolutePath().getParent());
    Files.writeString(out, md.toString(), StandardCharsets.UTF_8);
  }

  private void workload(StringBuilder md, List<BenchSuite.Result> group) {
    Input input = group.get(0).run().input();
    md.append("## ").append(input.workload().description()).append(", ");
    md.append(input.label()).append("\n\n");
    md.append(
        "| writer | changes/s | CPU s / M changes | state B/key (estimate) | checkpoint B/key"
            + " | data files / commit | delete files / commit | commit latency (s): median / max (commits) | read (s)"
            + " | read vs plain |\n");
    md.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    double plain = reference(group);
    for (BenchSuite.Result result : group) {
      BenchSuite.Run run = result.run();
      md.append("| ").append(label(run)).append(" | ");
      if (result.figures() == null) {
        md.append("failed: ").append(result.failure()).append(" |||||||||\n");
        continue;
      }
      boolean plainRow = run.writer() == Writer.PLAIN;
      boolean allRows = run.writer() == Writer.ICEBERG_APPEND && !input.insertOnly();
      md.append(plainRow ? "-" : rate(result))
          .append(" | ")
          .append(plainRow ? "-" : cpu(result))
          .append(" | ")
          .append(number(result.get("stateEstimateBytesPerKey")))
          .append(" | ")
          .append(plainRow ? "-" : checkpointPerKey(result))
          .append(" | ")
          .append(decimal(result.get("dataFilesPerCommit"), 1))
          .append(" | ")
          .append(
              run.writer() == Writer.PAIMON ? "-" : decimal(result.get("deleteFilesPerCommit"), 1))
          .append(" | ")
          .append(plainRow ? "-" : latency(result))
          .append(" | ")
          .append(decimal(result.get("readSeconds"), 2))
          .append(" | ")
          .append(allRows ? "(all rows)" : ratio(result.get("readSeconds"), plain))
          .append(" |\n");
    }
    md.append("\n").append(NOTES.getOrDefault(group.get(0).run().group(), "")).append("\n\n");
  }

  private void scaling(StringBuilder md) {
    List<BenchSuite.Result> scaling = new ArrayList<>();
    for (BenchSuite.Result result : results) {
      BenchSuite.Run run = result.run();
      boolean upserts = run.input().workload() == Workload.UPSERTS;
      boolean writer = run.writer() == Writer.OURS_DV || run.writer() == Writer.PAIMON;
      if (upserts && writer && run.stateBackend().equals("hashmap")) {
        scaling.add(result);
      }
    }
    if (scaling.size() <= 2) {
      return;
    }
    scaling.sort(Comparator.comparingLong(r -> r.run().input().changes()));
    md.append("## Scaling: in-order upserts\n\n");
    md.append(
        "| changes | keys | writer | changes/s | CPU s / M changes | state B/key (estimate) |"
            + " checkpoint B/key | read vs plain |\n");
    md.append("| ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: |\n");
    for (BenchSuite.Result result : scaling) {
      Input input = result.run().input();
      md.append(String.format(Locale.ROOT, "| %,d | %,d | ", input.changes(), input.keys()));
      md.append(label(result.run())).append(" | ");
      if (result.figures() == null) {
        md.append("failed: ").append(result.failure()).append(" ||||\n");
        continue;
      }
      md.append(rate(result))
          .append(" | ")
          .append(cpu(result))
          .append(" | ")
          .append(number(result.get("stateEstimateBytesPerKey")))
          .append(" | ")
          .append(checkpointPerKey(result))
          .append(" | ")
          .append(ratio(result.get("readSeconds"), plainOf(input)))
          .append(" |\n");
    }
    md.append("\nPaimon's read is its own reader's; the plain table is read through Iceberg's.\n");
  }

  /** The read time of the plain table of a workload's group. */
  private static double reference(List<BenchSuite.Result> group) {
    for (BenchSuite.Result result : group) {
      Writer writer = result.run().writer();
      boolean insertOnly = result.run().input().insertOnly();
      if (writer == Writer.PLAIN || (insertOnly && writer == Writer.ICEBERG_APPEND)) {
        return result.get("readSeconds");
      }
    }
    return Double.NaN;
  }

  private double plainOf(Input input) {
    for (BenchSuite.Result result : results) {
      if (result.run().writer() == Writer.PLAIN && result.run().input().equals(input)) {
        return result.get("readSeconds");
      }
    }
    return Double.NaN;
  }

  private static String label(BenchSuite.Run run) {
    String label = run.writer().label();
    if (run.writer() == Writer.PAIMON) {
      label +=
          ", " + (run.input().workload() == Workload.PARTITIONED ? "2 buckets a day" : "2 buckets");
    }
    return run.stateBackend().equals("hashmap")
        ? label
        : label + ", " + run.stateBackend() + " state";
  }

  private static String rate(BenchSuite.Result result) {
    return number(result.run().input().changes() / result.get("seconds"));
  }

  private static String cpu(BenchSuite.Result result) {
    return decimal(result.get("cpuSeconds") / (result.run().input().changes() / 1e6), 1);
  }

  private static String checkpointPerKey(BenchSuite.Result result) {
    double bytes = result.get("checkpointMaxBytes");
    return bytes > 0 ? number(bytes / result.run().input().finalRows()) : "-";
  }

  private static String latency(BenchSuite.Result result) {
    double median = result.get("latencyMedianMs");
    if (Double.isNaN(median)) {
      return "-";
    }
    return String.format(
        Locale.ROOT,
        "%.1f / %.1f (%d)",
        median / 1000,
        result.get("latencyMaxMs") / 1000,
        (long) result.get("latencyCommits"));
  }

  private static String ratio(double read, double plain) {
    return Double.isNaN(read) || Double.isNaN(plain) ? "-" : decimal(read / plain, 2) + "x";
  }

  private static String number(double value) {
    return Double.isNaN(value) ? "-" : String.format(Locale.ROOT, "%,.0f", value);
  }

  private static String decimal(double value, int digits) {
    return Double.isNaN(value) ? "-" : String.format(Locale.ROOT, "%." + digits + "f", value);
  }

  private static String collector() {
    for (String arg : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
      if (arg.startsWith("-XX:+Use") && arg.endsWith("GC")) {
        return " (" + arg.substring(8) + ")";
      }
    }
    return " (G1, the default collector)";
  }

  private static String cpuModel() {
    try {
      for (String line : Files.readAllLines(Paths.get("/proc/cpuinfo"))) {
        if (line.startsWith("model name")) {
          return line.substring(line.indexOf(':') + 1).trim();
        }
      }
    } catch (IOException e) {
      // not Linux: the model is not known
    }
    return "model unknown";
  }
}
