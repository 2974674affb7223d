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
    Table writer = TestTables.create(warehouse);
    writer
        .updateProperties()
        .set(TableProperties.METADATA_DELETE_AFTER_COMMIT_ENABLED, "true")
        .set(TableProperties.METADATA_PREVIOUS_VERSIONS_MAX, "2")
        .commit();
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
}
