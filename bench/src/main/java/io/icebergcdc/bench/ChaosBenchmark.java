package io.icebergcdc.bench;

import io.icebergcdc.bench.chaos.Injection;
import io.icebergcdc.commit.OrphanFiles;
import io.icebergcdc.commit.SnapshotSummaryKeys;
import io.icebergcdc.jobs.Checkpoints;
import io.icebergcdc.jobs.demo.ChangelogGenerator;
import io.icebergcdc.localkafka.LocalKafkaBroker;
import io.icebergcdc.locallake.LocalRestCatalog;
import io.icebergcdc.sink.CatalogDefinition;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.GenericFileWriterFactory;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.DataWriter;
import org.apache.iceberg.io.OutputFileFactory;

/**
 * The chaos run (issue: tables that stay healthy through failures): one Kafka apply job on the REST
 * catalog, run for a long time while changes with disorder and duplicates arrive, through a hundred
 * failures of mixed kinds, each followed by its recovery before the next:
 *
 * <ul>
 *   <li>{@code sigkill}: the job's whole JVM is killed (SIGKILL) and started again from its latest
 *       retained checkpoint;
 *   <li>{@code writer}, {@code file-io}, {@code before-commit}, {@code after-commit}: an exception
 *       in a writer creating a data file, in the committer writing a manifest mid-commit, and in
 *       the committer just before and just after its Iceberg commit ({@link Injection}); Flink
 *       restarts the job in its JVM;
 *   <li>{@code catalog-outage}: the REST catalog server is stopped for 2 to 8 s;
 *   <li>{@code compaction}: another writer rewrites all the table's data files into one, committing
 *       concurrently with the job's commits.
 * </ul>
 *
 * A failure counts as survived when the job commits twice after it. At the end a last run of the
 * job (which removes every orphan after each commit) catches up and stops with a savepoint; then
 * the table must equal the changelog's reference model, every checkpoint must have been committed
 * once (by the summaries' job and checkpoint ids), every file the table references must exist, and
 * no file under the table's location may be unreferenced.
 *
 * <pre>
 *   bash bench/chaos.sh [--failures 100] [--changes-per-failure 2000] [--keys 5000] [--seed 7]
 *       [--checkpoint-interval 1s] [--out FILE]
 * </pre>
 */
public final class ChaosBenchmark {

  static final List<String> KINDS =
      List.of(
          "sigkill",
          "writer",
          "file-io",
          "before-commit",
          "after-commit",
          "catalog-outage",
          "compaction");

  private static final Set<String> ARMED_KINDS =
      Set.of("writer", "file-io", "before-commit", "after-commit");
  private static final Duration FIRE_TIMEOUT = Duration.ofMinutes(2);
  private static final Duration RECOVERY_TIMEOUT = Duration.ofMinutes(3);
  private static final String TOPIC = "chaos.public.items";
  private static final TableIdentifier TABLE = TableIdentifier.of("chaos", "items");

  private final Path work;
  private final Path control;
  private final String checkpointDir;
  private final String interval;
  private final LocalKafkaBroker broker;
  private final LocalRestCatalog rest;
  private final Catalog catalog;
  private Process child;
  private int children;
  private int unplannedExits;
  private long firstMetadataBytes;
  private int racingCompactions;
  private Producer producer;
  private int racingCompactionsWon;

  private ChaosBenchmark(
      Path work, String interval, LocalKafkaBroker broker, LocalRestCatalog rest) {
    this.work = work;
    this.control = work.resolve("control");
    this.checkpointDir = work.resolve("checkpoints").toString();
    this.interval = interval;
    this.broker = broker;
    this.rest = rest;
    this.catalog =
        CatalogDefinition.builder().type("rest").uri(rest.uri()).build().loader().loadCatalog();
  }

  public static void main(String[] args) throws Exception {
    BenchOptions options =
        BenchOptions.parse(
            args,
            Set.of(
                "failures", "changes-per-failure", "keys", "seed", "checkpoint-interval", "out"));
    int failures = (int) options.getLong("failures", 100);
    int perFailure = (int) options.getLong("changes-per-failure", 2000);
    int keys = (int) options.getLong("keys", 5000);
    long seed = options.getLong("seed", 7);
    String interval = options.get("checkpoint-interval", "1s");
    Path out = Paths.get(options.get("out", "bench/results/chaos-" + LocalDate.now() + ".md"));
    Outcome outcome = run(failures, perFailure, keys, seed, interval);
    Files.createDirectories(out.toAbsolutePath().getParent());
    Files.writeString(out, outcome.report(), StandardCharsets.UTF_8);
    System.out.println(outcome.report());
    System.out.println("chaos: written to " + out);
    if (!outcome.passed()) {
      System.exit(1);
    }
  }

  /** What a chaos run found: its report, and whether every check passed. */
  record Outcome(String report, boolean passed, Map<String, Integer> survived, Verdict verdict) {}

  /**
   * Runs the chaos: {@code failures} failures of the kinds in turn, in a random order, with {@code
   * perFailure} source changes over {@code keys} keys arriving during each.
   */
  static Outcome run(int failures, int perFailure, int keys, long seed, String interval)
      throws Exception {
    if (failures < KINDS.size()) {
      throw new IllegalArgumentException(
          "--failures must be at least " + KINDS.size() + " (one of each kind), not " + failures);
    }

    Path work = Files.createTempDirectory("iceberg-cdc-chaos");
    // A slice of changes before the first failure, one with each, and one for the last run.
    ChangelogGenerator.Changelog changelog =
        new ChangelogGenerator((failures + 2) * perFailure, keys, 0.05, 0.02, seed).generate();
    List<Map.Entry<String, String>> records = changelog.kafkaRecords();
    System.out.println("chaos: " + changelog.describe() + "; work in " + work);

    List<String> schedule = new ArrayList<>();
    for (int i = 0; i < failures; i++) {
      schedule.add(KINDS.get(i % KINDS.size()));
    }
    Random random = new Random(seed);
    Collections.shuffle(schedule, random);

    long started = System.nanoTime();
    try (LocalKafkaBroker broker = LocalKafkaBroker.start();
        LocalRestCatalog rest =
            LocalRestCatalog.start(work.resolve("warehouse").toString(), Map.of())) {
      broker.createTopic(TOPIC, 2);
      ChaosBenchmark chaos = new ChaosBenchmark(work, interval, broker, rest);
      // Slices of the events as delivered: the first before any failure, one per failure, the
      // rest for the last run.
      Producer producer =
          new Producer(broker, records, (records.size() + failures + 1) / (failures + 2));
      producer.start();
      chaos.producer = producer;
      Map<String, Integer> survived = new TreeMap<>();
      List<String> notes = new ArrayList<>();
      try {
        ((org.apache.iceberg.catalog.SupportsNamespaces) chaos.catalog)
            .createNamespace(org.apache.iceberg.catalog.Namespace.of("chaos"));
        chaos.startChild(null, false);
        producer.allow(1);
        chaos.awaitCommits(1, RECOVERY_TIMEOUT, "the first commit");
        chaos.firstMetadataBytes = metadataBytes(chaos.catalog.loadTable(TABLE));
        for (int i = 0; i < failures; i++) {
          String kind = schedule.get(i);
          String note = null;
          producer.allow(i + 2);
          if (kind.equals("compaction")) {
            // Another engine's compaction, first while the job commits (where it nearly always
            // loses the race for the rows the job's deletes touch), then, if it lost, while no
            // changes arrive; the job's next commits meet the files it replaced.
            chaos.awaitCommits(chaos.commits() + 1, RECOVERY_TIMEOUT, "a commit before compacting");
            if (!chaos.compact(3, true)) {
              producer.pause();
              chaos.awaitQuiet(Duration.ofSeconds(3));
              if (!chaos.compact(5, false)) {
                note = "the compaction lost the race five times even while no changes arrived";
              }
              producer.allow(i + 2);
            }
          }
          long before = chaos.commits();
          if (!kind.equals("compaction")) {
            note = chaos.inject(kind, random);
          }
          chaos.awaitCommits(
              before + 2, RECOVERY_TIMEOUT, "recovery from failure " + (i + 1) + " (" + kind + ")");
          survived.merge(kind, 1, Integer::sum);
          System.out.printf(
              Locale.ROOT,
              "chaos: failure %d/%d (%s) survived%s; %d commits so far%n",
              i + 1,
              failures,
              kind,
              note == null ? "" : ": " + note,
              chaos.commits());
          if (note != null) {
            notes.add(kind + ": " + note);
          }
        }
        notes.add(
            String.format(
                Locale.ROOT,
                "another engine's compaction, tried while the job committed every %s: %d of %d"
                    + " attempts committed (the others lost the race to the job's commits; it then"
                    + " ran while no changes arrived)",
                interval,
                chaos.racingCompactionsWon,
                chaos.racingCompactions));
        // The last run: from the latest checkpoint, with every orphan removed after its commits.
        chaos.kill();
        List<OrphanFiles.Candidate> before =
            OrphanFiles.unreferenced(chaos.catalog.loadTable(TABLE));
        notes.add(
            String.format(
                Locale.ROOT,
                "unreferenced files before the last run: %d (%d named by the job's writers and"
                    + " committer); metadata file %d bytes after the first commit, %s at the end",
                before.size(),
                before.stream().filter(c -> c.owner() != null).count(),
                chaos.firstMetadataBytes,
                "%METADATA%"));
        chaos.startChild(Checkpoints.latest(chaos.checkpointDir).orElse(null), true);
        producer.allow(Integer.MAX_VALUE / 2);
        producer.awaitAllSent(Duration.ofMinutes(5));
        Table table = chaos.catalog.loadTable(TABLE);
        List<String> differences = awaitModel(changelog, table, Duration.ofMinutes(5));
        Files.write(chaos.control.resolve("stop"), new byte[0]);
        if (!chaos.child.waitFor(3, TimeUnit.MINUTES) || chaos.child.exitValue() != 0) {
          throw new IllegalStateException(
              "the last run did not stop with a savepoint; see " + chaos.log(chaos.children));
        }
        table.refresh();
        differences = changelog.model().differences(table, 10);
        Verdict verdict = Verdict.of(table, differences);
        notes.replaceAll(n -> n.replace("%METADATA%", metadataBytes(table) + " bytes"));
        double minutes = (System.nanoTime() - started) / 60e9;
        String report =
            report(
                changelog,
                failures,
                survived,
                chaos.unplannedExits,
                verdict,
                notes,
                minutes,
                interval);
        return new Outcome(
            report, verdict.passed() && chaos.unplannedExits == 0, survived, verdict);
      } finally {
        producer.interrupt();
        chaos.kill();
      }
    }
  }

  /** Injects one failure of {@code kind}; returns what is worth noting about it, or null. */
  private String inject(String kind, Random random) throws Exception {
    switch (kind) {
      case "sigkill" -> {
        kill();
        startChild(Checkpoints.latest(checkpointDir).orElse(null), false);
        return null;
      }
      case "catalog-outage" -> {
        long millis = 2000 + random.nextInt(6000);
        rest.stop();
        Thread.sleep(millis);
        rest.start();
        return null;
      }
      default -> {
        if (!ARMED_KINDS.contains(kind)) {
          throw new IllegalArgumentException("unknown failure kind " + kind);
        }
        Injection.arm(control, kind);
        await(
            () -> Injection.fired(control, kind), FIRE_TIMEOUT, "the " + kind + " failure to fire");
        return null;
      }
    }
  }

  /**
   * Rewrites all the table's live rows into one data file, replacing its data and delete files, as
   * another engine's compaction would; tried again when it loses the race with the job's commits.
   */
  private boolean compact(int attempts, boolean racing) throws Exception {
    for (int attempt = 1; attempt <= attempts; attempt++) {
      if (racing) {
        racingCompactions++;
      }
      Table table = catalog.loadTable(TABLE);
      Snapshot base = table.currentSnapshot();
      Set<DataFile> dataFiles = new HashSet<>();
      Set<DeleteFile> deleteFiles = new HashSet<>();
      try (CloseableIterable<FileScanTask> tasks =
          table.newScan().useSnapshot(base.snapshotId()).planFiles()) {
        for (FileScanTask task : tasks) {
          dataFiles.add(task.file());
          deleteFiles.addAll(task.deletes());
        }
      }
      DataWriter<Record> writer =
          new GenericFileWriterFactory.Builder(table)
              .build()
              .newDataWriter(
                  OutputFileFactory.builderFor(table, 99, attempt)
                      .format(FileFormat.PARQUET)
                      .build()
                      .newOutputFile(),
                  table.spec(),
                  null);
      try (writer;
          CloseableIterable<Record> rows =
              IcebergGenerics.read(table).useSnapshot(base.snapshotId()).build()) {
        for (Record row : rows) {
          writer.write(row);
        }
      }
      DataFile written = writer.toDataFile();
      try {
        table
            .newRewrite()
            .validateFromSnapshot(base.snapshotId())
            .dataSequenceNumber(base.sequenceNumber())
            .rewriteFiles(dataFiles, deleteFiles, Set.of(written), Set.of())
            .commit();
        if (racing) {
          racingCompactionsWon++;
        }
        return true;
      } catch (RuntimeException e) {
        table.io().deleteFile(written.location());
      }
    }
    return false;
  }

  private void startChild(String restore, boolean last) throws IOException {
    children++;
    List<String> command = new ArrayList<>();
    command.add(ProcessHandle.current().info().command().orElse("java"));
    command.addAll(ManagementFactory.getRuntimeMXBean().getInputArguments());
    command.add("-Xmx2g");
    command.addAll(
        List.of(
            "-cp",
            System.getProperty("java.class.path"),
            ChaosJob.class.getName(),
            "--control",
            control.toString(),
            "--bootstrap",
            broker.bootstrapServers(),
            "--topic",
            TOPIC,
            "--catalog-uri",
            rest.uri(),
            "--checkpoint-dir",
            checkpointDir,
            "--checkpoint-interval",
            interval));
    if (restore != null) {
      command.addAll(List.of("--restore", restore));
    }
    if (last) {
      command.add("--final");
    }
    Files.createDirectories(control.resolve("armed"));
    Files.createDirectories(control.resolve("fired"));
    child =
        new ProcessBuilder(command)
            .redirectErrorStream(true)
            .redirectOutput(log(children).toFile())
            .start();
  }

  private Path log(int n) {
    return work.resolve("job-" + n + ".log");
  }

  private void kill() throws InterruptedException {
    if (child != null && child.isAlive()) {
      child.destroyForcibly().waitFor();
    }
  }

  /** The job's commits so far; -1 while the catalog cannot be reached. */
  private long commits() {
    try {
      if (!catalog.tableExists(TABLE)) {
        return 0;
      }
      long n = 0;
      for (Snapshot s : catalog.loadTable(TABLE).snapshots()) {
        if (s.summary().containsKey(SnapshotSummaryKeys.CHECKPOINT_ID)) {
          n++;
        }
      }
      return n;
    } catch (RuntimeException e) {
      return -1;
    }
  }

  /** Waits until the job has made no commit for {@code quiet}. */
  private void awaitQuiet(Duration quiet) throws Exception {
    long last = commits();
    long since = System.nanoTime();
    while (System.nanoTime() - since < quiet.toNanos()) {
      Thread.sleep(250);
      long now = commits();
      if (now != last) {
        last = now;
        since = System.nanoTime();
      }
    }
  }

  private void awaitCommits(long commits, Duration timeout, String what) throws Exception {
    await(() -> commits() >= commits, timeout, what);
  }

  /**
   * Waits for {@code done}, restarting a job that ended without being killed, and lending the job
   * changes to commit when it has committed all it was given and has none left to commit.
   */
  private void await(BooleanSupplier done, Duration timeout, String what) throws Exception {
    long deadline = System.nanoTime() + timeout.toNanos();
    long lastCommits = commits();
    long lastProgress = System.nanoTime();
    while (!done.getAsBoolean()) {
      long now = commits();
      if (now != lastCommits) {
        lastCommits = now;
        lastProgress = System.nanoTime();
      } else if (producer != null
          && System.nanoTime() - lastProgress > 2_000_000_000L
          && producer.lend()) {
        lastProgress = System.nanoTime();
      }
      if (!child.isAlive()) {
        unplannedExits++;
        System.out.println(
            "chaos: the job's JVM ended by itself (exit "
                + child.exitValue()
                + "), see "
                + log(children)
                + "; starting it again");
        startChild(Checkpoints.latest(checkpointDir).orElse(null), false);
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(
            "timed out waiting for " + what + "; the job's log is " + log(children));
      }
      Thread.sleep(250);
    }
  }

  private static long metadataBytes(Table table) {
    String location =
        ((org.apache.iceberg.HasTableOperations) table)
            .operations()
            .current()
            .metadataFileLocation();
    return table.io().newInputFile(location).getLength();
  }

  private static List<String> awaitModel(
      ChangelogGenerator.Changelog changelog, Table table, Duration timeout) throws Exception {
    long deadline = System.nanoTime() + timeout.toNanos();
    List<String> differences;
    do {
      Thread.sleep(1000);
      table.refresh();
      differences = changelog.model().differences(table, 10);
    } while (!differences.isEmpty() && System.nanoTime() < deadline);
    return differences;
  }

  /** Produces the changelog in slices of 100, two a second, up to what it is allowed. */
  private static final class Producer extends Thread {
    private final LocalKafkaBroker broker;
    private final List<Map.Entry<String, String>> records;
    private final int perStep;
    private final AtomicInteger allowed = new AtomicInteger();
    private final AtomicInteger borrowed = new AtomicInteger();
    private volatile int sent;
    private volatile boolean paused;
    private volatile Exception failure;

    Producer(LocalKafkaBroker broker, List<Map.Entry<String, String>> records, int perStep) {
      super("chaos-producer");
      setDaemon(true);
      this.broker = broker;
      this.records = records;
      this.perStep = perStep;
    }

    /** Allows the first {@code steps} slices of {@code perStep} changes to be produced. */
    void allow(int steps) {
      allowed.set(steps);
      paused = false;
    }

    void awaitAllSent(Duration timeout) throws Exception {
      long deadline = System.nanoTime() + timeout.toNanos();
      while (sent < records.size()) {
        if (failure != null) {
          throw failure;
        }
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException(
              "the producer sent only " + sent + " of " + records.size() + " changes");
        }
        Thread.sleep(100);
      }
    }

    /**
     * Lends a few changes from the later slices when the job waits for changes to commit (a
     * recovery that took longer than its slice lasted); false if none are left to lend.
     */
    boolean lend() {
      int limit = records.size() - perStep;
      if (paused || sent < Math.min(limit, (long) allowed.get() * perStep + borrowed.get())) {
        return true; // still sending
      }
      if (sent >= limit) {
        return false;
      }
      borrowed.addAndGet(200);
      return true;
    }

    /** Stops producing after the slice being sent; {@link #allow} resumes. */
    void pause() throws InterruptedException {
      paused = true;
      Thread.sleep(500);
    }

    int sent() {
      return sent;
    }

    @Override
    public void run() {
      try {
        while (!isInterrupted()) {
          // The last slice is kept for the last run.
          int limit =
              (int)
                  Math.min(
                      allowed.get() >= Integer.MAX_VALUE / 4
                          ? records.size()
                          : records.size() - perStep,
                      (long) allowed.get() * perStep + borrowed.get());
          boolean last = allowed.get() >= Integer.MAX_VALUE / 4;
          if (!paused && sent < limit) {
            // Two slices of 100 a second while failures are injected; what is left at once, for
            // the last run to catch up on.
            int end = Math.min(limit, sent + (last ? 10_000 : 100));
            broker.produce(TOPIC, records.subList(sent, end));
            sent = end;
          }
          if (!last) {
            Thread.sleep(500);
          }
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } catch (Exception e) {
        failure = e;
      }
    }
  }

  /** The checks at the end. */
  record Verdict(
      List<String> differences,
      int snapshots,
      Map<String, Integer> committedTwice,
      List<String> missingFiles,
      List<OrphanFiles.Candidate> orphans,
      long deletesFellBack) {

    static Verdict of(Table table, List<String> differences) {
      Map<String, Integer> commitsOf = new HashMap<>();
      int snapshots = 0;
      long fellBack = 0;
      for (Snapshot s : table.snapshots()) {
        snapshots++;
        Map<String, String> summary = s.summary();
        String checkpoint = summary.get(SnapshotSummaryKeys.CHECKPOINT_ID);
        if (checkpoint != null) {
          commitsOf.merge(
              summary.get(SnapshotSummaryKeys.JOB_ID) + "/" + checkpoint, 1, Integer::sum);
        }
        fellBack +=
            Long.parseLong(summary.getOrDefault(SnapshotSummaryKeys.DELETES_FELL_BACK, "0"));
      }
      Map<String, Integer> twice = new LinkedHashMap<>();
      commitsOf.forEach(
          (checkpoint, n) -> {
            if (n > 1) {
              twice.put(checkpoint, n);
            }
          });
      List<String> missing = new ArrayList<>();
      for (String path : OrphanFiles.referenced(table)) {
        if (!Files.exists(Paths.get(path))) {
          missing.add(path);
        }
      }
      return new Verdict(
          differences, snapshots, twice, missing, OrphanFiles.unreferenced(table), fellBack);
    }

    boolean passed() {
      return differences.isEmpty()
          && committedTwice.isEmpty()
          && missingFiles.isEmpty()
          && orphans.isEmpty();
    }
  }

  private static String report(
      ChangelogGenerator.Changelog changelog,
      int failures,
      Map<String, Integer> survived,
      int unplannedExits,
      Verdict verdict,
      List<String> notes,
      double minutes,
      String interval) {
    StringBuilder r = new StringBuilder();
    r.append(String.format(Locale.ROOT, "# Chaos run, %s%n%n", LocalDate.now()));
    r.append(
        String.format(
            Locale.ROOT,
            "One Kafka apply job on the REST catalog, %s checkpoints, parallelism 2, %.1f minutes:"
                + " %s.%n%n",
            interval,
            minutes,
            changelog.describe()));
    r.append("| failure | injected and survived |\n|---|---:|\n");
    int total = 0;
    for (String kind : KINDS) {
      int n = survived.getOrDefault(kind, 0);
      total += n;
      r.append(String.format(Locale.ROOT, "| %s | %d |%n", kind, n));
    }
    r.append(String.format(Locale.ROOT, "| **all** | **%d of %d** |%n%n", total, failures));
    r.append(
        String.format(
            Locale.ROOT,
            "- table equals the reference model: %s%n",
            verdict.differences().isEmpty() ? "yes" : "NO: " + verdict.differences()));
    r.append(
        String.format(
            Locale.ROOT,
            "- checkpoints committed more than once: %s (of %d snapshots)%n",
            verdict.committedTwice().isEmpty() ? "none" : verdict.committedTwice(),
            verdict.snapshots()));
    r.append(
        String.format(
            Locale.ROOT,
            "- files referenced but missing: %s%n",
            verdict.missingFiles().isEmpty() ? "none" : verdict.missingFiles()));
    r.append(
        String.format(
            Locale.ROOT,
            "- unreferenced files left after the last run's orphan removal: %s%n",
            verdict.orphans().isEmpty() ? "none" : verdict.orphans()));
    r.append(
        String.format(
            Locale.ROOT,
            "- deletes that fell back to equality deletes (after the concurrent compactions): %d%n",
            verdict.deletesFellBack()));
    r.append(
        String.format(
            Locale.ROOT,
            "- the job's JVM ending by itself (not killed): %d times%n",
            unplannedExits));
    for (String note : notes) {
      r.append("- ").append(note).append('\n');
    }
    return r.toString();
  }
}
