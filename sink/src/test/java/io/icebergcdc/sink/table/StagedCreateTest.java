package io.icebergcdc.sink.table;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.icebergcdc.commit.SnapshotSummaryKeys;
import io.icebergcdc.sink.CatalogDefinition;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.apache.flink.table.connector.sink.abilities.SupportsStaging.StagingPurpose;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.flink.CatalogLoader;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The publication and clean-up of an atomic CREATE TABLE AS SELECT's staging table. */
class StagedCreateTest {

  private static final TableIdentifier TARGET = TableIdentifier.of("db", "orders");
  private static final TableIdentifier STAGING = TableIdentifier.of("db", "orders__ctas_0000abcd");
  private static final Schema SCHEMA =
      new Schema(
          java.util.List.of(
              Types.NestedField.required(1, "id", Types.LongType.get()),
              Types.NestedField.optional(2, "v", Types.StringType.get())),
          java.util.Set.of(1));

  @TempDir Path dir;
  private CatalogLoader loader;
  private Catalog catalog;
  private String stagedData;

  @BeforeEach
  void stagingTable() {
    loader = CatalogDefinition.hadoop(dir.resolve("warehouse").toString()).loader();
    catalog = loader.loadCatalog();
    stagedData = dir.resolve("warehouse/db/orders/data/ctas-0000abcd").toString();
    catalog
        .buildTable(STAGING, SCHEMA)
        .withProperties(
            Map.of(
                TableProperties.WRITE_DATA_LOCATION,
                stagedData,
                TableProperties.PARQUET_COMPRESSION,
                "zstd",
                TableProperties.FORMAT_VERSION,
                "3"))
        .create();
  }

  private StagedCreate staged(StagingPurpose purpose) {
    return new StagedCreate(
        loader,
        TARGET,
        STAGING.name(),
        purpose,
        dir.resolve("warehouse/db/orders").toString(),
        null,
        stagedData);
  }

  private DataFile committedFile(String name) throws Exception {
    Path file = Files.createDirectories(Path.of(stagedData)).resolve(name);
    Files.write(file, new byte[] {1, 2, 3});
    DataFile data =
        DataFiles.builder(PartitionSpec.unpartitioned())
            .withPath(file.toString())
            .withFileSizeInBytes(3)
            .withRecordCount(2)
            .withMetrics(
                new org.apache.iceberg.Metrics(
                    2L, Map.of(1, 10L), Map.of(1, 2L), Map.of(1, 0L), Map.of()))
            .withFormat("parquet")
            .build();
    catalog
        .loadTable(STAGING)
        .newAppend()
        .appendFile(data)
        .set(SnapshotSummaryKeys.ROWS_INSERTED, "2")
        .commit();
    return data;
  }

  @Test
  void thePublicationCreatesTheTableWithTheLoadOnceAndTheFinishDropsOnlyTheStagingMetadata()
      throws Exception {
    DataFile data = committedFile("a.parquet");
    StagedCreate staged = staged(StagingPurpose.CREATE_TABLE_AS);

    staged.publish();
    // A publication run again after a failure finds the table holding the load.
    staged.publish();

    Table table = catalog.loadTable(TARGET);
    // The publication drops the staging table's entry itself, keeping its files (the table's).
    assertThat(catalog.tableExists(STAGING)).isFalse();
    assertThat(table.location()).isEqualTo(dir.resolve("warehouse/db/orders").toString());
    assertThat(table.snapshots()).hasSize(1);
    assertThat(table.currentSnapshot().summary())
        .containsEntry(SnapshotSummaryKeys.ROWS_INSERTED, "2")
        .containsEntry(SnapshotSummaryKeys.CREATED_FROM, STAGING.name());
    assertThat(table.currentSnapshot().addedDataFiles(table.io()))
        .extracting(DataFile::location)
        .containsExactly(data.location());
    // With their column statistics, which readers and whole-file deletes prune by.
    try (org.apache.iceberg.io.CloseableIterable<org.apache.iceberg.FileScanTask> tasks =
        table.newScan().includeColumnStats().planFiles()) {
      assertThat(tasks)
          .singleElement()
          .satisfies(task -> assertThat(task.file().valueCounts()).containsEntry(1, 2L));
    }
    assertThat(table.properties())
        .containsEntry(TableProperties.PARQUET_COMPRESSION, "zstd")
        .doesNotContainKey(TableProperties.WRITE_DATA_LOCATION);
    assertThat(table.schema().identifierFieldNames()).containsExactly("id");

    // A job that failed after the publication (or finished) keeps the table's files.
    staged.abort();
    assertThat(Path.of(data.location())).exists();
    staged.commit();
    assertThat(catalog.tableExists(TARGET)).isTrue();
  }

  @Test
  void anAbortDropsTheStagingTableAndEveryFileOfTheLoadCommittedOrNot() throws Exception {
    DataFile committed = committedFile("a.parquet");
    Path uncommitted = Path.of(stagedData).resolve("b.parquet");
    Files.write(uncommitted, new byte[] {4});

    staged(StagingPurpose.CREATE_TABLE_AS).abort();

    assertThat(catalog.tableExists(STAGING)).isFalse();
    assertThat(catalog.tableExists(TARGET)).isFalse();
    assertThat(Path.of(committed.location())).doesNotExist();
    assertThat(uncommitted).doesNotExist();
  }

  @Test
  void aTableCreatedWhileTheLoadRanIsLeftAsItIs() throws Exception {
    committedFile("a.parquet");
    catalog.createTable(
        TARGET, new Schema(Types.NestedField.required(1, "other", Types.IntegerType.get())));

    assertThatThrownBy(() -> staged(StagingPurpose.CREATE_TABLE_AS).publish())
        .isInstanceOf(IllegalStateException.class)
        .hasMessage(
            "table db.orders was created while its CREATE TABLE AS SELECT ran: the load is"
                + " dropped, the table left as it is");
    staged(StagingPurpose.CREATE_TABLE_AS).abort();
    assertThat(catalog.loadTable(TARGET).snapshots()).isEmpty();
    assertThat(catalog.tableExists(STAGING)).isFalse();

    // Under IF NOT EXISTS the statement succeeds, without its load.
    stagingTable();
    committedFile("c.parquet");
    StagedCreate ifNotExists = staged(StagingPurpose.CREATE_TABLE_AS_IF_NOT_EXISTS);
    ifNotExists.publish();
    ifNotExists.commit();
    assertThat(catalog.loadTable(TARGET).snapshots()).isEmpty();
    assertThat(catalog.tableExists(STAGING)).isFalse();
    assertThat(Path.of(stagedData).resolve("c.parquet")).doesNotExist();
  }

  /** A staging table is told by its name and its data directory, not by its name alone. */
  @Test
  void aStagingTableIsToldByItsNameAndDataDirectory() {
    assertThat(StagedCreate.isStaging(catalog, STAGING)).isTrue();
    TableIdentifier lookalike = TableIdentifier.of("db", "x__ctas_0123abcd");
    catalog.createTable(lookalike, SCHEMA);
    assertThat(StagedCreate.isStaging(catalog, lookalike)).isFalse();
    assertThat(StagedCreate.isStaging(catalog, TableIdentifier.of("db", "none__ctas_0123abcd")))
        .isFalse();
  }
}
