package io.icebergcdc.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.icebergcdc.jobs.definition.DeadLetterOutput;
import io.icebergcdc.jobs.definition.JobDefinition;
import io.icebergcdc.jobs.definition.KafkaTopics;
import io.icebergcdc.jobs.definition.RuntimeDefinition;
import io.icebergcdc.jobs.definition.TableDefinition;
import io.icebergcdc.jobs.demo.ChangelogGenerator;
import io.icebergcdc.jobs.pipeline.JobRunner;
import io.icebergcdc.sink.CatalogDefinition;
import io.icebergcdc.sink.MaintenanceOptions;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The short soak of CI (the long one is {@code bench/soak.sh}): a Kafka job that checkpoints every
 * 100 ms while a producer writes a slice of changes after each commit, for three hundred commits,
 * with snapshots expired after three seconds. Throughout, the snapshots kept, the metadata files on
 * storage and the manifests stay bounded, and at the end the table equals the changelog's model.
 */
class SoakITCase {

  @RegisterExtension static final KafkaBroker KAFKA = new KafkaBroker();

  private static final int SLICES = 300;
  private static final int PER_SLICE = 10;
  private static final Duration INTERVAL = Duration.ofMillis(100);
  private static final java.util.regex.Pattern VERSION =
      java.util.regex.Pattern.compile("v\\d+\\.metadata\\.json");

  @TempDir Path dir;

  @Test
  void threeHundredCommitsKeepTheTableBounded() throws Exception {
    ChangelogGenerator.Changelog changelog =
        new ChangelogGenerator(SLICES * PER_SLICE, 1000, 0.05, 0.02, 41).generate();
    List<Map.Entry<String, String>> records = changelog.kafkaRecords();
    String topic = "soak.public.items";
    KAFKA.createTopic(topic, 2);
    Configuration options = new Configuration();
    options.set(MaintenanceOptions.SNAPSHOT_MAX_AGE, Duration.ofSeconds(3));
    options.set(MaintenanceOptions.INTERVAL, Duration.ofMillis(300));
    Path warehouse = dir.resolve("warehouse");
    JobDefinition job =
        new JobDefinition(
            KafkaTopics.ofTopic(
                KAFKA.bootstrapServers(), topic, "soak-it", KafkaTopics.DEBEZIUM_JSON),
            CatalogDefinition.hadoop(warehouse.toString()),
            new TableDefinition("soak.{table}", List.of(), null, 3),
            options,
            DeadLetterOutput.NONE,
            new RuntimeDefinition(
                2, INTERVAL, dir.resolve("checkpoints").toString(), "hashmap", null, 0));
    // The first slice creates the table (from its Debezium schema) before the job starts; each
    // next one is written once the one before is committed, so that every slice is a commit.
    int sent = PER_SLICE;
    KAFKA.produce(topic, records.subList(0, sent));
    JobClient client = new JobRunner(job).start();
    java.util.concurrent.CompletableFuture<?> result = client.getJobExecutionResult();
    Catalog catalog = job.catalog().loader().loadCatalog();
    TableIdentifier identifier = TableIdentifier.of("soak", "items");
    int mostSnapshots = 0;
    int mostManifests = 0;
    long mostMetadataFiles = 0;
    long mostUncommitted = 0;
    try {
      Table table = catalog.loadTable(identifier);
      long committed = 0;
      while (sent < records.size()) {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        do {
          assertThat(result).as("the soak's job").isNotDone();
          assertThat(System.nanoTime())
              .as("a commit of slice %s", sent / PER_SLICE)
              .isLessThan(deadline);
          Thread.sleep(10);
          table.refresh();
        } while (table.currentSnapshot() == null
            || table.currentSnapshot().sequenceNumber() == committed);
        committed = table.currentSnapshot().sequenceNumber();
        int end = Math.min(records.size(), sent + PER_SLICE);
        KAFKA.produce(topic, records.subList(sent, end));
        sent = end;
        if (sent % (PER_SLICE * 10) == 0) {
          mostSnapshots = Math.max(mostSnapshots, size(table));
          mostManifests = Math.max(mostManifests, manifests(table));
          mostMetadataFiles = Math.max(mostMetadataFiles, metadataVersions(warehouse));
          mostUncommitted = Math.max(mostUncommitted, uncommittedMetadata(warehouse));
        }
      }
      long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
      List<String> differences;
      do {
        Thread.sleep(300);
        table.refresh();
        differences = changelog.model().differences(table, 10);
      } while (!differences.isEmpty() && System.nanoTime() < deadline);
      assertThat(differences).as("the table against its changelog").isEmpty();
      long commits = table.currentSnapshot().sequenceNumber();
      assertThat(commits).as("commits").isGreaterThanOrEqualTo(SLICES);
      // Three seconds of snapshots at up to ten commits a second, plus one interval of the
      // maintenance; the metadata versions a table this project creates keeps (20 previous, the
      // current one, and the one a commit has just added before it deletes the oldest); at most
      // the one file of a commit in flight not yet renamed to its version; and the manifests that
      // Iceberg merges at 100 of each kind.
      assertThat(mostSnapshots)
          .as("snapshots kept, at most, after %s commits", commits)
          .isLessThanOrEqualTo(45);
      assertThat(mostMetadataFiles)
          .as("metadata versions on storage, at most")
          .isLessThanOrEqualTo(22);
      assertThat(mostUncommitted)
          .as("metadata files of commits in flight, at most")
          .isLessThanOrEqualTo(1);
      assertThat(mostManifests).as("data and delete manifests, at most").isLessThanOrEqualTo(210);
    } finally {
      // The job runs on a cluster of its own, which ends with it: only a job still running is
      // cancelled.
      if (!result.isDone()) {
        JobClients.cancelAndAwait(client, dir);
      }
    }
  }

  private static int size(Table table) {
    int n = 0;
    for (Snapshot ignored : table.snapshots()) {
      n++;
    }
    return n;
  }

  private static int manifests(Table table) {
    Snapshot current = table.currentSnapshot();
    return current == null
        ? 0
        : current.dataManifests(table.io()).size() + current.deleteManifests(table.io()).size();
  }

  /**
   * The table's metadata versions ({@code v<N>.metadata.json}). A commit writes its metadata under
   * a random name, then renames it to its version: a listing that races the rename may see the file
   * under both names, so versions and files in flight are counted apart.
   */
  private static long metadataVersions(Path warehouse) throws Exception {
    return metadataFiles(warehouse, true);
  }

  /** The metadata files written by commits in flight, or left by failed ones. */
  private static long uncommittedMetadata(Path warehouse) throws Exception {
    return metadataFiles(warehouse, false);
  }

  private static long metadataFiles(Path warehouse, boolean versions) throws Exception {
    Path metadata = warehouse.resolve("soak").resolve("items").resolve("metadata");
    try (Stream<Path> files = Files.list(metadata)) {
      return files
          .map(f -> f.getFileName().toString())
          .filter(name -> name.endsWith(".metadata.json"))
          .filter(name -> VERSION.matcher(name).matches() == versions)
          .count();
    }
  }
}
