package io.icebergcdc.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.icebergcdc.commit.CommitListener;
import io.icebergcdc.commit.OrphanFiles;
import io.icebergcdc.commit.SnapshotSummaryKeys;
import io.icebergcdc.dedup.DedupOptions;
import io.icebergcdc.jobs.definition.ChangelogFile;
import io.icebergcdc.jobs.definition.DeadLetterOutput;
import io.icebergcdc.jobs.definition.JobDefinition;
import io.icebergcdc.jobs.definition.RuntimeDefinition;
import io.icebergcdc.jobs.definition.TableDefinition;
import io.icebergcdc.jobs.demo.ChangelogGenerator;
import io.icebergcdc.jobs.pipeline.JobRunner;
import io.icebergcdc.sink.CatalogDefinition;
import io.icebergcdc.sink.DeleteMode;
import io.icebergcdc.sink.MaintenanceOptions;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileContent;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.TableUtil;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.GenericFileWriterFactory;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.deletes.EqualityDeleteWriter;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.DataWriter;
import org.apache.iceberg.io.OutputFileFactory;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Applies generated changelogs, with out-of-order and duplicate delivery, deletes and key changes,
 * on a MiniCluster with parallelism 2 and frequent checkpoints, and compares the table, read back
 * through Iceberg with its deletes applied, row for row with a reference model of the changelog.
 */
class ApplyChangelogITCase {

  @RegisterExtension
  static final MiniClusterExtension FLINK =
      new MiniClusterExtension(
          new MiniClusterResourceConfiguration.Builder()
              .setNumberTaskManagers(1)
              .setNumberSlotsPerTaskManager(4)
              .build());

  private static final TableIdentifier TABLE = TableIdentifier.of("db", "items");

  @TempDir Path dir;

  /** The changelog file the jobs read, in {@link #dir}. */
  private String changesFile = "changes.jsonl";

  private ChangelogGenerator.Changelog changelog(int changes, int keys, long seed) {
    ChangelogGenerator.Changelog changelog =
        new ChangelogGenerator(changes, keys, 0.10, 0.02, seed).generate();
    assertThat(changelog.outOfOrder()).isGreaterThanOrEqualTo(changes / 10 - changes / 100);
    assertThat(changelog.duplicates()).isGreaterThan(changes / 100);
    changelog.writeTo(dir.resolve("changes.jsonl"));
    return changelog;
  }

  private JobDefinition job(
      String partitionBy,
      int formatVersion,
      Map<String, String> catalogProperties,
      int restartAttempts,
      Configuration sinkOptions) {
    return job(
        partitionBy,
        formatVersion,
        catalogProperties,
        restartAttempts,
        sinkOptions,
        Duration.ofMillis(200));
  }

  private JobDefinition job(
      String partitionBy,
      int formatVersion,
      Map<String, String> catalogProperties,
      int restartAttempts,
      Configuration sinkOptions,
      Duration checkpointInterval) {
    return new JobDefinition(
        new ChangelogFile(dir.resolve(changesFile).toString(), null),
        CatalogDefinition.builder()
            .warehouse(dir.resolve("warehouse").toString())
            .properties(catalogProperties)
            .build(),
        new TableDefinition(TABLE.toString(), List.of("id"), partitionBy, formatVersion),
        sinkOptions,
        DeadLetterOutput.NONE,
        new RuntimeDefinition(
            2,
            checkpointInterval,
            dir.resolve("checkpoints").toString(),
            "hashmap",
            null,
            restartAttempts));
  }

  private static Configuration options(DeleteMode mode) {
    Configuration options = new Configuration();
    options.setString("sink.delete-mode", mode.name());
    return options;
  }

  private Table table() {
    return CatalogDefinition.hadoop(dir.resolve("warehouse").toString())
        .loader()
        .loadCatalog()
        .loadTable(TABLE);
  }

  private static String localPath(String location) {
    return location.startsWith("file:")
        ? Path.of(java.net.URI.create(location)).toString()
        : location;
  }

  private static long sum(List<Snapshot> snapshots, String key) {
    return snapshots.stream()
        .mapToLong(s -> Long.parseLong(s.summary().getOrDefault(key, "0")))
        .sum();
  }

  /**
   * In position mode no equality delete is left and every data file has at most one delete file
   * (its deletion vector in format version 3, its position delete file in version 2, merged with
   * the earlier one at every checkpoint that deletes more of its rows, so that they do not pile
   * up); in equality mode every delete is an equality delete on the key, but for the rows of a
   * checkpoint that the writer did not know complete when their keys changed again, deleted by
   * position (at most one delete file a data file, as in position mode).
   */
  private static void assertDeleteFilesOf(Table table, DeleteMode mode) throws Exception {
    boolean v3 = TableUtil.formatVersion(table) >= 3;
    try (CloseableIterable<FileScanTask> tasks = table.newScan().planFiles()) {
      for (FileScanTask task : tasks) {
        int positional = 0;
        for (DeleteFile delete : task.deletes()) {
          if (mode == DeleteMode.EQUALITY && delete.content() != FileContent.POSITION_DELETES) {
            assertThat(delete.content()).isEqualTo(FileContent.EQUALITY_DELETES);
            assertThat(delete.equalityFieldIds()).containsExactly(1);
          } else {
            assertThat(delete.content()).isEqualTo(FileContent.POSITION_DELETES);
            assertThat(delete.format()).isEqualTo(v3 ? FileFormat.PUFFIN : FileFormat.PARQUET);
            positional++;
          }
        }
        assertThat(positional)
            .as("position delete files of " + task.file().location())
            .isLessThanOrEqualTo(1);
      }
    }
  }

  /**
   * A job started without state on a table this project wrote takes up where the table stands:
   * applying the first half of a changelog, then the second, then the first again changes nothing,
   * counts every change of the third run as stale in a snapshot of its own, and leaves the source
   * position where it was; only with {@code dedup.ignore-table-position} does the old half go in
   * again.
   */
  @Test
  void aJobWithoutStateTakesUpWhereTheTableStandsAndGoesBackOnlyWhenTold() throws Exception {
    // In source order, with duplicates: a changelog split into files whose changes interleave (a
    // later one holding changes older than the latest of an earlier one) is a different case, which
    // the README describes.
    ChangelogGenerator.Changelog changelog =
        new ChangelogGenerator(20_000, 2_000, 0.0, 0.02, 5L).generate();
    List<String> lines = changelog.lines();
    List<String> first = lines.subList(0, lines.size() / 2);
    List<String> second = lines.subList(lines.size() / 2, lines.size());
    Path file = dir.resolve("changes.jsonl");
    Files.write(file, first);
    new JobRunner(job(null, 2, Map.of(), 0, options(DeleteMode.POSITION)), null).run();
    Files.write(file, second);
    new JobRunner(job(null, 2, Map.of(), 0, options(DeleteMode.POSITION)), null).run();
    Table table = table();
    assertThat(changelog.model().differences(table, 20)).isEmpty();
    Map<String, String> afterBoth = table.currentSnapshot().summary();
    long afterBothId = table.currentSnapshot().snapshotId();
    String position = afterBoth.get(SnapshotSummaryKeys.SOURCE_POSITION);
    assertThat(position).startsWith("lsn=");

    Files.write(file, first);
    new JobRunner(job(null, 2, Map.of(), 0, options(DeleteMode.POSITION)), null).run();

    table.refresh();
    assertThat(changelog.model().differences(table, 20)).isEmpty();
    Map<String, String> again = table.currentSnapshot().summary();
    assertThat(table.currentSnapshot().snapshotId())
        .as("a snapshot that counts the stale changes")
        .isNotEqualTo(afterBothId);
    // The job's writers may also have merged the small files of the first two (in more commits).
    List<Snapshot> third = new ArrayList<>();
    for (Snapshot snapshot : Commits.snapshots(table)) {
      if (snapshot
          .summary()
          .get(SnapshotSummaryKeys.JOB_ID)
          .equals(again.get(SnapshotSummaryKeys.JOB_ID))) {
        third.add(snapshot);
      }
    }
    assertThat(sum(third, SnapshotSummaryKeys.STALE_DROPPED)).isEqualTo(first.size());
    assertThat(sum(third, SnapshotSummaryKeys.ROWS_INSERTED)).isZero();
    assertThat(sum(third, SnapshotSummaryKeys.ROWS_UPDATED)).isZero();
    assertThat(sum(third, SnapshotSummaryKeys.ROWS_DELETED)).isZero();
    assertThat(again.get(SnapshotSummaryKeys.SOURCE_POSITION)).isEqualTo(position);

    Configuration goBack = options(DeleteMode.POSITION);
    goBack.set(DedupOptions.IGNORE_TABLE_POSITION, true);
    new JobRunner(job(null, 2, Map.of(), 0, goBack), null).run();
    table.refresh();
    assertThat(changelog.model().differences(table, 20))
        .as("the first half applied again over the second")
        .isNotEmpty();
  }

  /**
   * With a maintenance policy that keeps only the last three snapshots, checked after every commit,
   * a job of many commits leaves three snapshots, at most the 20 metadata files a table this
   * project creates keeps, and no file on storage that none of them references (the data and delete
   * files that compaction and deletes replaced went with their snapshots); the rows are those of
   * the model.
   */
  @Test
  void theCommitterExpiresOldSnapshotsAndTheirFilesAndKeepsFewMetadataFiles() throws Exception {
    ChangelogGenerator.Changelog changelog = changelog(200_000, 10_000, 3L);
    Configuration options = options(DeleteMode.POSITION);
    options.set(MaintenanceOptions.SNAPSHOT_MAX_AGE, Duration.ZERO);
    options.set(MaintenanceOptions.SNAPSHOTS_RETAINED, 3);
    options.set(MaintenanceOptions.INTERVAL, Duration.ZERO);
    // Few metadata files kept, so that a handful of commits shows whether older ones are deleted
    // (the catalog's override wins over the 20 the project gives new tables).
    Map<String, String> catalogProperties =
        Map.of("table-override." + TableProperties.METADATA_PREVIOUS_VERSIONS_MAX, "2");

    // Checkpoints as often as the job can take them: how many commits it makes depends on the
    // machine's speed, and the checks need only more than it keeps snapshots and metadata files.
    new JobRunner(job(null, 3, catalogProperties, 0, options, Duration.ofMillis(20)), null).run();

    Table table = table();
    assertThat(changelog.model().differences(table, 20)).isEmpty();
    assertThat(table.properties())
        .containsEntry(TableProperties.METADATA_PREVIOUS_VERSIONS_MAX, "2");
    long commits = table.currentSnapshot().sequenceNumber();
    assertThat(commits).as("commits of the job").isGreaterThan(3);
    assertThat(table.snapshots()).hasSizeLessThanOrEqualTo(3);
    Path tableDir = dir.resolve("warehouse").resolve("db").resolve("items");
    try (Stream<Path> metadata = Files.list(tableDir.resolve("metadata"))) {
      assertThat(metadata.filter(f -> f.toString().endsWith(".metadata.json")).count())
          .as("metadata files after %s commits and as many expiries", commits)
          .isLessThanOrEqualTo(3);
    }
    // Nothing a kept snapshot reads was deleted with the expired ones (deletion vectors share
    // puffin files). Files replaced before the kept snapshots may be left on storage: Iceberg's
    // cleanup by reachability does not always find them; the orphan removal takes them later.
    for (Snapshot snapshot : table.snapshots()) {
      try (CloseableIterable<FileScanTask> tasks =
          table.newScan().useSnapshot(snapshot.snapshotId()).planFiles()) {
        for (FileScanTask task : tasks) {
          assertThat(Path.of(localPath(task.file().location()))).exists();
          for (DeleteFile delete : task.deletes()) {
            assertThat(Path.of(localPath(delete.location()))).exists();
          }
        }
      }
    }
  }

  @ParameterizedTest(name = "{0} deletes, format version {1}")
  @CsvSource({"POSITION, 2", "POSITION, 3", "EQUALITY, 2"})
  void appliesAChangelogWithDisorderAndDuplicatesExactly(DeleteMode mode, int formatVersion)
      throws Exception {
    ChangelogGenerator.Changelog changelog = changelog(100_000, 10_000, 1L);

    // Checkpoints often enough that the writers compact between commits however fast the
    // changes are applied (at 200 ms, a run that applied them within a second compacted nothing).
    new JobRunner(job(null, formatVersion, Map.of(), 0, options(mode), Duration.ofMillis(50)), null)
        .run();

    Table table = table();
    assertThat(changelog.model().differences(table, 20)).isEmpty();
    List<Snapshot> snapshots = Commits.snapshots(table);
    assertThat(snapshots.size()).isGreaterThan(1);
    Commits.assertOneCommitPerCheckpoint(snapshots);
    assertDeleteFilesOf(table, mode);
    // Every delivered change is applied, or dropped as stale or duplicate and counted.
    assertThat(sum(snapshots, SnapshotSummaryKeys.DUPLICATES_DROPPED))
        .isGreaterThanOrEqualTo(changelog.duplicates() / 2);
    assertThat(sum(snapshots, SnapshotSummaryKeys.STALE_DROPPED)).isPositive();
    if (mode == DeleteMode.POSITION) {
      assertThat(sum(snapshots, SnapshotSummaryKeys.DELETES_FELL_BACK)).isZero();
      assertThat(sum(snapshots, SnapshotSummaryKeys.DATA_FILES_COMPACTED))
          .as("data files compacted by the writers")
          .isPositive();
    }
  }

  /**
   * A gzipped changelog whose text starts with a UTF-8 byte order mark creates its missing table
   * from its first event's schema, as a plain one does (the look at the first event read the
   * compressed bytes as text, and the mark as JSON).
   */
  @Test
  void appliesAGzippedChangelogWithAByteOrderMarkToATableItCreates() throws Exception {
    ChangelogGenerator.Changelog changelog = changelog(20_000, 2_000, 7L);
    changesFile = "changes.jsonl.gz";
    try (var out =
        new java.util.zip.GZIPOutputStream(
            java.nio.file.Files.newOutputStream(dir.resolve(changesFile)))) {
      out.write(new byte[] {(byte) 0xEF, (byte) 0xBB, (byte) 0xBF});
      java.nio.file.Files.copy(dir.resolve("changes.jsonl"), out);
    }

    new JobRunner(job(null, 2, Map.of(), 0, options(DeleteMode.POSITION)), null).run();

    assertThat(changelog.model().differences(table(), 20)).isEmpty();
  }

  @Test
  void appliesItToAPartitionedFormatVersion3TableDistributedByPartition() throws Exception {
    ChangelogGenerator.Changelog changelog = changelog(40_000, 4_000, 2L);
    Configuration options = options(DeleteMode.POSITION);
    options.setString("sink.distribution", "PARTITION");

    new JobRunner(job("bucket(4, id)", 3, Map.of(), 0, options), null).run();

    Table table = table();
    assertThat(TableUtil.formatVersion(table)).isEqualTo(3);
    assertThat(changelog.model().differences(table, 20)).isEmpty();
    Commits.assertOneCommitPerCheckpoint(Commits.snapshots(table));
    assertDeleteFilesOf(table, DeleteMode.POSITION);
    // Distribution by partition: each partition is written by one writer subtask, whose index
    // starts the names of its files. (A snapshot may add two files of a partition: the last one
    // commits what the end of input flushed and what the final checkpoint compacted.)
    Map<String, Set<String>> writersByPartition = new TreeMap<>();
    for (Snapshot snapshot : Commits.snapshots(table)) {
      for (DataFile file : snapshot.addedDataFiles(table.io())) {
        String name = Path.of(file.location()).getFileName().toString();
        writersByPartition
            .computeIfAbsent(file.partition().toString(), p -> new TreeSet<>())
            .add(name.substring(0, name.indexOf('-')));
      }
    }
    assertThat(writersByPartition).hasSize(4);
    assertThat(writersByPartition.values()).allSatisfy(writers -> assertThat(writers).hasSize(1));
  }

  /**
   * Equality mode into a partitioned table, its changes distributed by partition: the first half of
   * a changelog by one job, the second by a job without state, whose writer knows none of the
   * table's keys and so deletes each key it changes by key, in the partition of its key; the table
   * equals the changelog's model.
   */
  @Test
  void appliesItByKeyToAPartitionedTable() throws Exception {
    ChangelogGenerator.Changelog changelog =
        new ChangelogGenerator(40_000, 4_000, 0.0, 0.02, 3L).generate();
    List<String> lines = changelog.lines();
    Path file = dir.resolve("changes.jsonl");
    Configuration options = options(DeleteMode.EQUALITY);
    options.setString("sink.distribution", "PARTITION");
    Files.write(file, lines.subList(0, lines.size() / 2));
    new JobRunner(job("bucket(4, id)", 2, Map.of(), 0, options), null).run();
    long lastOfFirst = table().currentSnapshot().snapshotId();
    Files.write(file, lines.subList(lines.size() / 2, lines.size()));
    new JobRunner(job("bucket(4, id)", 2, Map.of(), 0, options), null).run();

    Table table = table();
    assertThat(changelog.model().differences(table, 20)).isEmpty();
    assertDeleteFilesOf(table, DeleteMode.EQUALITY);
    List<DeleteFile> byKey = new ArrayList<>();
    boolean second = false;
    for (Snapshot snapshot : Commits.snapshots(table)) {
      if (second) {
        for (DeleteFile delete : snapshot.addedDeleteFiles(table.io())) {
          if (delete.content() == FileContent.EQUALITY_DELETES) {
            byKey.add(delete);
          }
        }
      }
      second |= snapshot.snapshotId() == lastOfFirst;
    }
    assertThat(byKey)
        .as("the second job's deletes by key")
        .isNotEmpty()
        .allSatisfy(
            delete -> {
              assertThat(delete.specId()).isEqualTo(table.spec().specId());
              assertThat(delete.partition().get(0, Integer.class)).isBetween(0, 3);
            });
  }

  @ParameterizedTest(name = "{0} deletes, format version {1}")
  @CsvSource({"POSITION, 3", "POSITION, 2", "EQUALITY, 2"})
  void failuresInWritersAndAroundCommitsLoseNothingAndCommitNothingTwice(
      DeleteMode mode, int formatVersion) throws Exception {
    ChangelogGenerator.Changelog changelog = changelog(100_000, 10_000, 3L);
    FlakyFileIO.failEvery(2, 3);
    InjectedCommitFailures.reset();
    Configuration options = options(mode);
    // Look for orphans after every commit, so that the last one finds what the failures left.
    options.setString("maintenance.remove-orphans.interval", "0s");
    options.setString("maintenance.interval", "0s");

    // Checkpoints often enough that commits follow the injected failures however fast the
    // changes are applied. A run whose last commit fails after committing restarts with nothing
    // to commit: the restore looks for the orphans then.
    new JobRunner(
            job(
                null,
                formatVersion,
                Map.of(CatalogProperties.FILE_IO_IMPL, FlakyFileIO.class.getName()),
                20,
                options,
                Duration.ofMillis(50)),
            new InjectedCommitFailures())
        .run();

    // How many commits a run makes depends on timing; the first failure of each kind always
    // happens, the later ones when there are enough commits.
    assertThat(FlakyFileIO.FAILURES.get()).as("writer failures injected").isBetween(1, 3);
    assertThat(InjectedCommitFailures.BEFORE.get()).as("failures before a commit").isBetween(1, 2);
    assertThat(InjectedCommitFailures.AFTER.get()).as("failures after a commit").isBetween(1, 2);
    Table table = table();
    assertThat(changelog.model().differences(table, 20)).isEmpty();
    Commits.assertOneCommitPerCheckpoint(Commits.snapshots(table));
    assertDeleteFilesOf(table, mode);
    if (mode == DeleteMode.POSITION) {
      assertThat(sum(Commits.snapshots(table), SnapshotSummaryKeys.DATA_FILES_COMPACTED))
          .as("data files compacted by the writers, across the restores")
          .isPositive();
      // The writers' files of attempts that failed are gone once their checkpoint committed.
      assertThat(OrphanFiles.unreferenced(table))
          .as("files the job wrote that no snapshot references")
          .filteredOn(candidate -> candidate.owner() != null)
          .isEmpty();
    }
  }

  @ParameterizedTest(name = "format version {0}")
  @ValueSource(ints = {2, 3})
  void aConcurrentRewriteOfDataFilesFallsBackToEqualityDeletesAndStaysExact(int formatVersion)
      throws Exception {
    ChangelogGenerator.Changelog changelog = changelog(100_000, 10_000, 5L);
    RewriteEverything.reset(dir.resolve("warehouse").toString());

    new JobRunner(
            job(null, formatVersion, Map.of(), 0, options(DeleteMode.POSITION)),
            new RewriteEverything())
        .run();

    // The second rewrite happens if the job makes three commits or more, as it usually does.
    assertThat(RewriteEverything.REWRITES.get()).isBetween(1, 2);
    Table table = table();
    assertThat(changelog.model().differences(table, 20)).isEmpty();
    Commits.assertOneCommitPerCheckpoint(Commits.snapshots(table));
    assertThat(sum(Commits.snapshots(table), SnapshotSummaryKeys.DELETES_FELL_BACK))
        .as("deletes of rows in rewritten files")
        .isPositive();
  }

  @ParameterizedTest(name = "format version {0}")
  @ValueSource(ints = {2, 3})
  void rowsAnotherWriterDeletesWhileTheWritersCompactThemStayDeleted(int formatVersion)
      throws Exception {
    // Long enough for the checkpoints the other writer deletes before, and more.
    ChangelogGenerator.Changelog changelog = changelog(200_000, 10_000, 9L);
    ForeignDeletes.reset(dir.resolve("warehouse").toString());

    // Checkpoints every 50 ms: a run warmed up by the one before went through the changes in a
    // second, in too few commits for the other writer's deletes to meet a compaction.
    new JobRunner(
            job(
                null,
                formatVersion,
                Map.of(),
                0,
                options(DeleteMode.POSITION),
                Duration.ofMillis(50)),
            new ForeignDeletes())
        .run();

    assertThat(ForeignDeletes.DELETED).isNotEmpty();
    Table table = table();
    assertThat(
            changelog
                .model()
                .afterDeletesByAnotherWriter(ForeignDeletes.DELETED)
                .differences(table, 20))
        .isEmpty();
    List<Snapshot> snapshots = Commits.snapshots(table);
    Commits.assertOneCommitPerCheckpoint(snapshots);
    assertThat(sum(snapshots, SnapshotSummaryKeys.COMPACTED_ROWS_DELETED_MEANWHILE))
        .as("rows the other writer deleted while the writers compacted their files")
        .isPositive();
  }

  @ParameterizedTest(name = "bootstrap {0}")
  @ValueSource(booleans = {true, false})
  void aJobWithoutStateOnAFilledTableBootstrapsTheKeyIndex(boolean bootstrap) throws Exception {
    // Delivered in source order, so that the second job, which starts without dedup state, meets
    // no change older than what the first applied.
    ChangelogGenerator.Changelog changelog =
        new ChangelogGenerator(40_000, 4_000, 0.0, 0.0, 6L).generate();
    List<String> lines = changelog.lines();
    Files.write(dir.resolve("changes.jsonl"), lines.subList(0, lines.size() / 2));
    new JobRunner(job(null, 3, Map.of(), 0, options(DeleteMode.POSITION)), null).run();

    Files.write(dir.resolve("changes.jsonl"), lines.subList(lines.size() / 2, lines.size()));
    Configuration second = options(DeleteMode.POSITION);
    second.setString("sink.bootstrap-index", Boolean.toString(bootstrap));
    new JobRunner(job(null, 3, Map.of(), 0, second), null).run();

    Table table = table();
    assertThat(changelog.model().differences(table, 20)).isEmpty();
    long fellBack = sum(Commits.snapshots(table), SnapshotSummaryKeys.DELETES_FELL_BACK);
    if (bootstrap) {
      assertThat(fellBack).isZero();
      assertDeleteFilesOf(table, DeleteMode.POSITION);
    } else {
      assertThat(fellBack).isPositive();
    }
  }

  /**
   * A file whose events change their schema part way (a column added, an int widened to bigint),
   * parsed by two parsers: the parser that meets the first event of the new schema evolves the
   * table, and the writer writes that schema's rows from then on, including events of the old
   * schema read after it (the other parser's, and later lines of the old schema). The job fails
   * once, just after its first commit in the new schema, and Flink restarts it: the lines after its
   * checkpoint are evolved into the same schema again. The job is never ended for the change: one
   * job committed every checkpoint, once, and the table equals what the events leave.
   *
   * <p>Distributed by partition, the table is partitioned by a bucket of its key, which the change
   * widens from int to bigint as well: the keys keep their partitions, and so their writer subtask,
   * and keys beyond the int range are written after it. With equality deletes ({@code EQUALITY},
   * distributed by key) the key is widened too, and the writer deletes by key (or, rows of a
   * checkpoint not known complete yet, by position; the file is read in so few checkpoints that it
   * may need no delete by key at all); then a job without state updates 200 keys of the rows
   * written, each deleted by a wide key's equality delete.
   */
  @ParameterizedTest
  @ValueSource(strings = {"PRIMARY_KEY", "PARTITION", "EQUALITY"})
  void followsASchemaChangeWithinTheFileWithoutEndingTheJob(String distribution) throws Exception {
    boolean byPartition = distribution.equals("PARTITION");
    boolean equality = distribution.equals("EQUALITY");
    EvolvingEvents.FailAfterFirstEvolvedCommit.FAILED.set(false);
    EvolvingEvents.Changelog changelog =
        new EvolvingEvents.Changelog(1000, byPartition || equality);
    List<String> lines = new ArrayList<>();
    for (long id = 1; id <= 3000; id++) {
      lines.add(changelog.event(false, "c", id, "item " + id, id, null));
    }
    for (long id = 1; id <= 1500; id++) {
      lines.add(changelog.event(true, "u", id, "item " + id, 5_000_000_000L + id, "note " + id));
    }
    for (long id = 2500; id <= 2600; id++) {
      lines.add(changelog.event(true, "d", id, null, 0, null));
    }
    for (long id = 3001; id <= 3500; id++) {
      lines.add(changelog.event(true, "c", id, "new " + id, id, "new note"));
    }
    for (long id = 2000; id <= 2100; id++) {
      // Of the old schema, after the change: no note.
      lines.add(changelog.event(false, "u", id, "old " + id, id, null));
    }
    if (byPartition || equality) {
      for (long id = 5_000_000_000L; id < 5_000_000_200L; id++) {
        lines.add(changelog.event(true, "c", id, "wide " + id, id, "wide note"));
      }
    }
    if (equality) {
      for (long id = 5_000_000_100L; id < 5_000_000_120L; id++) {
        lines.add(changelog.event(true, "d", id, null, 0, null));
      }
    }
    if (byPartition) {
      // A truncate after the key was widened: its deletes carry the wide keys.
      lines.add(changelog.truncate());
      for (long id = 5_000_000_100L; id < 5_000_000_120L; id++) {
        lines.add(changelog.event(true, "c", id, "after " + id, id, "after the truncate"));
      }
    }
    Files.write(dir.resolve("changes.jsonl"), lines);
    Configuration options = new Configuration();
    if (equality) {
      options.setString("sink.delete-mode", "EQUALITY");
    } else {
      options.setString("sink.distribution", distribution);
    }

    new JobRunner(
            job(
                byPartition ? "bucket(4, id)" : null,
                3,
                Map.of(),
                3,
                options,
                Duration.ofMillis(100)),
            new EvolvingEvents.FailAfterFirstEvolvedCommit())
        .run();

    Table table = table();
    assertThat(EvolvingEvents.rows(table)).isEqualTo(changelog.model());
    EvolvingEvents.assertEvolvedByOneJob(table);
    if (equality) {
      assertThat(table.schema().findField("id").type()).isEqualTo(Types.LongType.get());
      assertDeleteFilesOf(table, DeleteMode.EQUALITY);
      // A job without state on the rows written: its writer knows none of the table's keys, so it
      // deletes each by key, the wide keys' equality deletes reaching the rows the first job wrote.
      long lastOfFirst = table.currentSnapshot().snapshotId();
      List<String> again = new ArrayList<>();
      for (long id = 1401; id <= 1600; id++) {
        again.add(changelog.event(true, "u", id, "again " + id, id, "again"));
      }
      Files.write(dir.resolve("changes.jsonl"), again);
      new JobRunner(job(null, 3, Map.of(), 3, options, Duration.ofMillis(100))).run();
      table.refresh();
      assertThat(EvolvingEvents.rows(table)).isEqualTo(changelog.model());
      long equalityDeletes = 0;
      boolean second = false;
      for (Snapshot snapshot : Commits.snapshots(table)) {
        if (second) {
          equalityDeletes +=
              Long.parseLong(snapshot.summary().getOrDefault("added-equality-deletes", "0"));
        }
        second |= snapshot.snapshotId() == lastOfFirst;
      }
      assertThat(equalityDeletes).as("keys deleted by key by the second job").isEqualTo(200);
      assertDeleteFilesOf(table, DeleteMode.EQUALITY);
    }
    if (byPartition) {
      assertThat(table.schema().findField("id").type()).isEqualTo(Types.LongType.get());
      assertThat(table.spec().fields()).hasSize(1);
    }
  }

  /**
   * A truncate in the file, parsed by two parsers: the rows of the changes before it are deleted,
   * those of the changes after it kept, whichever parser read them first; distributed by key or by
   * partition.
   */
  @ParameterizedTest
  @ValueSource(strings = {"PRIMARY_KEY", "PARTITION"})
  void appliesATruncateWithinTheFile(String distribution) throws Exception {
    boolean byPartition = distribution.equals("PARTITION");
    EvolvingEvents.Changelog changelog = new EvolvingEvents.Changelog(1000);
    List<String> lines = new ArrayList<>();
    for (long id = 1; id <= 3000; id++) {
      lines.add(changelog.event(false, "c", id, "item " + id, id, null));
    }
    for (long id = 1; id <= 500; id++) {
      lines.add(changelog.event(false, "u", id, "updated " + id, id, null));
    }
    lines.add(changelog.truncate());
    for (long id = 2900; id <= 3200; id++) {
      lines.add(changelog.event(false, "c", id, "after " + id, id, null));
    }
    for (long id = 3100; id <= 3150; id++) {
      lines.add(changelog.event(false, "d", id, null, 0, null));
    }
    Files.write(dir.resolve("changes.jsonl"), lines);
    Configuration options = new Configuration();
    options.setString("sink.distribution", distribution);

    new JobRunner(job(byPartition ? "bucket(4, id)" : null, 3, Map.of(), 0, options), null).run();

    Table table = table();
    assertThat(changelog.model()).hasSize(250);
    assertThat(EvolvingEvents.rows(table)).isEqualTo(changelog.model());
  }

  /**
   * Five jobs, each without state and with compaction turned off, leave small files with keys of
   * both writer subtasks; a sixth job, with the defaults, finds them shared (of other jobs): each
   * of its writers moves the rows of its keys out of them, and the commit that deletes a file's
   * last live row removes it. The table stays exact, with position deletes only.
   */
  @Test
  void smallFilesOfEarlierJobsAreMergedByTheWritersThatShareTheirKeys() throws Exception {
    ChangelogGenerator.Changelog changelog =
        new ChangelogGenerator(30_000, 20_000, 0.0, 0.0, 9L).generate();
    List<String> lines = changelog.lines();
    int slices = 6;
    Configuration noMerging = options(DeleteMode.POSITION);
    noMerging.setString("sink.compaction.small-file-size", "0");
    noMerging.setString("sink.compaction.deleted-ratio", "1");
    for (int slice = 0; slice < slices - 1; slice++) {
      Files.write(
          dir.resolve("changes.jsonl"),
          lines.subList(slice * lines.size() / slices, (slice + 1) * lines.size() / slices));
      new JobRunner(job(null, 3, Map.of(), 0, noMerging), null).run();
    }
    Table table = table();
    int before = dataFiles(table);

    Files.write(
        dir.resolve("changes.jsonl"),
        lines.subList((slices - 1) * lines.size() / slices, lines.size()));
    new JobRunner(job(null, 3, Map.of(), 0, options(DeleteMode.POSITION)), null).run();

    table.refresh();
    assertThat(changelog.model().differences(table, 20)).isEmpty();
    List<Snapshot> last = Commits.snapshots(table);
    assertThat(sum(last, SnapshotSummaryKeys.DATA_FILES_EMPTIED))
        .as("files removed with their last row")
        .isPositive();
    assertThat(sum(last, SnapshotSummaryKeys.DELETES_FELL_BACK)).isZero();
    assertThat(dataFiles(table)).as("data files, %s before", before).isLessThan(before / 2);
    assertDeleteFilesOf(table, DeleteMode.POSITION);
  }

  private static int dataFiles(Table table) throws Exception {
    int files = 0;
    try (CloseableIterable<FileScanTask> tasks = table.newScan().planFiles()) {
      for (FileScanTask ignored : tasks) {
        files++;
      }
    }
    return files;
  }

  /**
   * Fails the job just before some commits and just after others: the first leaves a checkpoint
   * pending for the restore to commit, the second leaves one committed but not acknowledged.
   */
  static final class InjectedCommitFailures implements CommitListener {
    private static final long serialVersionUID = 1L;
    static final AtomicInteger BEFORE = new AtomicInteger();
    static final AtomicInteger AFTER = new AtomicInteger();
    private static final AtomicInteger BEFORE_CALLS = new AtomicInteger();
    private static final AtomicInteger AFTER_CALLS = new AtomicInteger();

    static void reset() {
      BEFORE.set(0);
      AFTER.set(0);
      BEFORE_CALLS.set(0);
      AFTER_CALLS.set(0);
    }

    @Override
    public void beforeCommit(long checkpointId) {
      int call = BEFORE_CALLS.incrementAndGet();
      if (call == 1 || call == 4) {
        BEFORE.incrementAndGet();
        throw new IllegalStateException("injected failure before committing " + checkpointId);
      }
    }

    @Override
    public void afterCommit(long checkpointId, Snapshot snapshot) {
      int call = AFTER_CALLS.incrementAndGet();
      if (call == 1 || call == 2) {
        AFTER.incrementAndGet();
        throw new IllegalStateException("injected failure after committing " + checkpointId);
      }
    }
  }

  /**
   * Plays a compaction that runs between two commits: after the first and the third commit it
   * rewrites every live row of the table into one new data file and drops all data and delete
   * files, so that the positions the writers hold point into files that are gone.
   */
  static final class RewriteEverything implements CommitListener {
    private static final long serialVersionUID = 1L;
    static final AtomicInteger REWRITES = new AtomicInteger();
    private static final AtomicInteger COMMITS = new AtomicInteger();
    private static volatile String warehouse;

    static void reset(String warehouseDir) {
      REWRITES.set(0);
      COMMITS.set(0);
      warehouse = warehouseDir;
    }

    @Override
    public void afterCommit(long checkpointId, Snapshot snapshot) throws Exception {
      int commit = COMMITS.incrementAndGet();
      if (commit != 1 && commit != 3) {
        return;
      }
      Table table = CatalogDefinition.hadoop(warehouse).loader().loadCatalog().loadTable(TABLE);
      Set<DataFile> dataFiles = new HashSet<>();
      Set<DeleteFile> deleteFiles = new HashSet<>();
      try (CloseableIterable<FileScanTask> tasks = table.newScan().planFiles()) {
        for (FileScanTask task : tasks) {
          dataFiles.add(task.file());
          deleteFiles.addAll(task.deletes());
        }
      }
      OutputFileFactory files =
          OutputFileFactory.builderFor(table, 99, checkpointId).format(FileFormat.PARQUET).build();
      DataWriter<Record> writer =
          new GenericFileWriterFactory.Builder(table)
              .build()
              .newDataWriter(files.newOutputFile(), table.spec(), null);
      try (writer;
          CloseableIterable<Record> rows = IcebergGenerics.read(table).build()) {
        for (Record row : rows) {
          writer.write(row);
        }
      }
      table
          .newRewrite()
          .validateFromSnapshot(table.currentSnapshot().snapshotId())
          .dataSequenceNumber(table.currentSnapshot().sequenceNumber())
          .rewriteFiles(dataFiles, deleteFiles, Set.of(writer.toDataFile()), Set.of())
          .commit();
      REWRITES.incrementAndGet();
    }
  }

  /**
   * Plays another engine deleting rows by key while the job runs: just before the commit of each of
   * the third to the eighth checkpoint (when the writers have compacted files whose rows it
   * deletes, and the commit has yet to remove them), it deletes a tenth of the table's live rows, a
   * different tenth each time, with an equality delete file. Once per checkpoint: deleting again
   * before each retry of the commit that lost the race would keep it losing.
   */
  static final class ForeignDeletes implements CommitListener {
    private static final long serialVersionUID = 1L;
    static final List<Record> DELETED = Collections.synchronizedList(new ArrayList<>());
    private static final Set<Long> CHECKPOINTS = ConcurrentHashMap.newKeySet();
    private static volatile String warehouse;

    static void reset(String warehouseDir) {
      DELETED.clear();
      CHECKPOINTS.clear();
      warehouse = warehouseDir;
    }

    @Override
    public void beforeCommit(long checkpointId) throws Exception {
      if (!CHECKPOINTS.add(checkpointId)) {
        return;
      }
      int nth = CHECKPOINTS.size();
      // Before each commit from the third to the sixteenth, so that some of them meet a
      // compaction of the writers however the machine's speed spreads the changes over the
      // checkpoints: a tenth of the keys each time, the same tenth every ten commits.
      if (nth < 3 || nth > 16) {
        return;
      }
      Table table = CatalogDefinition.hadoop(warehouse).loader().loadCatalog().loadTable(TABLE);
      List<Record> rows = new ArrayList<>();
      try (CloseableIterable<Record> read = IcebergGenerics.read(table).build()) {
        for (Record row : read) {
          if ((Long) row.getField("id") % 10 == nth % 10) {
            rows.add(row.copy());
          }
        }
      }
      Schema keySchema = table.schema().select("id");
      OutputFileFactory files =
          OutputFileFactory.builderFor(table, 98, checkpointId).format(FileFormat.PARQUET).build();
      EqualityDeleteWriter<Record> writer =
          new GenericFileWriterFactory.Builder(table)
              .equalityFieldIds(new int[] {table.schema().findField("id").fieldId()})
              .equalityDeleteRowSchema(keySchema)
              .build()
              .newEqualityDeleteWriter(files.newOutputFile(), table.spec(), null);
      try (writer) {
        for (Record row : rows) {
          Record key = GenericRecord.create(keySchema);
          key.setField("id", row.getField("id"));
          writer.write(key);
        }
      }
      table
          .newRowDelta()
          .addDeletes(writer.toDeleteFile())
          .validateFromSnapshot(table.currentSnapshot().snapshotId())
          .commit();
      DELETED.addAll(rows);
    }
  }
}
