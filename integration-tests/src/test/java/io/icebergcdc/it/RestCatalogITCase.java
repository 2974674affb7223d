package io.icebergcdc.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.icebergcdc.commit.CommitListener;
import io.icebergcdc.jobs.definition.ChangelogFile;
import io.icebergcdc.jobs.definition.DeadLetterOutput;
import io.icebergcdc.jobs.definition.JobDefinition;
import io.icebergcdc.jobs.definition.RuntimeDefinition;
import io.icebergcdc.jobs.definition.TableDefinition;
import io.icebergcdc.jobs.demo.ChangelogGenerator;
import io.icebergcdc.jobs.pipeline.JobRunner;
import io.icebergcdc.sink.CatalogDefinition;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.test.junit5.MiniClusterExtension;
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
 * The apply job on a REST catalog (Iceberg's REST catalog server, as its own process, over a JDBC
 * catalog) with its tables on S3 (S3Proxy, as its own process): the table equals the reference
 * model of its changelog after injected failures and after the catalog was down for 30 s, each
 * checkpoint committed once, and no secret in a checkpoint or a snapshot summary.
 */
class RestCatalogITCase {

  @RegisterExtension
  static final MiniClusterExtension FLINK =
      new MiniClusterExtension(
          new MiniClusterResourceConfiguration.Builder()
              .setNumberTaskManagers(1)
              .setNumberSlotsPerTaskManager(4)
              .build());

  static LakeServers lake;

  @TempDir Path dir;

  @BeforeAll
  static void startServers() throws Exception {
    lake = LakeServers.start("lake");
  }

  @AfterAll
  static void stopServers() throws Exception {
    if (lake != null) {
      lake.close();
    }
  }

  static CatalogDefinition catalog() {
    return CatalogDefinition.builder()
        .type("rest")
        .uri(lake.rest.uri())
        .properties(lake.s3Properties())
        .property("credential", "iceberg-cdc:client-secret")
        .build();
  }

  private JobDefinition job(TableIdentifier table, int restartAttempts) {
    return job(table, restartAttempts, Duration.ofMillis(300));
  }

  private JobDefinition job(
      TableIdentifier table, int restartAttempts, Duration checkpointInterval) {
    return new JobDefinition(
        new ChangelogFile(dir.resolve("changes.jsonl").toString(), null),
        catalog(),
        new TableDefinition(table.toString(), List.of("id"), null, 3),
        new Configuration(),
        DeadLetterOutput.NONE,
        new RuntimeDefinition(
            2,
            checkpointInterval,
            dir.resolve("checkpoints").toString(),
            "hashmap",
            null,
            restartAttempts));
  }

  private ChangelogGenerator.Changelog changelog(int changes, int keys, long seed) {
    ChangelogGenerator.Changelog changelog =
        new ChangelogGenerator(changes, keys, 0.10, 0.02, seed).generate();
    changelog.writeTo(dir.resolve("changes.jsonl"));
    return changelog;
  }

  @Test
  void appliesTheChangelogExactlyOnceThroughInjectedFailures() throws Exception {
    TableIdentifier identifier = TableIdentifier.of("rest_db", "items");
    ChangelogGenerator.Changelog changelog = changelog(60_000, 6_000, 3L);
    ApplyChangelogITCase.InjectedCommitFailures.reset();

    new JobRunner(job(identifier, 20), new ApplyChangelogITCase.InjectedCommitFailures()).run();

    assertThat(ApplyChangelogITCase.InjectedCommitFailures.BEFORE.get()).isBetween(1, 2);
    assertThat(ApplyChangelogITCase.InjectedCommitFailures.AFTER.get()).isBetween(1, 2);
    Catalog catalog = catalog().connect();
    Table table = catalog.loadTable(identifier);
    assertThat(table.location()).startsWith(lake.warehouse());
    assertThat(changelog.model().differences(table, 20)).isEmpty();
    List<Snapshot> snapshots = Commits.snapshots(table);
    Commits.assertOneCommitPerCheckpoint(snapshots);
    // The data is on the store: S3Proxy keeps each object as a file under its bucket.
    try (Stream<Path> files = Files.walk(lake.s3.bucketDirectory(lake.bucket))) {
      assertThat(files.filter(p -> p.toString().endsWith(".parquet")).count()).isPositive();
    }
    assertNoSecretInSummaries(snapshots);
    CatalogDefinition.close(catalog);
  }

  @Test
  void ridesOutACatalogThatIsDownForThirtySeconds() throws Exception {
    TableIdentifier identifier = TableIdentifier.of("rest_db", "outage");
    ChangelogGenerator.Changelog changelog = changelog(120_000, 6_000, 7L);
    CatalogDown.reset(dir.resolve("checkpoints"), List.of(lake.s3.secretKey(), "client-secret"));

    long start = System.nanoTime();
    // No restarts: the job must ride out the outage, not fail and recover. Checkpoints come often
    // enough that the catalog goes down at the third commit however fast the changes are applied
    // (at 300 ms, a run that applied them within a second made two commits and no outage).
    new JobRunner(job(identifier, 0, Duration.ofMillis(50)), new CatalogDown()).run();

    assertThat(CatalogDown.STOPPED.get()).as("the catalog was taken down mid-run").isTrue();
    assertThat(CatalogDown.RESTARTED_AT_NANOS.get()).isPositive();
    assertThat(System.nanoTime() - start).isGreaterThan(Duration.ofSeconds(25).toNanos());
    Catalog catalog = catalog().connect();
    Table table = catalog.loadTable(identifier);
    assertThat(changelog.model().differences(table, 20)).isEmpty();
    List<Snapshot> snapshots = Commits.snapshots(table);
    Commits.assertOneCommitPerCheckpoint(snapshots);
    assertThat(snapshots)
        .filteredOn(s -> s.timestampMillis() >= CatalogDown.RESTARTED_AT_MILLIS.get())
        .as("commits that waited for the catalog to come back")
        .isNotEmpty();
    assertNoSecretInSummaries(snapshots);
    assertThat(CatalogDown.CHECKPOINT_FILES_SCANNED.get())
        .as("checkpoint files looked at for secrets during the run")
        .isPositive();
    assertThat(CatalogDown.SECRETS_FOUND).as("checkpoint files holding a secret").isEmpty();
    CatalogDefinition.close(catalog);
  }

  /** Neither the S3 secret key nor the OAuth2 client secret is in a snapshot summary. */
  private static void assertNoSecretInSummaries(List<Snapshot> snapshots) {
    for (Snapshot snapshot : snapshots) {
      assertThat(snapshot.summary().toString())
          .doesNotContain(lake.s3.secretKey())
          .doesNotContain("client-secret");
    }
  }

  /** The checkpoint files under a directory that hold one of the secrets. */
  static List<String> filesHolding(Path directory, List<String> secrets, AtomicInteger scanned)
      throws Exception {
    List<String> found = new java.util.ArrayList<>();
    try (Stream<Path> walk = Files.walk(directory)) {
      for (Path file : walk.filter(Files::isRegularFile).toList()) {
        String bytes;
        try {
          bytes = new String(Files.readAllBytes(file), StandardCharsets.ISO_8859_1);
        } catch (java.nio.file.NoSuchFileException subsumed) {
          continue; // a checkpoint Flink removed meanwhile
        }
        scanned.incrementAndGet();
        for (String secret : secrets) {
          if (bytes.contains(secret)) {
            found.add(file + " holds " + secret.substring(0, 3) + "...");
          }
        }
      }
    }
    return found;
  }

  /**
   * Stops the REST catalog just before the job's {@value #STOP_AT_COMMIT}th commit and starts it
   * again 30 s later, on the same port and database, from a thread of its own. After that commit
   * and each later one it reads every file of the job's checkpoints for the secrets.
   */
  static final class CatalogDown implements CommitListener {
    private static final long serialVersionUID = 1L;
    static final int STOP_AT_COMMIT = 3;
    static final AtomicBoolean STOPPED = new AtomicBoolean();
    static final AtomicLong RESTARTED_AT_NANOS = new AtomicLong();
    static final AtomicLong RESTARTED_AT_MILLIS = new AtomicLong();
    static final AtomicInteger CHECKPOINT_FILES_SCANNED = new AtomicInteger();
    static final List<String> SECRETS_FOUND = new java.util.concurrent.CopyOnWriteArrayList<>();
    private static final AtomicInteger COMMITS = new AtomicInteger();
    private static volatile Path checkpoints;
    private static volatile List<String> secrets;

    static void reset(Path checkpointDirectory, List<String> secretValues) {
      STOPPED.set(false);
      RESTARTED_AT_NANOS.set(0);
      RESTARTED_AT_MILLIS.set(Long.MAX_VALUE);
      COMMITS.set(0);
      CHECKPOINT_FILES_SCANNED.set(0);
      SECRETS_FOUND.clear();
      checkpoints = checkpointDirectory;
      secrets = secretValues;
    }

    @Override
    public void afterCommit(long checkpointId, Snapshot snapshot) throws Exception {
      if (COMMITS.get() >= STOP_AT_COMMIT) {
        SECRETS_FOUND.addAll(filesHolding(checkpoints, secrets, CHECKPOINT_FILES_SCANNED));
      }
    }

    @Override
    public void beforeCommit(long checkpointId) throws Exception {
      if (COMMITS.incrementAndGet() != STOP_AT_COMMIT || !STOPPED.compareAndSet(false, true)) {
        return;
      }
      lake.rest.stop();
      Thread restarter =
          new Thread(
              () -> {
                try {
                  Thread.sleep(30_000);
                  long before = System.currentTimeMillis();
                  lake.rest.start();
                  RESTARTED_AT_MILLIS.set(before);
                  RESTARTED_AT_NANOS.set(System.nanoTime());
                } catch (Exception e) {
                  throw new IllegalStateException("the REST catalog did not start again", e);
                }
              },
              "restart-rest-catalog");
      restarter.setDaemon(true);
      restarter.start();
    }
  }
}
