package io.icebergcdc.commit.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.icebergcdc.commit.MaintenancePolicy;
import io.icebergcdc.commit.SnapshotSummaryKeys;
import io.icebergcdc.commit.TestTables;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TableMaintainerTest {

  private static final String OPERATOR = "committer-1";
  private static final MaintenancePolicy HOUR_AND_TEN =
      MaintenancePolicy.DEFAULT.withOrphanRemoval(false, Duration.ofDays(3), Duration.ofHours(1));

  static final OrphanRemoval.HandedFiles NOTHING_HANDED =
      new OrphanRemoval.HandedFiles(-1, java.util.Map.of(), null, java.util.Set::of);

  @TempDir Path warehouse;

  @Test
  void expiresWhatIsOlderThanTheAgeBeyondTheLastSnapshotsAndDeletesOnlyTheirFiles()
      throws Exception {
    Table table = TestTables.create(warehouse);
    List<DataFile> files = new ArrayList<>();
    for (int i = 0; i < 30; i++) {
      files.add(realFile("f" + i));
    }
    // Files 0-4 are deleted early: once the snapshots that still list them go, so do they; the
    // others are live and stay.
    for (int i = 0; i < 5; i++) {
      table
          .newAppend()
          .appendFile(files.get(i))
          .set(SnapshotSummaryKeys.OPERATOR_ID, OPERATOR)
          .commit();
    }
    var delete = table.newDelete();
    files.subList(0, 5).forEach(delete::deleteFile);
    delete.set(SnapshotSummaryKeys.OPERATOR_ID, OPERATOR).commit();
    for (int i = 5; i < 30; i++) {
      table
          .newAppend()
          .appendFile(files.get(i))
          .set(SnapshotSummaryKeys.OPERATOR_ID, OPERATOR)
          .commit();
    }
    AtomicLong now = new AtomicLong(System.currentTimeMillis() + Duration.ofHours(2).toMillis());
    TableMaintainer maintainer = new TableMaintainer(HOUR_AND_TEN, now::get);

    maintainer.afterCommit(table, NOTHING_HANDED);

    table.refresh();
    assertThat(table.snapshots()).hasSize(10);
    assertThat(maintainer.snapshotsExpired()).isEqualTo(21);
    for (int i = 0; i < 30; i++) {
      assertThat(Files.exists(Path.of(files.get(i).location())))
          .as("file %s, deleted from the table: %s", i, i < 5)
          .isEqualTo(i >= 5);
    }
    assertThat(maintainer.failures()).isZero();
  }

  /**
   * One puffin file holds the deletion vectors of several data files: replacing one of them must
   * not delete the file while the others are live (Iceberg's incremental cleanup would).
   */
  @Test
  void keepsAPuffinFileWhileADeletionVectorInItIsLive() throws Exception {
    Table table = TestTables.create(warehouse);
    table.updateProperties().set(TableProperties.FORMAT_VERSION, "3").commit();
    DataFile a = realFile("a");
    DataFile b = realFile("b");
    table.newAppend().appendFile(a).appendFile(b).commit();
    Path shared = warehouse.resolve("files").resolve("shared.puffin");
    Files.write(shared, new byte[200]);
    table.newRowDelta().addDeletes(dv(shared, a, 4)).addDeletes(dv(shared, b, 50)).commit();
    Path own = warehouse.resolve("files").resolve("own.puffin");
    Files.write(own, new byte[200]);
    org.apache.iceberg.DeleteFile committedDvOfA = null;
    try (var tasks = table.newScan().planFiles()) {
      for (var task : tasks) {
        if (task.file().location().equals(a.location())) {
          committedDvOfA = task.deletes().get(0);
        }
      }
    }
    table
        .newRowDelta()
        .validateFromSnapshot(table.currentSnapshot().snapshotId())
        .removeDeletes(committedDvOfA)
        .addDeletes(dv(own, a, 4))
        .commit();
    for (int i = 0; i < 12; i++) {
      table.newAppend().appendFile(realFile("later" + i)).commit();
    }
    AtomicLong now = new AtomicLong(System.currentTimeMillis() + Duration.ofHours(2).toMillis());

    new TableMaintainer(HOUR_AND_TEN, now::get).afterCommit(table, NOTHING_HANDED);

    table.refresh();
    assertThat(table.snapshots()).hasSize(10);
    assertThat(Files.exists(shared)).as("the puffin file that holds b's live vector").isTrue();
  }

  private static org.apache.iceberg.DeleteFile dv(Path puffin, DataFile of, long offset) {
    return org.apache.iceberg.FileMetadata.deleteFileBuilder(PartitionSpec.unpartitioned())
        .ofPositionDeletes()
        .withFormat(org.apache.iceberg.FileFormat.PUFFIN)
        .withPath(puffin.toString())
        .withFileSizeInBytes(200)
        .withReferencedDataFile(of.location())
        .withContentOffset(offset)
        .withContentSizeInBytes(40)
        .withRecordCount(1)
        .build();
  }

  @Test
  void keepsEachRecentJobsLatestSnapshotHoweverOldWhileOthersCommitAfterIt() throws Exception {
    Table table = TestTables.create(warehouse);
    for (int i = 0; i < 5; i++) {
      table
          .newAppend()
          .appendFile(realFile("ours" + i))
          .set(SnapshotSummaryKeys.OPERATOR_ID, OPERATOR)
          .set(SnapshotSummaryKeys.JOB_ID, "job-a")
          .set(SnapshotSummaryKeys.CHECKPOINT_ID, Integer.toString(i + 1))
          .commit();
    }
    table.refresh();
    long ours = table.currentSnapshot().snapshotId();
    for (int i = 0; i < 20; i++) {
      table
          .newAppend()
          .appendFile(realFile("theirs" + i))
          .set(SnapshotSummaryKeys.OPERATOR_ID, "other")
          .set(SnapshotSummaryKeys.JOB_ID, "job-b")
          .set(SnapshotSummaryKeys.CHECKPOINT_ID, Integer.toString(i + 1))
          .commit();
    }
    AtomicLong now = new AtomicLong(System.currentTimeMillis() + Duration.ofHours(2).toMillis());

    new TableMaintainer(HOUR_AND_TEN, now::get).afterCommit(table, NOTHING_HANDED);

    table.refresh();
    // Job-a's latest however old, and what came after it: a restore of job-a finds what it
    // committed.
    assertThat(table.snapshot(ours)).isNotNull();
    assertThat(table.snapshots()).hasSize(21);
    assertThat(CommitHistory.maxCommittedCheckpointId(table, "job-a", OPERATOR)).isEqualTo(5);
    assertThat(CommitHistory.isTruncated(table)).isTrue();
  }

  private void commitAs(Table table, String operator, String job, String name, int checkpoint)
      throws Exception {
    table
        .newAppend()
        .appendFile(realFile(name))
        .set(SnapshotSummaryKeys.OPERATOR_ID, operator)
        .set(SnapshotSummaryKeys.JOB_ID, job)
        .set(SnapshotSummaryKeys.CHECKPOINT_ID, Integer.toString(checkpoint))
        .commit();
  }

  @Test
  void aCommitterThatNoLongerCommitsHoldsTheHistoryBackNoLongerThanTheRestorePointsMaxAge()
      throws Exception {
    Table table = TestTables.create(warehouse);
    for (int i = 0; i < 5; i++) {
      // Another committer (a batch load's, say) that never comes back.
      commitAs(table, "old-committer", "job-a", "old" + i, i + 1);
    }
    for (int i = 0; i < 20; i++) {
      commitAs(table, OPERATOR, "job-b", "ours" + i, i + 1);
    }
    AtomicLong now = new AtomicLong(System.currentTimeMillis() + Duration.ofDays(6).toMillis());
    TableMaintainer maintainer = new TableMaintainer(HOUR_AND_TEN, now::get);

    maintainer.afterCommit(table, NOTHING_HANDED);
    table.refresh();
    assertThat(table.snapshots()).as("within the restore points' age").hasSize(21);

    now.addAndGet(Duration.ofDays(2).toMillis());
    maintainer.afterCommit(table, NOTHING_HANDED);
    table.refresh();
    assertThat(table.snapshots()).as("past it: the last ten").hasSize(10);
    assertThat(CommitHistory.maxCommittedCheckpointId(table, "job-b", OPERATOR)).isEqualTo(20);
  }

  @Test
  void aTableOfFormatVersion1KeepsEachJobsLatestSnapshotNotItsFirst() throws Exception {
    org.apache.iceberg.hadoop.HadoopCatalog catalog =
        (org.apache.iceberg.hadoop.HadoopCatalog) TestTables.catalog(warehouse).loadCatalog();
    Table table =
        catalog.createTable(
            org.apache.iceberg.catalog.TableIdentifier.of("db", "v1"),
            new org.apache.iceberg.Schema(
                org.apache.iceberg.types.Types.NestedField.required(
                    1, "id", org.apache.iceberg.types.Types.LongType.get())),
            PartitionSpec.unpartitioned(),
            java.util.Map.of(TableProperties.FORMAT_VERSION, "1"));
    for (int i = 0; i < 23; i++) {
      commitAs(table, OPERATOR, "job-a", "v1-" + i, i + 1);
    }
    table.refresh();
    long latest = table.currentSnapshot().snapshotId();
    AtomicLong now = new AtomicLong(System.currentTimeMillis() + Duration.ofHours(2).toMillis());

    new TableMaintainer(HOUR_AND_TEN, now::get).afterCommit(table, NOTHING_HANDED);

    table.refresh();
    assertThat(table.snapshots()).hasSize(10);
    assertThat(table.snapshot(latest)).isNotNull();
  }

  @Test
  void runsAtMostOncePerIntervalAndNotAtAllWhenOff() throws Exception {
    Table table = TestTables.create(warehouse);
    AtomicLong now = new AtomicLong(System.currentTimeMillis() + Duration.ofHours(2).toMillis());
    TableMaintainer maintainer = new TableMaintainer(HOUR_AND_TEN, now::get);
    TableMaintainer off = new TableMaintainer(MaintenancePolicy.NONE, now::get);
    for (int i = 0; i < 15; i++) {
      table.newAppend().appendFile(realFile("a" + i)).commit();
    }
    maintainer.afterCommit(table, NOTHING_HANDED);
    assertThat(maintainer.snapshotsExpired()).isEqualTo(5);
    for (int i = 0; i < 15; i++) {
      table.newAppend().appendFile(realFile("b" + i)).commit();
    }
    now.addAndGet(Duration.ofSeconds(59).toMillis());
    maintainer.afterCommit(table, NOTHING_HANDED);
    off.afterCommit(table, NOTHING_HANDED);
    table.refresh();
    assertThat(table.snapshots()).hasSize(25);

    now.addAndGet(Duration.ofSeconds(1).toMillis());
    maintainer.afterCommit(table, NOTHING_HANDED);
    table.refresh();
    assertThat(table.snapshots()).hasSize(10);
    assertThat(maintainer.snapshotsExpired()).isEqualTo(20);
    assertThat(off.snapshotsExpired()).isZero();
  }

  @Test
  void leavesATableWithGarbageCollectionOffAloneWhileItHasIt() throws Exception {
    Table table = TestTables.create(warehouse);
    table.updateProperties().set(TableProperties.GC_ENABLED, "false").commit();
    for (int i = 0; i < 15; i++) {
      table.newAppend().appendFile(realFile("a" + i)).commit();
    }
    AtomicLong now = new AtomicLong(System.currentTimeMillis() + Duration.ofHours(2).toMillis());
    TableMaintainer maintainer = new TableMaintainer(HOUR_AND_TEN, now::get);

    maintainer.afterCommit(table, NOTHING_HANDED);

    table.refresh();
    assertThat(table.snapshots()).hasSize(15);
    assertThat(maintainer.failures()).isZero();

    // Asked again at every run: expired once the table lets its files be deleted again.
    table.updateProperties().set(TableProperties.GC_ENABLED, "true").commit();
    table.refresh();
    now.addAndGet(Duration.ofMinutes(1).toMillis());
    maintainer.afterCommit(table, NOTHING_HANDED);
    table.refresh();
    assertThat(table.snapshots()).hasSize(10);
  }

  @Test
  void namesTheMetadataRetentionPropertiesATableLacks() {
    Table table = TestTables.create(warehouse);
    assertThat(MaintenancePolicy.missingMetadataRetention(table.properties()))
        .hasSize(2)
        .anySatisfy(m -> assertThat(m).startsWith("write.metadata.delete-after-commit.enabled"))
        .anySatisfy(m -> assertThat(m).startsWith("write.metadata.previous-versions-max"));
    table
        .updateProperties()
        .set(TableProperties.METADATA_DELETE_AFTER_COMMIT_ENABLED, "true")
        .set(TableProperties.METADATA_PREVIOUS_VERSIONS_MAX, "20")
        .commit();
    assertThat(MaintenancePolicy.missingMetadataRetention(table.properties())).isEmpty();
  }

  private DataFile realFile(String name) throws Exception {
    Path path = warehouse.resolve("files").resolve(name + ".parquet");
    Files.createDirectories(path.getParent());
    Files.write(path, new byte[100]);
    return DataFiles.builder(PartitionSpec.unpartitioned())
        .withPath(path.toString())
        .withFileSizeInBytes(100)
        .withRecordCount(10)
        .withFormat(org.apache.iceberg.FileFormat.PARQUET)
        .build();
  }
}
