package io.icebergcdc.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.icebergcdc.localflink.LocalFlinkCluster;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A session cluster that runs SQL loads all day stays healthy: fifty jobs of the cluster jar, given
 * to the SQL client with {@code -j}, on one TaskManager with Flink's default metaspace, and
 * afterwards, after a full GC, the TaskManager holds no job's class loader and none of the threads
 * that Hadoop, Iceberg and the JDBC drivers leave behind.
 */
class SessionClusterITCase {

  private static final Path JAR = Paths.get("../jobs/target/iceberg-cdc-cluster.jar");
  private static final int JOBS = Integer.getInteger("session-cluster.jobs", 50);

  /** Flink's user-code class loaders: one per job and TaskManager while the job runs there. */
  private static final Pattern CLASS_LOADERS =
      Pattern.compile(
          "\\s(\\d+)\\s+\\d+\\s+org\\.apache\\.flink\\.util\\.(?:FlinkUserCodeClassLoaders\\$)?"
              + "(\\w*ChildFirstClassLoader|\\w*ParentFirstClassLoader)");

  /**
   * How many of the jobs' class loaders may still be alive, whatever the number of jobs: none.
   * Before the release ({@code JobClassLoaderRelease}) every job's stayed; without its last step, a
   * few stayed for minutes (Flink's cache of the code it generates for SQL operators holds the
   * generated classes, whose class loaders the JVM ties to the job's, with no path in a heap dump).
   */
  private static final int MOST_LOADERS_LEFT = Integer.getInteger("session-cluster.most-left", 0);

  /** How long the last jobs' class loaders may take to go. */
  private static final Duration LINGER = Duration.ofMinutes(3);

  @TempDir static Path clusterHome;
  private static LocalFlinkCluster cluster;

  @TempDir Path dir;

  @BeforeAll
  static void startCluster() throws Exception {
    assertThat(JAR).as("the cluster jar; build with mvn package first").isRegularFile();
    // Flink's default metaspace, unless a diagnosis asks for more (to dump the heap after the
    // jobs), or for JVM options of the TaskManager (a GC log, a heap dump on OutOfMemoryError).
    Map<String, String> configuration = new java.util.HashMap<>();
    String metaspace = System.getProperty("session-cluster.metaspace");
    if (metaspace != null) {
      configuration.put("taskmanager.memory.jvm-metaspace.size", metaspace);
    }
    String jvmOptions = System.getProperty("session-cluster.jvm-options");
    if (jvmOptions != null) {
      configuration.put("env.java.opts.taskmanager", jvmOptions);
    }
    cluster = LocalFlinkCluster.start(clusterHome, 1, 2, configuration);
  }

  @AfterAll
  static void stopCluster() throws Exception {
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void fiftyJobsLeaveNoClassLoaderBehind() throws Exception {
    String warehouse = dir.resolve("warehouse").toString();
    List<String> statements = new ArrayList<>();
    statements.add("SET 'table.dml-sync' = 'true';");
    statements.add("SET 'execution.runtime-mode' = 'batch';");
    statements.add("SET 'sql-client.execution.result-mode' = 'tableau';");
    statements.add("SET 'parallelism.default' = '2';");
    statements.add(
        "CREATE CATALOG lake WITH ('type' = 'iceberg-cdc', 'warehouse' = '" + warehouse + "');");
    statements.add("CREATE DATABASE lake.db;");
    statements.add(
        "CREATE TABLE lake.db.t (id BIGINT NOT NULL, v STRING, PRIMARY KEY (id) NOT ENFORCED);");
    for (int job = 1; job <= JOBS; job++) {
      String statement;
      if (job % 5 == 0) {
        statement = "SELECT COUNT(*) AS loaded_" + job + " FROM lake.db.t;";
      } else if (job % 5 == 1) {
        statement = "INSERT INTO lake.db.t VALUES (1, 'last " + job + "');";
      } else {
        statement = "INSERT INTO lake.db.t VALUES (" + job + ", 'v" + job + "');";
      }
      statements.add(statement);
    }
    Path file = dir.resolve("loads.sql");
    Files.writeString(file, String.join("\n", statements) + "\n", StandardCharsets.UTF_8);

    LocalFlinkCluster.Result result =
        cluster.sqlClient(Duration.ofMinutes(15), file, JAR.toAbsolutePath());
    assertThat(result.exitCode()).as(result.output()).isZero();
    assertThat(result.output()).doesNotContain("[ERROR]").contains("loaded_" + (JOBS / 5 * 5));

    long pid = cluster.taskManagerPids().get(0);
    // Flink releases a job's class loader once its last task on the TaskManager is gone, and the
    // loader's classes go at the next full GC after that.
    Map<String, Integer> loaders = liveClassLoaders(pid);
    List<Integer> seen = new ArrayList<>(List.of(total(loaders)));
    long deadline = System.nanoTime() + LINGER.toNanos();
    while (total(loaders) > MOST_LOADERS_LEFT && System.nanoTime() < deadline) {
      Thread.sleep(5_000);
      loaders = liveClassLoaders(pid);
      seen.add(total(loaders));
    }
    String threads = cluster.jcmd(pid, "Thread.print");
    List<String> leftovers = new ArrayList<>();
    for (String name :
        List.of(
            "StatisticsDataReferenceCleaner",
            "iceberg-worker-pool",
            "iceberg-lock-manager",
            "idle-connection-reaper",
            "iceberg-cdc-table-closing",
            "iceberg-cdc-file-closing",
            "iceberg-cdc-table-reads")) {
      if (threads.contains(name)) {
        leftovers.add(name);
      }
    }
    String metaspace = cluster.jcmd(pid, "VM.metaspace", "basic");
    String dump = System.getProperty("session-cluster.heap-dump");
    if (dump != null) {
      // To find what holds a class loader, from the paths to their GC roots.
      cluster.jcmd(pid, "GC.heap_dump", dump);
    }
    assertThat(total(loaders))
        .as(
            "job class loaders live after %s jobs and a full GC: %s (every 5 s: %s); threads"
                + " left: %s; %s",
            JOBS, loaders, seen, leftovers, metaspace)
        .isLessThanOrEqualTo(MOST_LOADERS_LEFT);
    assertThat(leftovers).as("threads left behind").isEmpty();
    assertThat(result.output())
        .as("the SQL client's exit")
        .doesNotContain("NoClassDefFoundError")
        .doesNotContain("Exception in thread");
  }

  private static int total(Map<String, Integer> loaders) {
    return loaders.values().stream().mapToInt(Integer::intValue).sum();
  }

  /** The user-code class loaders alive after a full GC ({@code GC.class_histogram} forces one). */
  private static Map<String, Integer> liveClassLoaders(long pid) throws Exception {
    Map<String, Integer> counts = new TreeMap<>();
    Matcher matcher = CLASS_LOADERS.matcher(cluster.jcmd(pid, "GC.class_histogram"));
    while (matcher.find()) {
      counts.merge(matcher.group(2), Integer.parseInt(matcher.group(1)), Integer::sum);
    }
    return counts;
  }
}
