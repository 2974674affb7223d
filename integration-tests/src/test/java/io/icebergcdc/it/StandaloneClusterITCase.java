package io.icebergcdc.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.icebergcdc.commit.SnapshotSummaryKeys;
import io.icebergcdc.jobs.demo.ChangelogGenerator;
import io.icebergcdc.jobs.demo.ChangelogGenerator.Changelog;
import io.icebergcdc.localflink.LocalFlinkCluster;
import io.icebergcdc.sink.CatalogDefinition;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The job jar on a standalone Flink cluster (a JobManager and a TaskManager as processes of their
 * own, from Flink's Maven Central artifacts), submitted through Flink's own command-line front end
 * as {@code flink run} does; a CDC job stopped with a savepoint and started again from it; and the
 * connector from Flink's SQL client.
 */
class StandaloneClusterITCase {

  private static final Path JAR = Paths.get("../jobs/target/iceberg-cdc-cluster.jar");
  private static final Duration CLI_TIMEOUT = Duration.ofMinutes(4);

  @RegisterExtension static final KafkaBroker KAFKA = new KafkaBroker();

  @TempDir static Path clusterHome;
  private static LocalFlinkCluster cluster;

  @TempDir Path dir;

  @BeforeAll
  static void startCluster() throws Exception {
    assertThat(JAR).as("the cluster jar; build with mvn package first").isRegularFile();
    cluster = LocalFlinkCluster.start(clusterHome, 1, 4, dockerFlinkProperties());
  }

  /**
   * The Flink configuration of the Docker deployment ({@code x-flink-properties} in {@code
   * docker/compose.yaml}), but for the host names, memory sizes and directories, which are this
   * machine's: the cluster runs as that deployment configures it (RocksDB, incremental checkpoints,
   * exponential-delay restarts, aligned exactly-once checkpoints, ...).
   */
  static Map<String, String> dockerFlinkProperties() throws Exception {
    List<String> compose = Files.readAllLines(Paths.get("../docker/compose.yaml"));
    int start = compose.indexOf("x-flink-properties: &flink-properties |");
    assertThat(start).as("the Flink properties of docker/compose.yaml").isNotNegative();
    Map<String, String> properties = new java.util.LinkedHashMap<>();
    for (String line : compose.subList(start + 1, compose.size())) {
      if (!line.startsWith("  ")) {
        break;
      }
      int colon = line.indexOf(':');
      String key = line.substring(0, colon).trim();
      if (!key.endsWith(".address")
          && !key.endsWith("memory.process.size")
          && !key.equals("taskmanager.numberOfTaskSlots")
          && !key.startsWith("execution.checkpointing.dir")
          && !key.equals("execution.checkpointing.savepoint-dir")) {
        properties.put(key, line.substring(colon + 1).trim());
      }
    }
    assertThat(properties).containsEntry("state.backend.type", "rocksdb");
    return properties;
  }

  @AfterAll
  static void stopCluster() throws Exception {
    if (cluster != null) {
      cluster.close();
    }
  }

  private LocalFlinkCluster.Result flink(String... arguments) throws Exception {
    LocalFlinkCluster.Result result = cluster.flink(CLI_TIMEOUT, arguments);
    assertThat(result.exitCode())
        .as("flink %s: %s", String.join(" ", arguments), result.output())
        .isZero();
    return result;
  }

  @Test
  void flinkRunAppliesAChangelogFileExactlyOnce() throws Exception {
    Changelog changelog = new ChangelogGenerator(3000, 300, 0.1, 0.05, 21).generate();
    Path file = dir.resolve("changes.jsonl");
    changelog.writeTo(file);
    String warehouse = dir.resolve("warehouse").toString();

    // No --checkpoint-dir or --state-backend: the cluster's configuration (the Docker
    // deployment's RocksDB) decides them.
    LocalFlinkCluster.Result run =
        flink(
            "run",
            "-m",
            cluster.restAddress(),
            JAR.toAbsolutePath().toString(),
            "apply",
            "--source",
            "file",
            "--path",
            file.toString(),
            "--warehouse",
            warehouse,
            "--table",
            "inventory.items",
            "--primary-key",
            "id",
            "--checkpoint-interval",
            "300ms",
            "--parallelism",
            "2");
    String jobId = run.find("JobID ([0-9a-f]{32})");

    Table table = catalog(warehouse).loadTable(TableIdentifier.of("inventory", "items"));
    assertThat(changelog.model().differences(table, 10)).isEmpty();
    assertThat(Commits.jobsThatCommittedEachCheckpointOnce(table)).containsExactly(jobId);
    assertThat(cluster.rest("/jobs/" + jobId + "/checkpoints/config"))
        .as("the cluster's state backend")
        .contains("RocksDB");
    assertThat(clusterHome.resolve("data/checkpoints").resolve(jobId))
        .as("the cluster's checkpoint directory")
        .isDirectory();
  }

  /** The demo, the jar's default command, needs the embedded Flink of java -jar. */
  @Test
  void theDemoIsRefusedOnACluster() throws Exception {
    LocalFlinkCluster.Result run =
        cluster.flink(
            CLI_TIMEOUT, "run", "-m", cluster.restAddress(), JAR.toAbsolutePath().toString());
    assertThat(run.exitCode()).as(run.output()).isEqualTo(2);
    assertThat(run.output())
        .contains(
            "error: demo: runs on an embedded Flink of its own (java -jar iceberg-cdc-jobs.jar);"
                + " submitted to a cluster, give a command, such as apply");
    // An apply without its command word is taken for the demo's flags, and refused the same.
    LocalFlinkCluster.Result withoutTheWord =
        cluster.flink(
            CLI_TIMEOUT,
            "run",
            "-m",
            cluster.restAddress(),
            JAR.toAbsolutePath().toString(),
            "--source",
            "kafka");
    assertThat(withoutTheWord.exitCode()).as(withoutTheWord.output()).isEqualTo(2);
    assertThat(withoutTheWord.output()).contains("error: demo: runs on an embedded Flink");
  }

  @Test
  void aCdcJobStoppedWithASavepointResumesFromItRescaledWithoutLossOrRepeats() throws Exception {
    String topic = "shop.public.items";
    KAFKA.createTopic(topic, 3);
    Changelog changelog = new ChangelogGenerator(4000, 400, 0.1, 0.05, 22).generate();
    List<Map.Entry<String, String>> records = new ArrayList<>();
    for (String line : changelog.lines()) {
      records.add(Map.entry(ChangelogGenerator.kafkaKeyOf(line), line));
    }
    String warehouse = dir.resolve("warehouse").toString();
    List<String> apply =
        List.of(
            "apply",
            "--source",
            "kafka",
            "--bootstrap-servers",
            KAFKA.bootstrapServers(),
            "--topics",
            topic,
            "--table-template",
            "shop.{table}",
            "--warehouse",
            warehouse,
            "--checkpoint-interval",
            "300ms",
            "--checkpoint-dir",
            dir.resolve("checkpoints").toString(),
            "--parallelism",
            "2");

    // Submitted, stopped and submitted again as the Docker deployment does it: by its
    // submit-job.sh, which resumes from the newest savepoint of the job.
    Path savepoints = dir.resolve("savepoints");
    KAFKA.produce(topic, records.subList(0, records.size() / 2));
    String first = submitWithScript(apply, savepoints);
    Table table = awaitTable(warehouse, TableIdentifier.of("shop", "items"), first);
    assertThat(submitWithScript(apply, savepoints))
        .as("submitting a running job again does nothing")
        .isNull();

    LocalFlinkCluster.Result stop =
        flink(
            "stop",
            "--savepointPath",
            savepoints.toUri().toString(),
            "-m",
            cluster.restAddress(),
            first);
    String savepoint = stop.find("Savepoint completed\\. Path: (\\S+)");
    cluster.awaitJobState(first, Duration.ofSeconds(60), "FINISHED");

    // Written while the job is stopped; the resumed job reads on from the savepoint's offsets,
    // with one writer more: the per-key state is redistributed by key group.
    KAFKA.produce(topic, records.subList(records.size() / 2, records.size()));
    List<String> rescaled = new ArrayList<>(apply);
    rescaled.set(rescaled.indexOf("--parallelism") + 1, "3");
    String second = submitWithScript(rescaled, savepoints);
    long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
    List<String> differences;
    do {
      Thread.sleep(500);
      assertThat(cluster.jobState(second)).isEqualTo("RUNNING");
      table.refresh();
      differences = changelog.model().differences(table, 10);
    } while (!differences.isEmpty() && System.nanoTime() < deadline);
    assertThat(differences).as("the table against its changelog").isEmpty();
    assertThat(cluster.rest("/jobs/" + second + "/checkpoints"))
        .as("the second job started from the savepoint")
        .contains(Paths.get(java.net.URI.create(savepoint)).getFileName().toString());
    flink("cancel", "-m", cluster.restAddress(), second);

    table.refresh();
    assertThat(Commits.jobsThatCommittedEachCheckpointOnce(table))
        .containsExactlyInAnyOrder(first, second);
    // The stop aborts the checkpoint in flight: its files are committed with the savepoint's,
    // still as position deletes (deletion vectors), never equality deletes.
    Map<String, Long> fellBack = new java.util.TreeMap<>();
    for (org.apache.iceberg.Snapshot s : Commits.snapshots(table)) {
      long n = Long.parseLong(s.summary().getOrDefault(SnapshotSummaryKeys.DELETES_FELL_BACK, "0"));
      if (n > 0) {
        fellBack.put(
            s.summary().get(SnapshotSummaryKeys.JOB_ID)
                + " checkpoint "
                + s.summary().get(SnapshotSummaryKeys.CHECKPOINT_ID),
            n);
      }
    }
    assertThat(fellBack).as("deletes that fell back to equality deletes").isEmpty();
  }

  @Test
  void aPostgresCaptureJobRunsOnTheCluster() throws Exception {
    String database = "icebergcdc_cluster_it";
    String slot = "icebergcdc_cluster_it";
    dropSlotAndDatabase(slot, database);
    try (java.sql.Connection admin =
            java.sql.DriverManager.getConnection(
                "jdbc:postgresql://127.0.0.1:5432/postgres", "postgres", "");
        java.sql.Statement statement = admin.createStatement()) {
      statement.execute("CREATE DATABASE " + database);
    }
    String warehouse = dir.resolve("warehouse").toString();
    String jobId = null;
    try (java.sql.Connection source =
            java.sql.DriverManager.getConnection(
                "jdbc:postgresql://127.0.0.1:5432/" + database, "postgres", "");
        java.sql.Statement statement = source.createStatement()) {
      statement.execute("CREATE TABLE items (id bigint PRIMARY KEY, name text NOT NULL)");
      statement.execute(
          "INSERT INTO items SELECT i, 'item ' || i FROM generate_series(1, 500) AS i");

      jobId =
          flink(
                  "run",
                  "-d",
                  "-m",
                  cluster.restAddress(),
                  JAR.toAbsolutePath().toString(),
                  "apply",
                  "--source",
                  "postgres",
                  "--host",
                  "127.0.0.1",
                  "--port",
                  "5432",
                  "--user",
                  "postgres",
                  "--database",
                  database,
                  "--slot",
                  slot,
                  "--publication",
                  slot,
                  "--table-template",
                  "pg.{table}",
                  "--warehouse",
                  warehouse,
                  "--checkpoint-interval",
                  "300ms",
                  "--checkpoint-dir",
                  dir.resolve("checkpoints").toString(),
                  "--parallelism",
                  "1")
              .find("JobID ([0-9a-f]{32})");
      Table table = awaitTable(warehouse, TableIdentifier.of("pg", "items"), jobId);
      statement.execute("UPDATE items SET name = name || ' (changed)' WHERE id % 3 = 0");
      statement.execute("DELETE FROM items WHERE id % 5 = 0");
      statement.execute("INSERT INTO items VALUES (1000, 'new')");

      List<String> expected = new ArrayList<>();
      try (java.sql.ResultSet rows =
          statement.executeQuery("SELECT id, name FROM items ORDER BY id")) {
        while (rows.next()) {
          expected.add(rows.getLong(1) + "," + rows.getString(2));
        }
      }
      long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
      List<String> actual;
      do {
        Thread.sleep(500);
        assertThat(cluster.jobState(jobId)).isEqualTo("RUNNING");
        table.refresh();
        actual = new ArrayList<>();
        try (var records = org.apache.iceberg.data.IcebergGenerics.read(table).build()) {
          for (var r : records) {
            actual.add(r.getField("id") + "," + r.getField("name"));
          }
        }
        actual.sort(java.util.Comparator.comparingLong(row -> Long.parseLong(row.split(",")[0])));
      } while (!actual.equals(expected) && System.nanoTime() < deadline);
      assertThat(actual).as("the Iceberg table against the PostgreSQL table").isEqualTo(expected);
      Commits.jobsThatCommittedEachCheckpointOnce(table);
    } finally {
      if (jobId != null) {
        cluster.flink(CLI_TIMEOUT, "cancel", "-m", cluster.restAddress(), jobId);
      }
    }
    // The slot would keep the server's WAL for as long as it exists.
    dropSlotAndDatabase(slot, database);
  }

  private static void dropSlotAndDatabase(String slot, String database) throws Exception {
    try (java.sql.Connection admin =
            java.sql.DriverManager.getConnection(
                "jdbc:postgresql://127.0.0.1:5432/postgres", "postgres", "");
        java.sql.Statement statement = admin.createStatement()) {
      long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      while (true) {
        statement.execute(
            "SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots"
                + " WHERE slot_name = '"
                + slot
                + "' AND active");
        try (java.sql.ResultSet active =
            statement.executeQuery(
                "SELECT 1 FROM pg_replication_slots WHERE slot_name = '" + slot + "' AND active")) {
          if (!active.next() || System.nanoTime() > deadline) {
            break;
          }
        }
        Thread.sleep(200);
      }
      statement.execute(
          "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots"
              + " WHERE slot_name = '"
              + slot
              + "'");
      statement.execute("DROP DATABASE IF EXISTS " + database + " WITH (FORCE)");
    }
  }

  @Test
  void theSqlClientWritesThroughTheConnector() throws Exception {
    String warehouse = dir.resolve("warehouse").toString();
    Path statements = dir.resolve("load.sql");
    Files.writeString(
        statements,
        String.join(
            "\n",
            "SET 'table.dml-sync' = 'true';",
            "SET 'execution.runtime-mode' = 'batch';",
            "SET 'parallelism.default' = '2';",
            "CREATE TABLE customers (id BIGINT NOT NULL, name STRING, PRIMARY KEY (id) NOT"
                + " ENFORCED) WITH ('connector' = 'iceberg-cdc', 'warehouse' = '"
                + warehouse
                + "', 'database-name' = 'crm');",
            "INSERT INTO customers VALUES (1, 'ann'), (2, 'bob'), (3, 'cy');",
            "INSERT INTO customers /*+ OPTIONS('compression' = 'gzip') */ VALUES (2, 'bobby'),"
                + " (4, 'dee');",
            ""),
        StandardCharsets.UTF_8);

    LocalFlinkCluster.Result result =
        cluster.sqlClient(CLI_TIMEOUT, statements, JAR.toAbsolutePath());
    assertThat(result.exitCode()).as(result.output()).isZero();
    assertThat(result.output()).doesNotContain("[ERROR]");

    Table table = catalog(warehouse).loadTable(TableIdentifier.of("crm", "customers"));
    List<String> rows = new ArrayList<>();
    try (var records = org.apache.iceberg.data.IcebergGenerics.read(table).build()) {
      records.forEach(r -> rows.add(r.getField("id") + "," + r.getField("name")));
    }
    assertThat(rows).containsExactlyInAnyOrder("1,ann", "2,bobby", "3,cy", "4,dee");
    List<Snapshot> snapshots = new ArrayList<>();
    table.snapshots().forEach(snapshots::add);
    assertThat(snapshots).hasSize(2);
    assertThat(snapshots.get(1).summary())
        .containsEntry(SnapshotSummaryKeys.ROWS_INSERTED, "1")
        .containsEntry(SnapshotSummaryKeys.ROWS_UPDATED, "1");
  }

  /**
   * Submits the job with the Docker deployment's {@code docker/flink/submit-job.sh}, with this
   * cluster's {@code flink} command on the path; returns the id of the job it submitted, running,
   * or null if it submitted none.
   */
  private String submitWithScript(List<String> arguments, Path savepoints) throws Exception {
    List<String> command =
        new ArrayList<>(
            List.of("bash", Paths.get("../docker/flink/submit-job.sh").toString(), "kafka"));
    command.addAll(arguments);
    ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
    builder
        .environment()
        .put("PATH", cluster.bin() + java.io.File.pathSeparator + System.getenv("PATH"));
    builder.environment().put("FLINK_REST", cluster.restAddress());
    builder.environment().put("ICEBERG_CDC_JAR", JAR.toAbsolutePath().toString());
    builder.environment().put("SAVEPOINT_DIR", savepoints.toString());
    Process process = builder.start();
    String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(process.waitFor()).as(output).isZero();
    java.util.regex.Matcher id =
        java.util.regex.Pattern.compile("JobID ([0-9a-f]{32})").matcher(output);
    if (!id.find()) {
      assertThat(output).contains("is already running; nothing to submit");
      return null;
    }
    cluster.awaitJobState(id.group(1), Duration.ofSeconds(60), "RUNNING");
    return id.group(1);
  }

  /** The table, once the job has committed to it. */
  private Table awaitTable(String warehouse, TableIdentifier identifier, String jobId)
      throws Exception {
    Catalog catalog = catalog(warehouse);
    long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
    while (System.nanoTime() < deadline) {
      assertThat(cluster.jobState(jobId)).isEqualTo("RUNNING");
      if (catalog.tableExists(identifier)) {
        Table table = catalog.loadTable(identifier);
        if (table.currentSnapshot() != null) {
          return table;
        }
      }
      Thread.sleep(250);
    }
    throw new AssertionError("no commit to " + identifier + " within 90 s");
  }

  private static Catalog catalog(String warehouse) {
    return CatalogDefinition.hadoop(warehouse).loader().loadCatalog();
  }
}
