package io.icebergcdc.jobs.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.icebergcdc.jobs.Checkpoints;
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
class CommandLineTest {

  /** A Kafka job's command line, complete but for the flags a test adds. */
  private static final String[] KAFKA_JOB = {
    "apply", "--source", "kafka", "--warehouse", "w", "--topics", "t", "--bootstrap-servers", "b"
  };

  /** A PostgreSQL capture's command line, complete but for the flags a test adds. */
  private static final String[] POSTGRES_JOB = {
    "apply",
    "--source",
    "postgres",
    "--warehouse",
    "w",
    "--host",
    "h",
    "--database",
    "d",
    "--user",
    "u"
  };

  @TempDir Path dir;

  @Test
  void refusesAnUnknownSource() {
    assertThat(run("apply", "--source", "oracle", "--warehouse", "w"))
        .isEqualTo(
            "2: error: apply: --source must be file, postgres, mysql, mariadb or kafka, not"
                + " 'oracle'");
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
  void kafkaRefusesABadPatternAndADeadLetterTopicThePatternMatches() {
    String[] base = {"apply", "--source", "kafka", "--warehouse", "w", "--bootstrap-servers", "b"};
    assertThat(run(concat(base, "--topic-pattern", "shop.(")))
        .isEqualTo("2: error: apply: --topic-pattern is no regular expression: Unclosed group");
    assertThat(
            run(concat(base, "--topic-pattern", "shop\\..*", "--dead-letter-topic", "shop.dead")))
        .isEqualTo(
            "2: error: apply: --dead-letter-topic shop.dead matches --topic-pattern shop\\..*:"
                + " the job would read its own dead letters");
    assertThat(run(concat(base, "--topics", "shop.a,shop.b,shop.a")))
        .isEqualTo(
            "2: error: apply: --topics must be topics named once each, not 'shop.a,shop.b,shop.a'");
    assertThat(
            run(
                concat(
                    base,
                    "--topics",
                    "shop.a",
                    "--starting-offsets",
                    "timestamp:99999999999999999999")))
        .isEqualTo(
            "2: error: apply: --starting-offsets: timestamp:99999999999999999999 is no time in epoch"
                + " milliseconds (a whole number up to 9223372036854775807)");
    assertThat(
            run(
                concat(
                    base, "--topics", "shop.orders,shop.dead", "--dead-letter-topic", "shop.dead")))
        .isEqualTo(
            "2: error: apply: --dead-letter-topic shop.dead is one of --topics: the job would read"
                + " its own dead letters");
  }

  @Test
  void aTablePatternSplitAtAnUnescapedCommaSaysHowToWriteOne() {
    assertThat(
            run(
                "apply",
                "--source",
                "postgres",
                "--warehouse",
                "w",
                "--host",
                "h",
                "--database",
                "d",
                "--user",
                "u",
                "--tables",
                "public\\.a{1,2}"))
        .isEqualTo(
            "2: error: apply: --tables holds a pattern that is no regular expression:"
                + " public\\.a{1 (the patterns are separated by commas; a comma within one is"
                + " written \\,)");
  }

  @Test
  void kafkaRefusesBadFormatsOffsetsAndProperties() {
    String[] base = {"apply", "--source", "kafka", "--warehouse", "w", "--topics", "t"};
    assertThat(run(concat(base, "--bootstrap-servers", "b", "--format", "avro")))
        .isEqualTo(
            "2: error: apply: --format must be debezium-json, maxwell-json or upsert-json, not"
                + " 'avro'");
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
            "2: error: apply: --sequence-column does not apply to --format upsert-json, whose"
                + " records are ordered by partition and offset: a delete (a null value) carries no"
                + " sequence column");
    assertThat(run(concat(base, "--bootstrap-servers", "b", "--starting-offsets", "yesterday")))
        .isEqualTo(
            "2: error: apply: --starting-offsets: starting offsets must be earliest, latest,"
                + " committed or timestamp:<epoch millis>, not 'yesterday'");
    assertThat(run(concat(base, "--bootstrap-servers", "b", "--kafka-properties", "acks")))
        .isEqualTo(
            "2: error: apply: --kafka-properties takes comma-separated key=value pairs, not 'acks'"
                + " (a comma within a value is written \\,)");
    assertThat(run(concat(base, "--bootstrap-servers", "b", "--slot", "s")))
        .isEqualTo("2: error: apply --source kafka: --slot does not apply here");
    assertThat(run(base)).isEqualTo("2: error: apply: --bootstrap-servers is required");
  }

  @Test
  void refusesWhatWouldBeReadAsSomethingElseThanMeant() {
    // Flink reads a bare number as milliseconds.
    assertThat(run(concat(KAFKA_JOB, "--checkpoint-interval", "10")))
        .isEqualTo(
            "2: error: apply: --checkpoint-interval must be a duration with its unit, such as"
                + " 10s, 5min or 7d, not '10'");
    assertThat(run(concat(KAFKA_JOB, "--tombstone-ttl", "0s")))
        .startsWith("2: error: apply: --tombstone-ttl is PT0S; it must be at least 1 ms");
    // The changes it sets aside would go nowhere.
    assertThat(run(concat(KAFKA_JOB, "--on-ambiguous-change", "dead_letter")))
        .isEqualTo(
            "2: error: apply: --on-ambiguous-change dead_letter needs a dead-letter output: give"
                + " --dead-letter-path or --dead-letter-topic");
    // A group id of its own would leave the flag's value to the dead-letter producer.
    assertThat(run(concat(KAFKA_JOB, "--kafka-properties", "group.id=other")))
        .isEqualTo(
            "2: error: apply: Kafka property group.id has a flag of its own: give --group-id"
                + " instead");
    String[] postgres = POSTGRES_JOB;
    // An empty list is not the default, which captures every table of the schema.
    assertThat(run(concat(postgres, "--tables", ",")))
        .startsWith("2: error: apply: --tables must be");
    // An unset variable ("--dead-letter-path $D") is not the current directory.
    assertThat(run(concat(postgres, "--tables", "")))
        .startsWith("2: error: apply: --tables is given an empty value; give");
    assertThat(run(concat(postgres, "--dead-letter-path=")))
        .startsWith("2: error: apply: --dead-letter-path is given an empty value; give");
    // The name is the changes' topic prefix, which Debezium refuses only once the job runs.
    assertThat(run(concat(postgres, "--name", "shop db", "--slot", "s")))
        .isEqualTo(
            "2: error: apply: --name must be letters, digits, _, . and - (the changes' topic"
                + " prefix), not 'shop db'");
    assertThat(run(concat(postgres, "--name", "Shop")))
        .startsWith("2: error: apply: --name must be lowercase letters, digits and _");
    assertThat(run(concat(postgres, "--slot", "my-slot")))
        .startsWith("2: error: apply: --slot must be a replication slot name");
  }

  /**
   * {@code --read-again} names tables the job captures, for a restore of a chunked snapshot's
   * state; anything else is refused before the job runs, naming the flag.
   */
  @Test
  void tablesToReadAgainAreTablesOfARestoredCapture() throws Exception {
    String[] postgres = concat(POSTGRES_JOB, "--tables", "inventory\\..*");
    assertThat(run(concat(postgres, "--read-again", "inventory.items")))
        .isEqualTo(
            "2: error: apply: --read-again drops the restored state of tables: give"
                + " --restore-from");
    String[] restored = concat(postgres, "--restore-from", savepoint());
    assertThat(run(concat(restored, "--read-again", "public.items")))
        .isEqualTo(
            "2: error: apply: --read-again must be tables the job captures, as schema.table that"
                + " --tables match ([inventory\\..*]), not 'public.items'");
    assertThat(
            run(concat(restored, "--read-again", "inventory.items", "--snapshot-chunk-rows", "0")))
        .startsWith("2: error: apply: --read-again needs the chunked snapshot");
    assertThat(run(concat(KAFKA_JOB, "--read-again", "inventory.items")))
        .startsWith("2: error: apply --source kafka")
        .contains("--read-again");

    ApplyCommand.Plan plan =
        ApplyCommand.plan(
            Arguments.parse(
                "apply",
                concat(restored, "--read-again", "inventory.items,inventory.items"),
                1,
                ApplyCommand.flags()));
    assertThat(plan.readAgain()).containsExactly("inventory.items");
    var without =
        ((io.icebergcdc.jobs.definition.DatabaseSource) plan.job().source())
            .without(plan.readAgain());
    assertThat(without.matches("inventory.items")).isFalse();
    assertThat(without.matches("inventory.items2")).isTrue();
    assertThat(without.matches("inventory.orders")).isTrue();
    assertThat(without.matches("public.items")).isFalse();
  }

  /**
   * {@code inspect} shows a partition spec on its line and the one commit of a bounded input as the
   * input's end, not as Long.MAX_VALUE.
   */
  @Test
  void inspectShowsTheSpecOnOneLineAndABoundedInputsCommitAsItsEnd() throws Exception {
    String warehouse = dir.resolve("inspected").toString();
    org.apache.iceberg.Schema schema =
        new org.apache.iceberg.Schema(
            org.apache.iceberg.types.Types.NestedField.required(
                1, "id", org.apache.iceberg.types.Types.LongType.get()),
            org.apache.iceberg.types.Types.NestedField.required(
                2, "ts", org.apache.iceberg.types.Types.TimestampType.withoutZone()));
    org.apache.iceberg.catalog.Catalog catalog =
        io.icebergcdc.sink.CatalogDefinition.hadoop(warehouse).loader().loadCatalog();
    org.apache.iceberg.Table table =
        catalog.createTable(
            org.apache.iceberg.catalog.TableIdentifier.of("db", "t"),
            schema,
            org.apache.iceberg.PartitionSpec.builderFor(schema).day("ts").bucket("id", 16).build());
    table
        .newAppend()
        .set(io.icebergcdc.commit.SnapshotSummaryKeys.CHECKPOINT_ID, String.valueOf(Long.MAX_VALUE))
        .commit();
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    int status =
        CommandLine.run(
            new String[] {"inspect", "--table", "db.t", "--warehouse", warehouse},
            new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8));
    String printed = out.toString(StandardCharsets.UTF_8);
    assertThat(status).as(printed).isZero();
    assertThat(printed)
        .contains("partition spec [day(ts), bucket[16](id)], primary key")
        .doesNotContain(String.valueOf(Long.MAX_VALUE))
        .containsPattern("append +end ");
  }

  /** A misspelt placeholder or a template without a namespace is refused, not taken literally. */
  @Test
  void aTableTemplateHasTheSourcesPlaceholdersAndANamespace() throws Exception {
    assertThat(run(concat(KAFKA_JOB, "--table-template", "cdc.{tabel}")))
        .isEqualTo(
            "2: error: apply: --table-template must be a table name whose placeholders are"
                + " {topic}, {table}, not 'cdc.{tabel}'");
    assertThat(run(concat(KAFKA_JOB, "--table-template", "cdc.{table")))
        .startsWith("2: error: apply: --table-template must be a table name whose placeholders");
    assertThat(run(concat(KAFKA_JOB, "--table-template", "{table}")))
        .isEqualTo(
            "2: error: apply: --table-template must be a table name with a namespace, as"
                + " namespace.table (the part before the last dot), not '{table}'");
    String[] postgres = POSTGRES_JOB;
    assertThat(run(concat(postgres, "--table-template", "cdc.{topic}")))
        .startsWith(
            "2: error: apply: --table-template must be a table name whose placeholders are"
                + " {schema}, {table}, {database}");
    ApplyCommand.definition(
        Arguments.parse(
            "apply",
            concat(postgres, "--table-template", "cdc.{schema}_{table}"),
            1,
            ApplyCommand.flags()));
  }

  @Test
  void kafkaSecretsGoInAFileNotOnTheCommandLine() throws Exception {
    String jaas =
        "org.apache.kafka.common.security.plain.PlainLoginModule required password=\"p4ss\";";
    String refused = run(concat(KAFKA_JOB, "--kafka-properties", "sasl.jaas.config=" + jaas));
    assertThat(refused)
        .isEqualTo(
            "2: error: apply: --kafka-properties sasl.jaas.config is a secret; put it in the file"
                + " of --kafka-properties-file instead of on the command line")
        .doesNotContain("p4ss");
    Path file = dir.resolve("kafka.properties");
    Files.writeString(file, "group.id=other\n");
    assertThat(run(concat(KAFKA_JOB, "--kafka-properties-file", file.toString())))
        .startsWith("2: error: apply: Kafka property group.id has a flag of its own");
    // Ordinary settings that name a session or a token are no secrets; a flag's own value may be
    // repeated in a client's properties file.
    Files.writeString(
        file,
        "bootstrap.servers=b\nsession.timeout.ms=45000\nsasl.oauthbearer.token.endpoint.url=u\n");
    assertThat(run(concat(KAFKA_JOB, "--kafka-properties-file", file.toString())))
        .doesNotContain("secret")
        .doesNotContain("flag of its own");
    assertThat(run(concat(KAFKA_JOB, "--kafka-properties", "session.timeout.ms=45000")))
        .doesNotContain("is a secret");
    assertThat(run(concat(KAFKA_JOB, "--kafka-properties-file", dir.resolve("none").toString())))
        .startsWith("2: error: apply: cannot read --kafka-properties-file");
  }

  private static String[] concat(String[] first, String... more) {
    String[] all = java.util.Arrays.copyOf(first, first.length + more.length);
    System.arraycopy(more, 0, all, first.length, more.length);
    return all;
  }

  @Test
  void aBadSinkOptionOfTheFileSourceFailsNamingTheOption() throws Exception {
    Path changes = Files.writeString(dir.resolve("changes.jsonl"), "{}");
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
        .isEqualTo(
            "2: error: apply: --compaction-cache-size must be a size with its unit, such as 64mb,"
                + " or 0, not 'lots'");
    assertThat(
            ApplyCommand.definition(
                    Arguments.parse(
                        "apply",
                        concat(base, "--compaction-cache-size", "0"),
                        1,
                        ApplyCommand.flags()))
                .sinkOptions()
                .get(io.icebergcdc.sink.SinkOptions.COMPACTION_CACHE_SIZE)
                .getBytes())
        .isZero();
    // Flink reads a bare number as bytes.
    assertThat(run(concat(base, "--compaction-small-file-size", "32")))
        .isEqualTo(
            "2: error: apply: --compaction-small-file-size must be a size with its unit, such as"
                + " 32mb, or 0, not '32'");
    assertThat(run(concat(base, "--compaction-deleted-ratio", "0")))
        .startsWith("2: error: apply: --compaction-deleted-ratio is 0.0");
    assertThat(run(concat(base, "--index-max-keys", "-1")))
        .startsWith("2: error: apply: ")
        .contains("--index-max-keys is -1");
    assertThat(
            ApplyCommand.definition(
                    Arguments.parse(
                        "apply",
                        concat(base, "--index-max-keys", "5000000000"),
                        1,
                        ApplyCommand.flags()))
                .sinkOptions()
                .get(io.icebergcdc.dedup.DedupOptions.INDEX_MAX_KEYS))
        .isEqualTo(5_000_000_000L);
    assertThat(run(concat(base, "--maintenance-expire-snapshots-retain-last", "0")))
        .startsWith("2: error: apply: --maintenance-expire-snapshots-retain-last")
        .contains("0");
    assertThat(run(concat(base, "--maintenance-expire-snapshots-max-age", "-1s")))
        .startsWith("2: error: apply: --maintenance-expire-snapshots-max-age");
    assertThat(run(concat(base, "--maintenance-interval", "often")))
        .startsWith("2: error: apply: --maintenance-interval");
    assertThat(run(concat(base, "--maintenance-remove-orphans-older-than", "-1h")))
        .startsWith("2: error: apply: --maintenance-remove-orphans-older-than");
    assertThat(run(concat(base, "--maintenance-remove-orphans-enabled", "maybe")))
        .startsWith("2: error: apply: --maintenance-remove-orphans-enabled");
    assertThat(run(concat(base, "--maintenance-expire-snapshots-restore-points-max-age", "-1d")))
        .startsWith("2: error: apply: --maintenance-expire-snapshots-restore-points-max-age");
    // Every maintenance flag the help lists is read, not refused as one that does not apply: the
    // run goes on to find its file missing.
    String[] missingFile = base.clone();
    missingFile[4] = dir.resolve("missing.jsonl").toString();
    for (Flag flag : JobFlags.MAINTENANCE) {
      String value =
          flag.value().startsWith("true") ? "true" : flag.value().equals("<N>") ? "5" : "1h";
      assertThat(run(concat(missingFile, "--" + flag.name(), value)))
          .as(flag.name())
          .startsWith("2: error: ")
          .contains("missing.jsonl")
          .doesNotContain("does not apply");
    }
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
  void theDemoChecksItsArgumentsToo() throws Exception {
    assertThat(run("demo", "--keys", "0"))
        .isEqualTo("2: error: demo: --keys must be a whole number of at least 1, not '0'");
    assertThat(run("demo", "--parallelism", "0"))
        .isEqualTo("2: error: demo: --parallelism must be a whole number of at least 1, not '0'");
    Path file = Files.writeString(dir.resolve("a-file"), "");
    assertThat(run("demo", "--warehouse", file.toString()))
        .isEqualTo("2: error: demo: --warehouse " + file + " is a file, not a directory");
  }

  @Test
  void aLocalWarehouseIsTakenAbsoluteWithoutDotSegments() {
    String given = "./w/../w2/.";
    String warehouse =
        CatalogFlags.definition(
                Arguments.parse(
                    "inspect", new String[] {"--warehouse", given}, 0, CatalogFlags.FLAGS),
                null)
            .warehouse();
    assertThat(warehouse)
        .isEqualTo(Path.of("").toAbsolutePath().resolve("w2").toString())
        .doesNotContain("/.");
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
    assertThat(Checkpoints.latest(dir.toString())).contains(newer.toAbsolutePath().toString());
    assertThat(Checkpoints.latest(dir.toUri().toString()))
        .contains(newer.toAbsolutePath().toString());
  }

  /** A savepoint's directory, made in the test's directory. */
  private String savepoint() throws java.io.IOException {
    return Files.createDirectories(dir.resolve("savepoints/savepoint-1")).toString();
  }

  /**
   * A checkpoint or savepoint that is not there is refused before the job makes a table; latest is
   * taken in any case, and through a URI of the checkpoint directory.
   */
  @Test
  void aCheckpointToRestoreFromThatIsNotThereIsRefusedBeforeAnyTableIsMade() throws Exception {
    String missing = dir.resolve("savepoints/gone").toString();
    assertThat(run(fileJob("--restore-from", missing)))
        .isEqualTo(
            "2: error: apply: --restore-from "
                + missing
                + ": nothing is there; give a checkpoint or savepoint (its directory or its"
                + " _metadata), or latest");
    assertThat(Files.exists(dir.resolve("w/db"))).isFalse();

    Path checkpoint = Files.createDirectories(dir.resolve("checkpoints/job-a/chk-2"));
    Files.writeString(checkpoint.resolve("_metadata"), "a");
    String[] args =
        fileJob(
            "--restore-from",
            "LATEST",
            "--checkpoint-dir",
            dir.resolve("checkpoints").toUri().toString());
    assertThat(
            ApplyCommand.definition(Arguments.parse("apply", args, 1, ApplyCommand.flags()))
                .runtime()
                .restoreFrom())
        .isEqualTo(checkpoint.toAbsolutePath().toString());
  }

  /** The file-source command line of a table in the test's warehouse, and more flags. */
  private String[] fileJob(String... more) throws Exception {
    Path changes = dir.resolve("changes.jsonl");
    if (!Files.exists(changes)) {
      Files.writeString(changes, "{}\n");
    }
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
    return concat(base, more);
  }

  /** A table the file cannot create: the user's to create or to give events with schemas. */
  @Test
  void aMissingTableTheFileCannotCreateIsAnArgumentError() throws Exception {
    Files.writeString(dir.resolve("changes.jsonl"), "\n\n");
    assertThat(run(fileJob()))
        .isEqualTo(
            "2: error: apply: table db.items does not exist and "
                + dir.resolve("changes.jsonl")
                + " holds no event to create it from");
    Files.writeString(
        dir.resolve("changes.jsonl"),
        "{\"before\":null,\"after\":{\"id\":1},\"op\":\"c\",\"source\":{\"lsn\":1}}\n");
    assertThat(run(fileJob()))
        .startsWith(
            "2: error: apply: table db.items does not exist and the first event of "
                + dir.resolve("changes.jsonl")
                + " (line 1) carries no schema to create it from;");
    assertThat(dir.resolve("w").resolve("db")).doesNotExist();
  }

  @Test
  void aSequenceColumnOrPartitionTheTableCannotHaveIsRefusedBeforeItIsCreated() throws Exception {
    String row =
        "{\"type\":\"struct\",\"optional\":true,\"fields\":[{\"type\":\"int64\","
            + "\"optional\":false,\"field\":\"id\"},{\"type\":\"string\",\"optional\":true,"
            + "\"field\":\"v\"}],\"field\":\"%s\"}";
    Files.writeString(
        dir.resolve("changes.jsonl"),
        "{\"schema\":{\"type\":\"struct\",\"fields\":["
            + String.format(row, "before")
            + ","
            + String.format(row, "after")
            + "]},\"payload\":{\"before\":null,\"after\":{\"id\":1,\"v\":\"a\"},"
            + "\"op\":\"c\",\"source\":{\"lsn\":1}}}\n");
    assertThat(run(fileJob("--sequence-column", "seq")))
        .isEqualTo(
            "2: error: apply: --sequence-column seq is not a column of table db.items [id, v]");
    assertThat(run(fileJob("--partition-by", "bucket(16 id)")))
        .startsWith("2: error: apply: --partition-by bucket(16 id): ");
    String[] otherKey = fileJob();
    otherKey[otherKey.length - 1] = "nosuch";
    assertThat(run(otherKey))
        .isEqualTo(
            "2: error: apply: --primary-key nosuch: no column nosuch in the rows of the first event"
                + " of "
                + dir.resolve("changes.jsonl")
                + " (line 1), which has [id, v]");
    assertThat(dir.resolve("w").resolve("db").resolve("items")).doesNotExist();

    // A table that exists with another key: an argument error too.
    new org.apache.iceberg.hadoop.HadoopCatalog(
            new org.apache.hadoop.conf.Configuration(), dir.resolve("w").toString())
        .createTable(
            org.apache.iceberg.catalog.TableIdentifier.of("db", "items"),
            new org.apache.iceberg.Schema(
                java.util.List.of(
                    org.apache.iceberg.types.Types.NestedField.required(
                        1, "id", org.apache.iceberg.types.Types.LongType.get()),
                    org.apache.iceberg.types.Types.NestedField.required(
                        2, "v", org.apache.iceberg.types.Types.StringType.get())),
                java.util.Set.of(2)));
    assertThat(run(fileJob()))
        .isEqualTo(
            "2: error: apply: table db.items exists with primary key (identifier fields) [v], not"
                + " [id]");
  }

  @Test
  void everyBadValueNamesItsFlagAndTheValidValuesAndCreatesNothing() throws Exception {
    assertThat(run(fileJob("--delete-mode", "foo")))
        .isEqualTo("2: error: apply: --delete-mode must be position or equality, not 'foo'");
    assertThat(run(fileJob("--distribution", "foo")))
        .isEqualTo("2: error: apply: --distribution must be primary_key or partition, not 'foo'");
    assertThat(run(fileJob("--on-ambiguous-change", "foo")))
        .isEqualTo("2: error: apply: --on-ambiguous-change must be fail or dead_letter, not 'foo'");
    assertThat(run(fileJob("--bootstrap-index", "maybe")))
        .isEqualTo("2: error: apply: --bootstrap-index must be true or false, not 'maybe'");
    assertThat(run(fileJob("--tombstone-ttl", "forever")))
        .isEqualTo(
            "2: error: apply: --tombstone-ttl must be a duration such as 10s, 5min or 7d, not"
                + " 'forever'");
    assertThat(run(fileJob("--checkpoint-interval", "0s")))
        .isEqualTo(
            "2: error: apply: --checkpoint-interval must be at least 10ms, such as 10s, not"
                + " '0s'");
    assertThat(run(fileJob("--format-version", "7")))
        .isEqualTo("2: error: apply: --format-version must be 2 or 3, not '7'");
    assertThat(run(fileJob("--parallelism", "0")))
        .isEqualTo("2: error: apply: --parallelism must be a whole number of at least 1, not '0'");
    assertThat(run(fileJob("--state-backend", "disk")))
        .isEqualTo("2: error: apply: --state-backend must be hashmap or rocksdb, not 'disk'");
    // None of them created the warehouse, let alone a table.
    assertThat(dir.resolve("w")).doesNotExist();
  }

  @Test
  void aDistributionByPartitionOfAnUnpartitionedTableIsAnArgumentErrorBeforeTheTableExists()
      throws Exception {
    Files.writeString(
        dir.resolve("changes.jsonl"),
        "{\"schema\":{\"type\":\"struct\",\"fields\":[{\"field\":\"after\",\"type\":\"struct\","
            + "\"fields\":[{\"field\":\"id\",\"type\":\"int32\",\"optional\":false}]}]},"
            + "\"payload\":{\"op\":\"c\",\"after\":{\"id\":1}}}\n");
    assertThat(run(fileJob("--distribution", "partition")))
        .isEqualTo(
            "2: error: apply: table db.items is not partitioned: distribution by partition needs"
                + " a partitioned table; use distribution primary_key or partition the table");
    assertThat(dir.resolve("w/db/items")).doesNotExist();
  }

  @Test
  void flagsWithoutValuesUnknownFlagsAndMissingCommandsHaveMessagesOfTheirOwn() throws Exception {
    assertThat(run(fileJob("--parallelism")))
        .isEqualTo("2: error: apply: --parallelism needs a value (<N>)");
    assertThat(run(fileJob("--paralelism", "2")))
        .startsWith("2: error: apply: unknown flag --paralelism");
    assertThat(run("aply")).startsWith("2: error: unknown command 'aply'; the commands are");
    assertThat(run("apply"))
        .isEqualTo("2: error: apply: --source is required: file, postgres, mysql, mariadb, kafka");
    assertThat(run(fileJob("extra"))).startsWith("2: error: apply: unexpected argument 'extra'");
  }

  /** "help" after the command asks for help; as a flag's value, it is the value. */
  @Test
  void helpAsAValueIsTheValue() throws Exception {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    CommandLine.run(
        new String[] {"apply", "help"},
        new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8));
    assertThat(out.toString(StandardCharsets.UTF_8)).startsWith("usage: apply");
    String[] job = fileJob();
    job[4] = "help";
    assertThat(run(job)).startsWith("2: error: apply: --path ").endsWith("help is no file");
    job[4] = "-h";
    assertThat(run(job)).startsWith("2: error: apply: --path ").endsWith("-h is no file");
    assertThat(run(fileJob("-h"))).startsWith("0: ");
  }

  @Test
  void everyCommandHasHelpWithItsFlagsAndDefaults() {
    for (String command : new String[] {"apply", "inspect", "demo"}) {
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      int status =
          CommandLine.run(
              new String[] {command, "--help"},
              new PrintStream(out, true, StandardCharsets.UTF_8),
              new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8));
      String help = out.toString(StandardCharsets.UTF_8);
      assertThat(status).isZero();
      assertThat(help).startsWith("usage: " + command).contains("--catalog-type", "--warehouse");
    }
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    CommandLine.run(
        new String[] {"apply", "--source", "file", "--help"},
        new PrintStream(out, true, StandardCharsets.UTF_8),
        System.err);
    assertThat(out.toString(StandardCharsets.UTF_8))
        .contains("--delete-mode position|equality", "Default: position.")
        .contains("--tombstone-ttl <duration>", "Default: 7d.")
        .contains("--catalog-properties-file <file>")
        // Where the table's properties decide when the flag is unset, no fixed default is shown.
        .contains("Unset, the table's write.distribution-mode decides")
        .doesNotContain("Default: primary_key.", "else 1 h. Default:", "else 10. Default:");
  }

  @Test
  void catalogArgumentsAreCheckedAndSecretsStayOffTheCommandLine() throws Exception {
    assertThat(run(fileJob("--catalog-type", "glue")))
        .startsWith("2: error: apply: catalog type 'glue' is not known; use hadoop, rest, jdbc");
    assertThat(run(fileJob("--catalog-type", "rest")))
        .isEqualTo("2: error: apply: catalog-type rest needs the catalog's uri");
    assertThat(
            run(
                fileJob(
                    "--catalog-type",
                    "rest",
                    "--catalog-uri",
                    "http://localhost:1",
                    "--catalog-property",
                    "credential=client:secret")))
        .isEqualTo(
            "2: error: apply: --catalog-property credential is a secret; put it in the file of"
                + " --catalog-properties-file instead of on the command line");
    assertThat(run(fileJob("--catalog-property", "noequals")))
        .isEqualTo("2: error: apply: --catalog-property takes key=value, not 'noequals'");
    assertThat(run(fileJob("--catalog-properties-file", dir.resolve("none").toString())))
        .startsWith("2: error: apply: cannot read --catalog-properties-file");
    Path file = Files.writeString(dir.resolve("file"), "");
    assertThat(run("inspect", "--table", "a.b", "--warehouse", file.toString()))
        .isEqualTo("2: error: inspect: --warehouse " + file + " is a file, not a directory");
    assertThat(run("inspect", "--table", "a.b", "--warehouse", "s3://bucket/w"))
        .startsWith("2: error: inspect: catalog-type hadoop is not safe on an object store");
  }

  @Test
  void commitsInOneTransactionNeedARestCatalog() throws Exception {
    assertThat(run(fileJob("--commit-atomic-across-tables", "true")))
        .isEqualTo(
            "2: error: apply: --commit-atomic-across-tables needs a REST catalog (--catalog-type"
                + " rest), whose multi-table commit it uses; the catalog is hadoop warehouse "
                + dir.resolve("w"));
    assertThat(run(fileJob("--commit-atomic-across-tables", "maybe")))
        .startsWith("2: error: apply: --commit-atomic-across-tables");
    String[] rest =
        fileJob(
            "--catalog-type",
            "rest",
            "--catalog-uri",
            "http://localhost:1",
            "--commit-atomic-across-tables",
            "true");
    io.icebergcdc.jobs.definition.JobDefinition job =
        ApplyCommand.definition(Arguments.parse("apply", rest, 1, ApplyCommand.flags()));
    assertThat(job.sinkOptions().get(io.icebergcdc.sink.SinkOptions.COMMIT_ATOMIC_ACROSS_TABLES))
        .isTrue();
  }

  @Test
  void theFileSourceResumesFromASavepointAsTheOtherSourcesDo() throws Exception {
    String[] args = fileJob("--restore-from", savepoint(), "--format-version", "3");
    io.icebergcdc.jobs.definition.JobDefinition job =
        ApplyCommand.definition(Arguments.parse("apply", args, 1, ApplyCommand.flags()));
    assertThat(job.runtime().restoreFrom()).isEqualTo(savepoint());
    assertThat(job.tables().formatVersion()).isEqualTo(3);
    assertThat(job.catalog().describe()).isEqualTo("hadoop warehouse " + dir.resolve("w"));
  }

  @Test
  void stateLeftUnclaimedIsAllowedOnlyForARestore() throws Exception {
    String[] args = fileJob("--restore-from", savepoint(), "--allow-non-restored-state", "true");
    io.icebergcdc.jobs.definition.JobDefinition job =
        ApplyCommand.definition(Arguments.parse("apply", args, 1, ApplyCommand.flags()));
    assertThat(job.runtime().allowNonRestoredState()).isTrue();
    assertThat(
            ApplyCommand.definition(
                    Arguments.parse(
                        "apply", fileJob("--restore-from", savepoint()), 1, ApplyCommand.flags()))
                .runtime()
                .allowNonRestoredState())
        .isFalse();
    assertThat(run(fileJob("--allow-non-restored-state", "true")))
        .isEqualTo(
            "2: error: apply: --allow-non-restored-state applies to a restore: give"
                + " --restore-from");
  }

  @Test
  void anEmptyChangesFileIsSaidToBeEmpty() throws Exception {
    Files.writeString(dir.resolve("changes.jsonl"), "");
    assertThat(run(fileJob()))
        .isEqualTo(
            "2: error: apply: --path "
                + dir.resolve("changes.jsonl")
                + " is empty: there are no changes to apply");
  }

  private static String run(String... args) {
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int status =
        CommandLine.run(
            args,
            new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8));
    return status + ": " + err.toString(StandardCharsets.UTF_8).strip();
  }

  /**
   * A table that appeared while the job ran and does not fit its definition: the job ran, so it is
   * no argument error, and the line names the table, as the refusal does.
   */
  @Test
  void aSourceRefusedWhileTheJobRanIsAFailureNamingIt() {
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    Exception ended =
        new RuntimeException(
            "Job execution failed.",
            new io.icebergcdc.cdc.RefusedSourceException(
                "topic late appeared while the job runs, and its table db.late does not fit the"
                    + " job: primary key [v], not [id]",
                new io.icebergcdc.jobs.definition.JobDefinitionException(
                    "primary key [v], not [id]")));
    String expected =
        "1: error: topic late appeared while the job runs, and its table db.late does not fit"
            + " the job: primary key [v], not [id]";
    int status =
        CommandLine.failed("apply", ended, new PrintStream(err, true, StandardCharsets.UTF_8));
    assertThat(status + ": " + err.toString(StandardCharsets.UTF_8).strip()).isEqualTo(expected);

    // As it reaches the client of a cluster: serialized.
    err.reset();
    status =
        CommandLine.failed(
            "apply",
            new RuntimeException(
                "Job execution failed.",
                new org.apache.flink.util.SerializedThrowable(ended.getCause())),
            new PrintStream(err, true, StandardCharsets.UTF_8));
    assertThat(status + ": " + err.toString(StandardCharsets.UTF_8).strip()).isEqualTo(expected);
  }

  @Test
  void anErrorNamesTheDeepestCauseUnlessAWrapperAddsToItsMessage() {
    java.sql.SQLException refused = new java.sql.SQLException("FATAL: role \"x\" does not exist");
    java.sql.SQLException named =
        new java.sql.SQLException(
            "cannot connect to postgres://h:5432/db as x: " + refused.getMessage(), refused);
    assertThat(CommandLine.rootMessage(new RuntimeException(new RuntimeException(named))))
        .isEqualTo("cannot connect to postgres://h:5432/db as x: FATAL: role \"x\" does not exist");
    assertThat(
            CommandLine.rootMessage(
                new RuntimeException("job failed", new java.io.IOException("disk full"))))
        .isEqualTo("disk full");
    assertThat(CommandLine.rootMessage(new RuntimeException(new java.io.IOException("disk full"))))
        .isEqualTo("disk full");
    // A cause with an empty message is no reason to stop above it.
    assertThat(
            CommandLine.rootMessage(
                new RuntimeException(
                    "Recovery is suppressed: ",
                    new RuntimeException("", new java.io.IOException("disk full")))))
        .isEqualTo("disk full");
    // As the PostgreSQL driver fails on a port nothing listens on.
    java.sql.SQLException driver =
        new java.sql.SQLException(
            "Connection to 127.0.0.1:1 refused. Check that the hostname and port are correct",
            new java.net.ConnectException("Connection refused"));
    java.sql.SQLException connecting =
        new java.sql.SQLException(
            "cannot connect to postgres://127.0.0.1:1/db as x: " + driver.getMessage(), driver);
    assertThat(
            CommandLine.rootMessage(
                new IllegalStateException("job failed", new RuntimeException(connecting))))
        .startsWith("cannot connect to postgres://127.0.0.1:1/db as x: Connection to");
  }
}
