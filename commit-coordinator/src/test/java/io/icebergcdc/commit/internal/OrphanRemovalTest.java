package io.icebergcdc.commit.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.icebergcdc.commit.MaintenancePolicy;
import io.icebergcdc.commit.OrphanFiles;
import io.icebergcdc.commit.OwnedFileNames;
import io.icebergcdc.commit.TestTables;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.hadoop.HadoopCatalog;
import org.apache.iceberg.io.OutputFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class OrphanRemovalTest {

  private static final String JOB = "0123456789abcdef0123456789abcdef";
  private static final String RESTORED_JOB = "fedcba9876543210fedcba9876543210";
  private static final String OTHER_JOB = "00000000000000000000000000000001";
  private static final String SINK = OwnedFileNames.sinkTag("iceberg-cdc-committer");
  private static final String OTHER_SINK = OwnedFileNames.sinkTag("other-committer");
  private static final Duration DAY = Duration.ofDays(1);

  @TempDir Path warehouse;

  @Test
  void namesTellTheJobTheSinkAndTheCheckpoint() {
    String name = "/t/data/00001-3-" + OwnedFileNames.operationId(JOB, SINK, 42) + "-00007.parquet";
    assertThat(OwnedFileNames.ownerOf(name)).isEqualTo(new OwnedFileNames.Owner(JOB, SINK, 42));
    assertThat(
            OwnedFileNames.ownerOf(
                "/t/data/00001-3-" + java.util.UUID.randomUUID() + "-00007.parquet"))
        .isNull();
    assertThat(OrphanFiles.normalize("file:///tmp/a//b/")).isEqualTo("/tmp/a/b");
    assertThat(OrphanFiles.normalize("file:/tmp/a")).isEqualTo("/tmp/a");
    assertThat(OrphanFiles.normalize("s3://bucket/a/b")).isEqualTo("/a/b");
  }

  @Test
  void deletesOwnOrphansOfCommittedCheckpointsAndOtherFilesOnlyWhenOld() throws Exception {
    Table table = TestTables.create(warehouse);
    Path data = Path.of(table.location().replaceFirst("^file:", "")).resolve("data");
    Files.createDirectories(data);
    DataFile committed = file(data, owned(JOB, SINK, 3, 1));
    table.newAppend().appendFile(committed).commit();

    Path orphanOfCommitted = touch(data, owned(JOB, SINK, 3, 2));
    Path orphanOfRestoredJob = touch(data, owned(RESTORED_JOB, SINK, 2, 1));
    // The restored job may still run (its savepoint taken without stopping it): its files of
    // checkpoints after the restored one are its own writes in flight.
    Path ofRestoredJobStillRunning = touch(data, owned(RESTORED_JOB, SINK, 3, 1));
    Path inFlight = touch(data, owned(JOB, SINK, 5, 1));
    // However old: a checkpoint of this job that is not committed yet may still commit it.
    Files.setLastModifiedTime(
        inFlight,
        java.nio.file.attribute.FileTime.fromMillis(
            System.currentTimeMillis() - 2 * DAY.toMillis()));
    Path pending = touch(data, owned(JOB, SINK, 3, 3));
    Path otherSink = touch(data, owned(JOB, OTHER_SINK, 3, 1));
    Path otherJob = touch(data, owned(OTHER_JOB, SINK, 1, 1));
    Path foreignYoung = touch(data, "00000-0-" + java.util.UUID.randomUUID() + "-00001.parquet");
    Path foreignOld = touch(data, "00000-0-" + java.util.UUID.randomUUID() + "-00002.parquet");
    Files.setLastModifiedTime(
        foreignOld,
        java.nio.file.attribute.FileTime.fromMillis(
            System.currentTimeMillis() - 2 * DAY.toMillis()));
    Path notATableFile = touch(data, "notes.txt");

    OrphanRemoval.Result result =
        OrphanRemoval.run(
            table,
            new OrphanRemoval.HandedFiles(
                4,
                Map.of(JOB, Long.MAX_VALUE, RESTORED_JOB, 2L),
                SINK,
                () -> Set.of(OrphanFiles.normalize(pending.toString()))),
            DAY,
            System.currentTimeMillis());

    assertThat(result.unreferenced()).isEqualTo(9);
    assertThat(result.deleted()).isEqualTo(3);
    for (Path gone : List.of(orphanOfCommitted, orphanOfRestoredJob, foreignOld)) {
      assertThat(gone).as("orphan").doesNotExist();
    }
    for (Path kept :
        List.of(
            inFlight,
            pending,
            otherSink,
            otherJob,
            foreignYoung,
            notATableFile,
            ofRestoredJobStillRunning)) {
      assertThat(kept).as("not provably an orphan").exists();
    }
    assertThat(Path.of(committed.location())).exists();
    table.refresh();
    for (String metadata :
        org.apache.iceberg.ReachableFileUtil.metadataFileLocations(table, false)) {
      assertThat(Path.of(metadata.replaceFirst("^file:", ""))).exists();
    }
    assertThat(Path.of(table.currentSnapshot().manifestListLocation().replaceFirst("^file:", "")))
        .exists();
  }

  @Test
  void aWarehouseGivenWithDotSegmentsKeepsItsCommittedFiles() throws Exception {
    // As the command line gave a relative --warehouse: absolute, with its "./" kept, where Hadoop
    // names the table's files without it.
    Path dotted = warehouse.resolve("nested").resolve("..").resolve(".").resolve("wh");
    Files.createDirectories(warehouse.resolve("nested"));
    Files.createDirectories(dotted);
    HadoopCatalog catalog = new HadoopCatalog(new Configuration(), dotted.toString());
    Table table =
        catalog.createTable(
            TestTables.ID,
            TestTables.SCHEMA,
            PartitionSpec.unpartitioned(),
            Map.of(TableProperties.FORMAT_VERSION, "2"));
    assertThat(table.location()).contains("/../", "/./");
    OutputFile written =
        table.io().newOutputFile(table.locationProvider().newDataLocation(owned(JOB, SINK, 3, 1)));
    try (var out = written.create()) {
      out.write(new byte[] {1, 2, 3});
    }
    table
        .newAppend()
        .appendFile(
            DataFiles.builder(PartitionSpec.unpartitioned())
                .withPath(written.location())
                .withFileSizeInBytes(3)
                .withRecordCount(1)
                .withFormat(FileFormat.PARQUET)
                .build())
        .commit();
    Path orphan = touch(Path.of(written.location()).getParent(), owned(JOB, SINK, 3, 2));

    OrphanRemoval.Result result =
        OrphanRemoval.run(
            table,
            new OrphanRemoval.HandedFiles(4, Map.of(JOB, Long.MAX_VALUE), SINK, Set::of),
            Duration.ZERO,
            System.currentTimeMillis());

    assertThat(Path.of(written.location())).exists();
    assertThat(orphan).doesNotExist();
    assertThat(result.unreferenced()).isEqualTo(1);
    assertThat(OrphanFiles.unreferenced(catalog.loadTable(TestTables.ID))).isEmpty();
    assertThat(OrphanFiles.normalize("/tmp/./a/b/../c/.")).isEqualTo("/tmp/a/c");
    assertThat(OrphanFiles.normalize("file:/tmp/../../a")).isEqualTo("/a");
  }

  @Test
  void underADataLocationOtherTablesMayShareOnlyOwnFilesGo() throws Exception {
    Table table = TestTables.create(warehouse);
    Path shared = warehouse.resolve("shared-data");
    Files.createDirectories(shared);
    table
        .updateProperties()
        .set(TableProperties.WRITE_DATA_LOCATION, shared.toUri().toString())
        .commit();
    DataFile committed = file(shared, owned(JOB, SINK, 3, 1));
    table.newAppend().appendFile(committed).commit();

    Path ownOrphan = touch(shared, owned(JOB, SINK, 3, 2));
    // Another table's file there, however old, is not this table's to delete.
    Path otherTables = touch(shared, "00000-0-" + java.util.UUID.randomUUID() + "-00001.parquet");
    Files.setLastModifiedTime(
        otherTables,
        java.nio.file.attribute.FileTime.fromMillis(
            System.currentTimeMillis() - 30 * DAY.toMillis()));

    OrphanRemoval.Result result =
        OrphanRemoval.run(
            table,
            new OrphanRemoval.HandedFiles(4, Map.of(JOB, Long.MAX_VALUE), SINK, Set::of),
            DAY,
            System.currentTimeMillis());

    assertThat(result.unreferenced()).isEqualTo(2);
    assertThat(result.deleted()).isEqualTo(1);
    assertThat(ownOrphan).doesNotExist();
    assertThat(otherTables).exists();
    assertThat(Path.of(committed.location())).exists();
  }

  @Test
  void theMaintainerLeavesATableWithoutGarbageCollectionAlone() throws Exception {
    Table table = TestTables.create(warehouse);
    table.updateProperties().set(TableProperties.GC_ENABLED, "false").commit();
    Path data = Path.of(table.location().replaceFirst("^file:", "")).resolve("data");
    Files.createDirectories(data);
    Path orphan = touch(data, owned(JOB, SINK, 1, 1));
    TableMaintainer maintainer =
        new TableMaintainer(
            MaintenancePolicy.DEFAULT.withOrphanRemoval(true, Duration.ZERO, Duration.ZERO),
            System::currentTimeMillis);

    maintainer.afterCommit(
        table, new OrphanRemoval.HandedFiles(9, Map.of(JOB, Long.MAX_VALUE), SINK, Set::of));

    assertThat(orphan).exists();
    assertThat(maintainer.orphanFilesDeleted()).isZero();
    assertThat(maintainer.failures()).isZero();
  }

  private static String owned(String job, String sink, long checkpoint, int count) {
    return String.format(
        "00000-0-%s-%05d.parquet", OwnedFileNames.operationId(job, sink, checkpoint), count);
  }

  private static Path touch(Path dir, String name) throws Exception {
    return Files.write(dir.resolve(name), new byte[] {1, 2, 3});
  }

  private static DataFile file(Path dir, String name) throws Exception {
    Path path = touch(dir, name);
    return DataFiles.builder(PartitionSpec.unpartitioned())
        .withPath(path.toString())
        .withFileSizeInBytes(3)
        .withRecordCount(1)
        .withFormat(FileFormat.PARQUET)
        .build();
  }
}
