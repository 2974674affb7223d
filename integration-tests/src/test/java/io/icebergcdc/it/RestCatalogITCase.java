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
import io.icebergcdc.locallake.LocalRestCatalog;
import io.icebergcdc.locallake.LocalS3Store;
import io.icebergcdc.sink.CatalogDefinition;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
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

  private static final String BUCKET = "lake";
  static LocalS3Store s3;
  static LocalRestCatalog rest;

  @TempDir Path dir;

  @BeforeAll
  static void startServers() throws Exception {
    s3 = LocalS3Store.start();
    s3.createBucket(BUCKET);
    rest = LocalRestCatalog.start("s3://" + BUCKET + "/warehouse", s3.icebergProperties());
  }

  @AfterAll
  static void stopServers() throws Exception {
    if (rest != null) {
      rest.close();
    }
    if (s3 != null) {
      s3.close();
    }
  }

  /** The S3 properties a client of the store needs, with the job jar's HTTP client. */
  static Map<String, String> s3Properties(LocalS3Store store) {
    Map<String, String> properties = new LinkedHashMap<>(store.icebergProperties());
    // The jars carry the SDK's Apache client, Iceberg's default, not the URL connection one;
    // over it S3Proxy refuses the signatures of aws-chunked uploads.
    properties.put("http-client.type", "urlconnection");
    return properties;
  }

  static CatalogDefinition catalog() {
    return CatalogDefinition.builder()
        .type("rest")
        .uri(rest.uri())
        .properties(s3Properties(s3))
        .property("credential", "iceberg-cdc:client-secret")
        .build();
  }

  private JobDefinition job(TableIdentifier table, int restartAttempts) {
    return new JobDefinition(
        new ChangelogFile(dir.resolve("changes.jsonl").toString(), null),
        catalog(),
        new TableDefinition(table.toString(), List.of("id"), null, 3),
        new Configuration(),
        DeadLetterOutput.NONE,
        new RuntimeDefinition(
            2,
            Duration.ofMillis(300),
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
    assertThat(table.location()).startsWith("s3://" + BUCKET + "/warehouse/");
    assertThat(changelog.model().differences(table, 20)).isEmpty();
    List<Snapshot> snapshots = Commits.snapshots(table);
    Commits.assertOneCommitPerCheckpoint(snapshots);
    // The data is on the store: S3Proxy keeps each object as a file under its bucket.
    try (Stream<Path> files = Files.walk(s3.bucketDirectory(BUCKET))) {
      assertThat(files.filter(p -> p.toString().endsWith(".parquet")).count()).isPositive();
    }
    assertNoSecretInSummaries(snapshots);
    CatalogDefinition.close(catalog);
  }

  @Test
  void ridesOutACatalogThatIsDownForThirtySeconds() throws Exception {
    TableIdentifier identifier = TableIdentifier.of("rest_db", "outage");
    ChangelogGenerator.Changelog changelog = changelog(120_000, 6_000, 7L);
    CatalogDown.reset(dir.resolve("checkpoints"), List.of(s3.secretKey(), "client-secret"));

    long start = System.nanoTime();
    // No restarts: the job must ride out the outage, not fail and recover.
    new JobRunner(job(identifier, 0), new CatalogDown()).run();

    assertThat(CatalogDown.STOPPED.get()).as("the catalog was taken down mid-run").isTrue();
    assertThat(CatalogDown.RESTARTED_AT_NANOS.get()).isPositive();
    assertThat(System.nanoTime() - start).isGreaterThan(Duration.ofSeconds(25).toNanos());
    Catalog catalog = catalog().connect();
    Table table = catalog.loadTable(identifier);
    assertThat(changelog.model().differences(table, 20)).isEmpty();
    List<Snapshot> snapshots = Commits.snapshots(table);
    Commits.assertOneCommitPerCheckpoint(snapshots);
    assertThat(snapshots)
        .as("commits before and after the outage")
        .hasSizeGreaterThan(CatalogDown.STOP_AT_COMMIT);
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
          .doesNotContain(s3.secretKey())
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
   * again 30 s later, on the same port and database, from a thread of its own. After each later
   * commit it reads every file of the job's checkpoints for the secrets.
   */
  static final class CatalogDown implements CommitListener {
    private static final long serialVersionUID = 1L;
    static final int STOP_AT_COMMIT = 3;
    static final AtomicBoolean STOPPED = new AtomicBoolean();
    static final AtomicLong RESTARTED_AT_NANOS = new AtomicLong();
    static final AtomicInteger CHECKPOINT_FILES_SCANNED = new AtomicInteger();
    static final List<String> SECRETS_FOUND = new java.util.concurrent.CopyOnWriteArrayList<>();
    private static final AtomicInteger COMMITS = new AtomicInteger();
    private static volatile Path checkpoints;
    private static volatile List<String> secrets;

    static void reset(Path checkpointDirectory, List<String> secretValues) {
      STOPPED.set(false);
      RESTARTED_AT_NANOS.set(0);
      COMMITS.set(0);
      CHECKPOINT_FILES_SCANNED.set(0);
      SECRETS_FOUND.clear();
      checkpoints = checkpointDirectory;
      secrets = secretValues;
    }

    @Override
    public void afterCommit(long checkpointId, Snapshot snapshot) throws Exception {
      if (COMMITS.get() > STOP_AT_COMMIT) {
        SECRETS_FOUND.addAll(filesHolding(checkpoints, secrets, CHECKPOINT_FILES_SCANNED));
      }
    }

    @Override
    public void beforeCommit(long checkpointId) throws Exception {
      if (COMMITS.incrementAndGet() != STOP_AT_COMMIT || !STOPPED.compareAndSet(false, true)) {
        return;
      }
      rest.stop();
      Thread restarter =
          new Thread(
              () -> {
                try {
                  Thread.sleep(30_000);
                  rest.start();
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
