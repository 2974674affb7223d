package io.icebergcdc.commit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.exceptions.ValidationException;
import org.apache.iceberg.flink.TableLoader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TableRefreshTest {

  @TempDir Path warehouse;

  @Test
  void aHadoopTableFarBehindItsDeletedMetadataFilesIsLoadedAgain() throws Exception {
    Table writer = tableKeepingTwoMetadataFiles();
    try (TableLoader loader = TestTables.loader(warehouse)) {
      loader.open();
      Table behind = loader.loadTable();
      for (int i = 0; i < 5; i++) {
        writer.newAppend().appendFile(TestTables.dataFile("f" + i)).commit();
      }
      assertThatThrownBy(behind::refresh)
          .isInstanceOf(ValidationException.class)
          .hasMessageStartingWith("Metadata file for version");

      Table refreshed = TableRefresh.refresh(behind, loader);

      assertThat(refreshed.currentSnapshot().snapshotId())
          .isEqualTo(writer.currentSnapshot().snapshotId());
      assertThat(TableRefresh.refresh(refreshed, loader)).isSameAs(refreshed);
    }
  }

  @Test
  void aTableDroppedFromTheCatalogEndsTheJobNamingItAndTheWaysOut() throws Exception {
    TestTables.create(warehouse);
    try (TableLoader loader = TestTables.loader(warehouse)) {
      loader.open();
      Table kept = loader.loadTable();
      TestTables.catalog(warehouse).loadCatalog().dropTable(TestTables.ID, true);

      assertThatThrownBy(() -> TableRefresh.refresh(kept, loader))
          .isInstanceOf(ReplacedTableException.class)
          .hasMessageContaining("table test.db.t of the job is no longer in the catalog")
          .hasMessageContaining("--read-again naming the table's source table")
          .hasMessageContaining("without state");
    }
    assertThat(
            org.apache.flink.runtime.throwable.ThrowableClassifier.getThrowableType(
                ReplacedTableException.dropped("t", null)))
        .isEqualTo(org.apache.flink.runtime.throwable.ThrowableType.NonRecoverableError);
  }

  /**
   * A Hadoop table kept past its deleted metadata files, dropped and created again with fewer
   * versions: the refresh fails as for a table far behind, and the table loaded again is another.
   */
  @Test
  void aTableCreatedAgainBehindItsMissingMetadataFileIsRefusedNotTaken() throws Exception {
    Table writer = tableKeepingTwoMetadataFiles();
    try (TableLoader loader = TestTables.loader(warehouse)) {
      loader.open();
      for (int i = 0; i < 3; i++) {
        writer.newAppend().appendFile(TestTables.dataFile("f" + i)).commit();
      }
      Table kept = loader.loadTable();
      TestTables.catalog(warehouse).loadCatalog().dropTable(TestTables.ID, true);
      TestTables.create(warehouse);

      assertThatThrownBy(() -> TableRefresh.refresh(kept, loader))
          .isInstanceOf(ReplacedTableException.class)
          .hasMessageContaining(
              "test.db.t of the job was dropped and created again while the job ran (UUID "
                  + kept.uuid());
    }
  }

  /**
   * A table missing at one refresh and back within the seconds the drop is confirmed over (a REST
   * catalog's 404 from an ingress in a rollout) is taken as it is again, not as dropped.
   */
  @Test
  void aTableMissingOnlyForAMomentIsNotTakenForDropped() throws Exception {
    Table table = TestTables.create(warehouse);
    java.nio.file.Path location = Path.of(table.location().replaceFirst("^file:", ""));
    java.nio.file.Path aside = warehouse.resolve("aside");
    try (TableLoader loader = TestTables.loader(warehouse)) {
      loader.open();
      Table kept = loader.loadTable();
      table.newAppend().appendFile(TestTables.dataFile("f")).commit();
      java.nio.file.Files.move(location, aside);
      Thread back =
          new Thread(
              () -> {
                try {
                  Thread.sleep(300);
                  java.nio.file.Files.move(aside, location);
                } catch (Exception e) {
                  throw new RuntimeException(e);
                }
              });
      back.start();

      Table refreshed = TableRefresh.refresh(kept, loader);

      back.join();
      assertThat(refreshed.currentSnapshot().snapshotId())
          .isEqualTo(table.currentSnapshot().snapshotId());
    }
  }

  /** A table that deletes its metadata files past the two before the current one. */
  private Table tableKeepingTwoMetadataFiles() {
    Table table = TestTables.create(warehouse);
    table
        .updateProperties()
        .set(TableProperties.METADATA_DELETE_AFTER_COMMIT_ENABLED, "true")
        .set(TableProperties.METADATA_PREVIOUS_VERSIONS_MAX, "2")
        .commit();
    return table;
  }
}
