package io.icebergcdc.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.icebergcdc.jobs.demo.ChangelogGenerator;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Runs the shaded job jar the way a user does: {@code java -jar iceberg-cdc-jobs.jar ...}. */
class JobJarITCase {

  @TempDir Path dir;

  @BeforeAll
  static void jarIsBuilt() {
    JobJar.assertBuilt();
  }

  private JobJar.Result run(String... args) throws Exception {
    return JobJar.run(dir, List.of(args));
  }

  /** Runs {@code apply --source file} on {@code file} into the warehouse {@code wh}. */
  private JobJar.Result apply(Path file, String... more) throws Exception {
    return applyInto("wh", file, more);
  }

  private JobJar.Result applyInto(String warehouse, Path file, String... more) throws Exception {
    List<String> args =
        new ArrayList<>(
            List.of(
                "apply", "--source", "file", "--path", file.toString(), "--warehouse", warehouse));
    args.addAll(List.of(more));
    return run(args.toArray(new String[0]));
  }

  private Path changes(boolean withMalformedLine) throws IOException {
    ChangelogGenerator.Changelog changelog =
        new ChangelogGenerator(3_000, 300, 0.1, 0.02, 7L).generate();
    List<String> lines = new ArrayList<>(changelog.lines());
    if (withMalformedLine) {
      lines.add(1500, "{\"op\":\"z\",\"after\":{\"id\":1},\"source\":{\"lsn\":1}}");
    }
    Path file = dir.resolve("changes.jsonl");
    Files.write(file, lines, StandardCharsets.UTF_8);
    return file;
  }

  /**
   * The job jar, and these tests' class path, hold cdc-debezium's replacement of Debezium's event
   * meter, not Debezium's: the replacement has a nested {@code LastEvent}, Debezium's a {@code $1}.
   */
  @Test
  void debeziumsEventMeterIsTheProjectsReplacement() throws Exception {
    String meter = "io/debezium/pipeline/meters/CommonEventMeter";
    try (java.util.jar.JarFile jar = new java.util.jar.JarFile(JobJar.JAR.toFile())) {
      assertThat(jar.getEntry(meter + ".class")).isNotNull();
      assertThat(jar.getEntry(meter + "$LastEvent.class")).isNotNull();
      assertThat(jar.getEntry(meter + "$1.class")).isNull();
    }
    Class<?> loaded = Class.forName(meter.replace('/', '.'));
    assertThat(loaded.getDeclaredClasses()).extracting(Class::getSimpleName).contains("LastEvent");
  }

  @Test
  void theDemoAppliesAChangelogAndChecksTheTable() throws Exception {
    JobJar.Result result = run("demo", "--changes", "4000", "--keys", "400", "--warehouse", "wh");
    assertThat(result.status()).as(result.err()).isZero();
    assertThat(result.out())
        .contains("out of order")
        .contains("Snapshots (oldest first)")
        .contains("lsn=")
        .contains("Check: PASSED");
  }

  @Test
  void applyThenInspectShowsWhatEachCommitDid() throws Exception {
    Path file = changes(false);
    // As the README's examples give it: relative, with "./" (whose committed files the orphan
    // removal after the first commit once took for orphans).
    JobJar.Result apply =
        applyInto(
            "./wh",
            file,
            "--table",
            "inventory.items",
            "--primary-key",
            "id",
            "--partition-by",
            "bucket(2, id)",
            "--checkpoint-interval",
            "500ms",
            "--parallelism",
            "2");
    assertThat(apply.status()).as(apply.err()).isZero();

    JobJar.Result inspect = run("inspect", "--warehouse", "wh", "--table", "inventory.items");
    assertThat(inspect.status()).as(inspect.err()).isZero();
    assertThat(inspect.out())
        .contains("primary key [id]")
        // One commit (an append) or several (appends and row deltas), as the checkpoints fall;
        // the first checkpoint may come before the first change, and commit nothing.
        .containsPattern("  \\d+ +\\S+ +(append|overwrite) +\\d+ ")
        .contains("lsn=")
        .contains("id_bucket=0")
        .contains("id_bucket=1")
        .containsPattern("Rows \\(deletes applied\\): \\d+")
        // The table apply created keeps few metadata files, and says so.
        .contains("Health:")
        .containsPattern("snapshots kept +\\d+")
        .containsPattern("manifests +\\d+ data, \\d+ delete")
        // A job that ran without failures leaves nothing unreferenced.
        .contains("unreferenced files     none")
        .contains("metadata retention     old metadata files deleted after commits");
  }

  @Test
  void aMalformedRecordFailsTheJobWithOneLineNamingIt() throws Exception {
    Path file = changes(true);
    JobJar.Result result = apply(file, "--table", "db.t", "--primary-key", "id");
    assertThat(result.status()).isEqualTo(1);
    String last = result.lastErrorLine();
    assertThat(last)
        .startsWith("error: ")
        .contains(dir.resolve("changes.jsonl") + ":1501, key id=1")
        .contains("unknown operation 'z'")
        .contains("\"op\":\"z\"");
  }

  @Test
  void aMalformedRecordGoesToTheDeadLetterOutputWhenAskedFor() throws Exception {
    Path file = changes(true);
    JobJar.Result result =
        apply(file, "--table", "db.t", "--primary-key", "id", "--dead-letter-path", "dead");
    assertThat(result.status()).as(result.err()).isZero();
    List<String> letters = new ArrayList<>();
    try (Stream<Path> files = Files.walk(dir.resolve("dead"))) {
      for (Path f : files.filter(Files::isRegularFile).toList()) {
        if (!f.getFileName().toString().startsWith(".")) {
          letters.addAll(Files.readAllLines(f));
        }
      }
    }
    assertThat(letters).hasSize(1);
    assertThat(letters.get(0)).contains("unknown operation 'z'").contains("changes.jsonl:1501");
    assertThat(result.out())
        .as("the end of apply says so")
        .contains("1 record could not be applied and went to the dead-letter output dead");
    // And the snapshots of the table count it, in the checkpoint it was refused in.
    org.apache.iceberg.Table table =
        io.icebergcdc.sink.CatalogDefinition.hadoop(dir.resolve("wh").toString())
            .loader()
            .loadCatalog()
            .loadTable(org.apache.iceberg.catalog.TableIdentifier.of("db", "t"));
    long counted = 0;
    for (org.apache.iceberg.Snapshot snapshot : table.snapshots()) {
      counted +=
          Long.parseLong(
              snapshot
                  .summary()
                  .getOrDefault(io.icebergcdc.commit.SnapshotSummaryKeys.DEAD_LETTERED, "0"));
    }
    assertThat(counted).as("dead letters in the snapshot summaries").isEqualTo(1);
  }

  @Test
  void badArgumentsPrintOneLineAndExitWithStatus2() throws Exception {
    JobJar.Result missing = run("apply", "--source", "file", "--warehouse", "wh");
    assertThat(missing.status()).isEqualTo(2);
    assertThat(missing.err().strip()).isEqualTo("error: apply: --path is required");

    JobJar.Result unknown = run("inspect", "--warehouse", "wh", "--tabel", "x.y");
    assertThat(unknown.status()).isEqualTo(2);
    assertThat(unknown.lastErrorLine()).contains("unknown flag --tabel");

    JobJar.Result noTable = run("inspect", "--warehouse", "wh", "--table", "no.such");
    assertThat(noTable.status()).isEqualTo(2);
    assertThat(noTable.lastErrorLine()).contains("no table no.such");
  }
}
