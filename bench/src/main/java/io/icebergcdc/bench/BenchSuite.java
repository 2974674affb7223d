package io.icebergcdc.bench;

import java.io.IOException;
import java.io.InputStream;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Properties;
import java.util.Set;

/**
 * The benchmark suite: every writer of every workload, and the scaling of ours and Paimon, each run
 * in a JVM of its own ({@link SuiteRun}, with this JVM's options), one after the other, so that no
 * run inherits another's heap, JIT or page cache of its tables; then the results as a markdown file
 * and a chart ({@link SuiteReport}, {@link SuiteChart}).
 *
 * <pre>
 *   bash bench/suite.sh [--quick] [--changes N --keys N] [--workloads upserts,inserts,...]
 *                       [--scaling false] [--parallelism 2] [--checkpoint-interval 2s] [--out FILE]
 * </pre>
 */
public final class BenchSuite {

  /** The quick size, for a smoke run of a few minutes. */
  private static final long QUICK_CHANGES = 200_000;

  private static final long QUICK_KEYS = 20_000;

  /** One forked run: a writer on a workload's input, with a state backend. */
  record Run(String group, Writer writer, Input input, String stateBackend) {
    String name() {
      return String.format(
          Locale.ROOT,
          "%s-%s-%s%s",
          group,
          writer.id(),
          SuiteReport.size(input.changes(), input.keys()),
          stateBackend.equals("hashmap") ? "" : "-" + stateBackend);
    }
  }

  /** A run's figures, or null and the reason it failed. */
  record Result(Run run, Properties figures, String failure) {
    double get(String key) {
      return figures == null || !figures.containsKey(key)
          ? Double.NaN
          : Double.parseDouble(figures.getProperty(key));
    }
  }

  private BenchSuite() {}

  public static void main(String[] args) throws Exception {
    BenchOptions options =
        BenchOptions.parse(
            args,
            Set.of(
                "quick",
                "changes",
                "keys",
                "workloads",
                "scaling",
                "parallelism",
                "checkpoint-interval",
                "out"));
    boolean quick = options.has("quick");
    long changes = options.getLong("changes", quick ? QUICK_CHANGES : 5_000_000);
    long keys = options.getLong("keys", quick ? QUICK_KEYS : 500_000);
    List<Workload> workloads = new ArrayList<>();
    for (String id : options.get("workloads", allWorkloads()).split(",")) {
      workloads.add(Workload.of(id.trim()));
    }
    boolean scaling = Boolean.parseBoolean(options.get("scaling", "true"));
    Path out =
        Paths.get(
            options.get("out", "bench/results/suite-" + SuiteReport.size(changes, keys) + ".md"));
    String[] common = {
      "--parallelism", options.get("parallelism", "2"),
      "--checkpoint-interval", options.get("checkpoint-interval", "2s")
    };

    List<Run> runs = plan(workloads, scaling, changes, keys);
    Path work = Files.createTempDirectory("iceberg-cdc-suite");
    Path logs = Paths.get("bench/target/suite-logs");
    Files.createDirectories(logs);
    long start = System.nanoTime();
    List<Result> results = new ArrayList<>();
    for (int i = 0; i < runs.size(); i++) {
      Run run = runs.get(i);
      System.out.printf(
          Locale.ROOT,
          "[%d/%d, %.0f min] %s%n",
          i + 1,
          runs.size(),
          (System.nanoTime() - start) / 60e9,
          run.name());
      results.add(
          fork(run, common, work, logs.resolve(String.format("%02d-%s.log", i + 1, run.name()))));
    }
    double minutes = (System.nanoTime() - start) / 60e9;
    new SuiteReport(results, Integer.parseInt(common[1]), common[3], minutes).write(out);
    Path chart =
        out.resolveSibling(out.getFileName().toString().replaceFirst("\\.md$", "") + ".png");
    SuiteChart.write(results, chart);
    System.out.printf(Locale.ROOT, "%nWritten %s and %s in %.0f min%n", out, chart, minutes);
  }

  private static String allWorkloads() {
    return String.join(",", Arrays.stream(Workload.values()).map(Workload::id).toList());
  }

  /** The runs: each workload's writers, then the scaling sizes not run already. */
  static List<Run> plan(List<Workload> workloads, boolean scaling, long changes, long keys) {
    List<Run> runs = new ArrayList<>();
    for (Workload workload : workloads) {
      Input input = new Input(workload, changes, keys);
      for (Writer writer : writersOf(workload)) {
        runs.add(new Run(workload.id(), writer, input, "hashmap"));
      }
      if (workload == Workload.UPSERTS) {
        runs.add(new Run(workload.id(), Writer.OURS_DV, input, "rocksdb"));
      }
    }
    if (scaling) {
      long[][] sizes = {{changes / 5, keys / 5}, {changes, keys}, {changes * 4, keys * 10}};
      for (long[] size : sizes) {
        if (size[0] == changes && workloads.contains(Workload.UPSERTS)) {
          continue; // the in-order upserts ran at this size
        }
        Input input = new Input(Workload.UPSERTS, size[0], size[1]);
        for (Writer writer : List.of(Writer.OURS_DV, Writer.PAIMON, Writer.PLAIN)) {
          runs.add(new Run("scaling", writer, input, "hashmap"));
        }
      }
    }
    return runs;
  }

  /** The writers of a workload; the last Iceberg table of the list is its read reference. */
  static List<Writer> writersOf(Workload workload) {
    return switch (workload) {
      case UPSERTS ->
          List.of(
              Writer.OURS_DV,
              Writer.OURS_POSITION,
              Writer.OURS_EQUALITY,
              Writer.ICEBERG_UPSERT,
              Writer.PAIMON,
              Writer.ICEBERG_APPEND,
              Writer.PLAIN);
      // The peers keep the last arrival of a key, so they cannot apply disordered input.
      case DISORDERED -> List.of(Writer.OURS_DV, Writer.PLAIN);
      // Every change is a final row: the appended table is the plain one.
      case INSERTS ->
          List.of(Writer.OURS_DV, Writer.ICEBERG_UPSERT, Writer.PAIMON, Writer.ICEBERG_APPEND);
      case PARTITIONED, DEBEZIUM_JSON ->
          List.of(Writer.OURS_DV, Writer.ICEBERG_UPSERT, Writer.PAIMON, Writer.PLAIN);
    };
  }

  /** Runs one measured writer in a new JVM with this JVM's options and class path. */
  private static Result fork(Run run, String[] common, Path work, Path log) throws Exception {
    Path result = work.resolve(run.name() + ".properties");
    List<String> command = new ArrayList<>();
    command.add(ProcessHandle.current().info().command().orElse("java"));
    command.addAll(ManagementFactory.getRuntimeMXBean().getInputArguments());
    command.add("-Dbench.state-backend=" + run.stateBackend());
    command.addAll(
        List.of(
            "-cp",
            System.getProperty("java.class.path"),
            SuiteRun.class.getName(),
            "--workload",
            run.input().workload().id(),
            "--writer",
            run.writer().id(),
            "--changes",
            Long.toString(run.input().changes()),
            "--keys",
            Long.toString(run.input().keys()),
            "--work",
            work.resolve(run.name()).toString(),
            "--result",
            result.toString()));
    command.addAll(Arrays.asList(common));
    Process process =
        new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    int exit = process.waitFor();
    if (exit != 0 || !Files.exists(result)) {
      String tail = tail(log);
      System.out.println("  failed (exit " + exit + "), see " + log + ":\n" + tail);
      return new Result(run, null, lastLine(tail));
    }
    Properties figures = new Properties();
    try (InputStream in = Files.newInputStream(result)) {
      figures.load(in);
    }
    Result done = new Result(run, figures, null);
    if (run.writer() == Writer.PLAIN) {
      System.out.printf(Locale.ROOT, "  warm read %.2f s%n", done.get("readSeconds"));
      return done;
    }
    System.out.printf(
        Locale.ROOT,
        "  %,.0f changes/s, %.1f CPU s per million changes, warm read %.2f s%n",
        run.input().changes() / done.get("seconds"),
        done.get("cpuSeconds") / (run.input().changes() / 1e6),
        done.get("readSeconds"));
    return done;
  }

  private static String tail(Path log) throws IOException {
    List<String> lines = Files.readAllLines(log);
    return String.join("\n", lines.subList(Math.max(0, lines.size() - 15), lines.size()));
  }

  private static String lastLine(String text) {
    String[] lines = text.strip().split("\n");
    String line = lines.length == 0 ? "" : lines[lines.length - 1];
    for (String candidate : lines) {
      if (candidate.contains("Exception")) {
        line = candidate;
        break;
      }
    }
    return line.replace('|', '/');
  }
}
