package io.icebergcdc.jobs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Argument errors of {@code apply --source postgres|mysql|mariadb|kafka}: one line and status 2.
 */
class SourceArgumentsTest {

  @TempDir Path dir;

  @Test
  void refusesAnUnknownSource() {
    assertThat(run("apply", "--source", "oracle", "--warehouse", "w"))
        .isEqualTo(
            "2: error: apply: --source oracle is not supported; use file, postgres, mysql,"
                + " mariadb or kafka");
  }

  @Test
  void kafkaNeedsTopicsOrAPatternButNotBoth() {
    assertThat(run("apply", "--source", "kafka", "--warehouse", "w", "--bootstrap-servers", "b"))
        .isEqualTo("2: error: apply: give --topics or --topic-pattern, one of them");
    assertThat(
            run(
                "apply",
                "--source",
                "kafka",
                "--warehouse",
                "w",
                "--bootstrap-servers",
                "b",
                "--topics",
                "a",
                "--topic-pattern",
                "a.*"))
        .isEqualTo("2: error: apply: give --topics or --topic-pattern, one of them");
  }

  @Test
  void kafkaRefusesBadFormatsOffsetsAndProperties() {
    String[] base = {"apply", "--source", "kafka", "--warehouse", "w", "--topics", "t"};
    assertThat(run(concat(base, "--bootstrap-servers", "b", "--format", "avro")))
        .isEqualTo(
            "2: error: apply: format avro is not supported; use debezium-json, maxwell-json or"
                + " upsert-json");
    assertThat(
            run(
                concat(
                    base,
                    "--bootstrap-servers",
                    "b",
                    "--format",
                    "upsert-json",
                    "--sequence-column",
                    "seq")))
        .isEqualTo(
            "2: error: apply: upsert-json records are ordered by partition and offset: a delete"
                + " (a null value) carries no sequence column");
    assertThat(run(concat(base, "--bootstrap-servers", "b", "--starting-offsets", "yesterday")))
        .isEqualTo(
            "2: error: apply: --starting-offsets: starting offsets must be earliest, latest,"
                + " committed or timestamp:<epoch millis>, not 'yesterday'");
    assertThat(run(concat(base, "--bootstrap-servers", "b", "--kafka-properties", "acks")))
        .isEqualTo("2: error: apply: --kafka-properties takes key=value pairs, not 'acks'");
    assertThat(run(concat(base, "--bootstrap-servers", "b", "--slot", "s")))
        .isEqualTo("2: error: apply --source kafka: --slot does not apply here");
    assertThat(run(base)).isEqualTo("2: error: apply: --bootstrap-servers is required");
  }

  private static String[] concat(String[] first, String... more) {
    String[] all = java.util.Arrays.copyOf(first, first.length + more.length);
    System.arraycopy(more, 0, all, first.length, more.length);
    return all;
  }

  @Test
  void aBadSinkOptionOfTheFileSourceFailsNamingTheOption() throws Exception {
    Path changes = Files.writeString(dir.resolve("changes.jsonl"), "");
    String[] base = {
      "apply",
      "--source",
      "file",
      "--path",
      changes.toString(),
      "--warehouse",
      dir.resolve("w").toString(),
      "--table",
      "db.items",
      "--primary-key",
      "id"
    };
    assertThat(run(concat(base, "--compaction-cache-size", "lots")))
        .startsWith("2: error: apply: ")
        .contains("sink.compaction.cache-size")
        .contains("lots");
    assertThat(run(concat(base, "--compaction-deleted-ratio", "0")))
        .startsWith("2: error: apply: option 'sink.compaction.deleted-ratio' is 0.0");
    assertThat(run(concat(base, "--index-max-keys", "-1")))
        .startsWith("2: error: apply: ")
        .contains("'dedup.index.max-keys' is -1");
  }

  @Test
  void namesAMissingConnectionOption() {
    assertThat(run("apply", "--source", "postgres", "--warehouse", "w", "--user", "u"))
        .isEqualTo("2: error: apply: --host is required");
  }

  @Test
  void refusesAPasswordVariableThatIsNotSet() {
    assertThat(
            run(
                "apply",
                "--source",
                "mariadb",
                "--warehouse",
                "w",
                "--host",
                "h",
                "--user",
                "u",
                "--database",
                "d",
                "--password-env",
                "ICEBERG_CDC_NO_SUCH_VARIABLE"))
        .isEqualTo(
            "2: error: apply: --password-env ICEBERG_CDC_NO_SUCH_VARIABLE, but the environment"
                + " has no ICEBERG_CDC_NO_SUCH_VARIABLE");
  }

  @Test
  void refusesOptionsOfAnotherSource() {
    assertThat(
            run(
                "apply",
                "--source",
                "mariadb",
                "--warehouse",
                "w",
                "--host",
                "h",
                "--user",
                "u",
                "--database",
                "d",
                "--slot",
                "s",
                "--partition-by",
                "bucket(4, id)"))
        .isEqualTo("2: error: apply --source mariadb: --slot, --partition-by do not apply here");
    assertThat(
            run(
                "apply",
                "--source",
                "file",
                "--warehouse",
                "w",
                "--path",
                "p",
                "--table",
                "a.b",
                "--primary-key",
                "id",
                "--host",
                "h"))
        .isEqualTo("2: error: apply --source file: --host does not apply here");
  }

  @Test
  void takesDemoOptionsWithoutTheDemoCommand() {
    assertThat(run("--changes", "x"))
        .isEqualTo("2: error: demo: --changes must be a whole number, not 'x'");
  }

  @Test
  void refusesToResumeFromNoCheckpoint() throws Exception {
    Path checkpoints = Files.createDirectories(dir.resolve("checkpoints"));
    assertThat(
            run(
                "apply",
                "--source",
                "postgres",
                "--warehouse",
                "w",
                "--host",
                "h",
                "--user",
                "u",
                "--database",
                "d",
                "--restore-from",
                "latest",
                "--checkpoint-dir",
                checkpoints.toString()))
        .isEqualTo(
            "2: error: apply: --restore-from latest, but "
                + checkpoints
                + " holds no completed checkpoint");
  }

  @Test
  void findsTheNewestCompletedCheckpoint() throws Exception {
    Path older = Files.createDirectories(dir.resolve("job-a/chk-7"));
    Files.writeString(older.resolve("_metadata"), "a");
    Path newer = Files.createDirectories(dir.resolve("job-b/chk-3"));
    Files.writeString(newer.resolve("_metadata"), "b");
    Files.setLastModifiedTime(
        older.resolve("_metadata"), java.nio.file.attribute.FileTime.fromMillis(1_000));
    Files.createDirectories(dir.resolve("job-b/chk-4"));
    assertThat(Checkpoints.latest(dir.toString())).contains(newer.toAbsolutePath());
  }

  private static String run(String... args) {
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int status =
        IcebergCdcMain.run(
            args,
            new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8));
    return status + ": " + err.toString(StandardCharsets.UTF_8).strip();
  }
}
