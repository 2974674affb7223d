package io.icebergcdc.bench;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Applies one generated stream of upserts to Iceberg several ways, one after the other in this JVM,
 * and reads the resulting tables back:
 *
 * <ul>
 *   <li>this project's sink with position deletes, deletion vectors and equality deletes;
 *   <li>Iceberg's own {@code FlinkSink} in upsert mode;
 *   <li>Iceberg's {@code FlinkSink} appending as many rows (the practical ceiling of any writer);
 *   <li>Paimon's primary-key table;
 *   <li>a plain table holding only the final rows, whose read time is the reference.
 * </ul>
 *
 * <p>The input is {@link Input}'s in-order upserts. Since one writer's run leaves its heap to the
 * next, the figures depend on the order; {@link BenchSuite} runs each writer in a JVM of its own.
 * With {@code --only}, one writer runs after the warm-up and nothing is read: for profiling.
 */
public final class ApplyBenchmark {

  private final Input input;
  private final BenchJobs jobs;

  private ApplyBenchmark(Input input, BenchJobs jobs) {
    this.input = input;
    this.jobs = jobs;
  }

  public static void main(String[] args) throws Exception {
    BenchOptions options =
        BenchOptions.parse(
            args, Set.of("changes", "keys", "parallelism", "checkpoint-interval", "out", "only"));
    long changes = options.getLong("changes", 2_000_000);
    long keys = options.getLong("keys", 200_000);
    Path out = Paths.get(options.get("out", "bench/results/apply-" + LocalDate.now() + ".md"));
    Path warehouse = Files.createTempDirectory("iceberg-cdc-bench");
    try (BenchJobs jobs =
        new BenchJobs(
            warehouse,
            (int) options.getLong("parallelism", 2),
            options.millis("checkpoint-interval", "2s"))) {
      ApplyBenchmark benchmark =
          new ApplyBenchmark(new Input(Workload.UPSERTS, changes, keys), jobs);
      String only = options.get("only");
      benchmark.warmUp();
      if (only != null) {
        benchmark.single(only);
      } else {
        benchmark.run(out);
      }
    }
  }

  private record Result(Writer writer, double applySeconds, BenchTable table) {}

  private void run(Path out) throws Exception {
    List<Result> results = new ArrayList<>();
    for (Writer writer :
        List.of(
            Writer.OURS_POSITION,
            Writer.OURS_DV,
            Writer.OURS_EQUALITY,
            Writer.ICEBERG_UPSERT,
            Writer.ICEBERG_APPEND,
            Writer.PAIMON)) {
      results.add(timed(writer, input));
    }
    BenchJobs.Job plainJob = jobs.job(Writer.PLAIN, input, "plain");
    plainJob.env().execute("plain table");
    IcebergBenchTable plain = (IcebergBenchTable) plainJob.table();

    double plainRead = bestRead(plain, input, true);
    StringBuilder report = new StringBuilder();
    report.append(
        String.format(
            Locale.ROOT,
            "Apply benchmark, %s: %,d upserts over %,d keys, parallelism %d, checkpoints every"
                + " %d ms; %d cores, Java %s.%n%n",
            LocalDate.now(),
            input.changes(),
            input.keys(),
            jobs.parallelism(),
            jobs.checkpointMillis(),
            Runtime.getRuntime().availableProcessors(),
            System.getProperty("java.version")));
    report.append(
        "| writer | changes/s | table read (s) | read vs plain | data files | delete files"
            + " (equality) |\n");
    report.append("| --- | ---: | ---: | ---: | ---: | ---: |\n");
    for (Result r : results) {
      boolean append = r.writer() == Writer.ICEBERG_APPEND;
      double seconds = bestRead(r.table(), append ? input.appended() : input, true);
      String files;
      if (r.table() instanceof IcebergBenchTable iceberg) {
        long[] counts = iceberg.files();
        files = String.format(Locale.ROOT, "%d | %d (%d)", counts[0], counts[1], counts[2]);
      } else {
        files = ((PaimonBenchTable) r.table()).dataFiles() + " | -";
      }
      String label =
          r.writer() == Writer.PAIMON
              ? r.writer().label()
                  + ", "
                  + jobs.parallelism()
                  + " buckets (its own format, read by its own reader)"
              : r.writer().label();
      report.append(
          String.format(
              Locale.ROOT,
              "| %s | %,.0f | %.2f | %s | %s |%n",
              label,
              input.changes() / r.applySeconds(),
              seconds,
              append
                  ? "(all " + input.changes() + " rows)"
                  : String.format(Locale.ROOT, "%.2fx", seconds / plainRead),
              files));
    }
    report.append(
        String.format(
            Locale.ROOT,
            "| plain table of the final rows | - | %.2f | 1.00x | %d | 0 |%n",
            plainRead,
            plain.files()[0]));
    report.append(
        String.format(
            Locale.ROOT,
            "%nState per key of iceberg-cdc in position mode, as its serializers write it: %s.%n",
            StateSize.describe()));
    System.out.print(report);
    Files.createDirectories(out.toAbsolutePath().getParent());
    Files.writeString(out, report.toString(), StandardCharsets.UTF_8);
    System.out.println("\nWritten to " + out);
  }

  private void single(String writer) throws Exception {
    if (writer.equals("ours-dv-disordered")) {
      Input disordered = new Input(Workload.DISORDERED, input.changes(), input.keys());
      Result result = timed(Writer.OURS_DV, disordered);
      double read = bestRead(result.table(), disordered, true);
      System.out.printf(Locale.ROOT, "  table read %.2f s (%d rows)%n", read, input.keys());
      return;
    }
    try {
      timed(Writer.of(writer), input);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "--only takes ours-position, ours-dv, ours-dv-disordered, ours-equality,"
              + " iceberg-upsert, iceberg-append or paimon, not "
              + writer,
          e);
    }
  }

  /** Runs each kind of job once on a tenth of the input, so that no measured run pays for JIT. */
  private void warmUp() throws Exception {
    jobs.job(Writer.OURS_DV, input.tenth(), "warm_up_ours").env().execute("warm-up");
    jobs.job(Writer.ICEBERG_UPSERT, input.tenth(), "warm_up_upsert").env().execute("warm-up");
  }

  private Result timed(Writer writer, Input input) throws Exception {
    String name = writer.id().replace('-', '_');
    BenchJobs.Job job = jobs.job(writer, input, name);
    System.out.println("Running: " + writer.label());
    long start = System.nanoTime();
    job.env().execute(writer.label());
    double seconds = (System.nanoTime() - start) / 1e9;
    System.out.printf(
        Locale.ROOT, "  %.1f s, %,.0f changes/s%n", seconds, input.changes() / seconds);
    return new Result(writer, seconds, job.table());
  }

  /** The best of three full reads, deletes applied; the first also checks every row if asked. */
  private static double bestRead(BenchTable table, Input input, boolean check) throws Exception {
    double best = table.read(input, check);
    for (int run = 1; run < 3; run++) {
      best = Math.min(best, table.read(input, false));
    }
    return best;
  }
}
