package io.icebergcdc.sink.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.BaseMetastoreTableOperations;
import org.apache.iceberg.BaseTable;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.StaticTableOperations;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.flink.CatalogLoader;
import org.apache.iceberg.flink.TableLoader;
import org.apache.iceberg.hadoop.HadoopCatalog;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A writer's copy of a table: the current snapshot and what writing needs, no history. */
class WriterTableTest {

  private static final TableIdentifier ID = TableIdentifier.of("db", "t");

  @TempDir Path warehouse;

  private final PartitionSpec spec =
      PartitionSpec.builderFor(schema()).bucket("id", 4).withSpecId(0).build();

  private static Schema schema() {
    return new Schema(
        List.of(
            Types.NestedField.required(1, "id", Types.LongType.get()),
            Types.NestedField.optional(2, "v", Types.StringType.get())),
        Set.of(1));
  }

  private HadoopCatalog catalog() {
    return new HadoopCatalog(new Configuration(), warehouse.toString());
  }

  private TableLoader loader() {
    TableLoader loader =
        TableLoader.fromCatalog(
            CatalogLoader.hadoop(
                "c", new Configuration(), Map.of("warehouse", warehouse.toString())),
            ID);
    loader.open();
    return loader;
  }

  private static void append(Table table, int file) {
    DataFile data =
        DataFiles.builder(table.spec())
            .withPath(table.location() + "/data/f" + file + ".parquet")
            .withFileSizeInBytes(100)
            .withRecordCount(1)
            .withPartitionPath("id_bucket=" + (file % 4))
            .withFormat(FileFormat.PARQUET)
            .build();
    table.newFastAppend().appendFile(data).set("checkpoint", Integer.toString(file)).commit();
  }

  @Test
  void theCopyHoldsTheCurrentSnapshotAndWhatWritingNeedsWithoutTheHistory() throws Exception {
    Table committed =
        catalog()
            .createTable(
                ID,
                schema(),
                spec,
                Map.of("format-version", "3", "write.object-storage.enabled", "true"));
    for (int i = 0; i < 20; i++) {
      append(committed, i);
    }
    try (TableLoader loader = loader()) {
      Table full = loader.loadTable();
      Table copy = WriterTable.load(loader);

      assertThat(full.snapshots()).hasSize(20);
      assertThat(copy.snapshots())
          .extracting(Snapshot::snapshotId)
          .containsExactly(full.currentSnapshot().snapshotId());
      assertThat(copy.currentSnapshot().summary()).containsEntry("checkpoint", "19");
      assertThat(copy.name()).isEqualTo(full.name());
      assertThat(copy.location()).isEqualTo(full.location());
      assertThat(copy.schema().sameSchema(full.schema())).isTrue();
      assertThat(copy.schema().identifierFieldIds()).containsExactly(1);
      assertThat(copy.spec()).isEqualTo(full.spec());
      assertThat(copy.properties()).isEqualTo(full.properties());
      assertThat(copy.io()).isSameAs(full.io());
      // The object-storage layout of the table's properties places the files.
      assertThat(copy.locationProvider().newDataLocation("x.parquet"))
          .isNotEqualTo(full.location() + "/data/x.parquet")
          .startsWith(full.location() + "/data/");
      try (CloseableIterable<FileScanTask> tasks = copy.newScan().planFiles()) {
        assertThat(tasks).hasSize(20);
      }
      assertThatThrownBy(() -> append(copy, 99))
          .isInstanceOf(UnsupportedOperationException.class)
          .hasMessageContaining("a writer's copy of table");
      assertThatThrownBy(copy::refresh).isInstanceOf(UnsupportedOperationException.class);

      // Refreshed, it is loaded again: later commits, and still no history.
      append(committed, 20);
      Table refreshed = WriterTable.refresh(copy, loader);
      assertThat(refreshed.currentSnapshot().summary()).containsEntry("checkpoint", "20");
      assertThat(refreshed.snapshots()).hasSize(1);
      try (CloseableIterable<FileScanTask> tasks = refreshed.newScan().planFiles()) {
        assertThat(tasks).hasSize(21);
      }
    }
  }

  @Test
  void aTableWhoseOperationsMayOwnItsFileIoIsKeptAsLoaded() {
    Table committed = catalog().createTable(ID, schema(), spec, Map.of("format-version", "3"));
    append(committed, 0);
    append(committed, 1);
    TableMetadata metadata = ((HasTableOperations) committed).operations().current();
    // As a REST catalog's table: operations of another kind, whose file IO may be the table's own.
    Table rest =
        new BaseTable(new StaticTableOperations(metadata, committed.io()), committed.name());
    // As a Glue catalog's: metastore operations holding a file IO of their own.
    Table glue = new BaseTable(new OwnIoMetastoreOperations(metadata), committed.name());

    assertThat(WriterTable.withoutHistory(rest)).isSameAs(rest);
    assertThat(WriterTable.withoutHistory(glue)).isSameAs(glue);
    assertThat(glue.snapshots()).hasSize(2);
  }

  @Test
  void theOperationsCopiedAreClassesOfIcebergsCatalogs() throws Exception {
    for (String name : WriterTable.CATALOG_IO_OPERATIONS) {
      // Loaded without linking: Hive's operations name classes of a metastore client not here.
      Class<?> operations = Class.forName(name, false, WriterTableTest.class.getClassLoader());
      assertThat(org.apache.iceberg.TableOperations.class.isAssignableFrom(operations))
          .as(name)
          .isTrue();
    }
  }

  /** Metastore operations of a kind the writer does not know, as Glue's. */
  private static final class OwnIoMetastoreOperations extends BaseMetastoreTableOperations {
    private final TableMetadata metadata;
    private final FileIO io = new org.apache.iceberg.hadoop.HadoopFileIO(new Configuration());

    OwnIoMetastoreOperations(TableMetadata metadata) {
      this.metadata = metadata;
    }

    @Override
    public TableMetadata current() {
      return metadata;
    }

    @Override
    public FileIO io() {
      return io;
    }

    @Override
    protected String tableName() {
      return "db.t";
    }
  }

  @Test
  void aTableDroppedAndCreatedAgainIsRefusedAsARefreshRefusesIt() throws Exception {
    HadoopCatalog catalog = catalog();
    append(catalog.createTable(ID, schema(), spec, Map.of("format-version", "3")), 0);
    try (TableLoader loader = loader()) {
      Table copy = WriterTable.load(loader);
      catalog.dropTable(ID, true);
      append(catalog.createTable(ID, schema(), spec, Map.of("format-version", "3")), 1);

      assertThatThrownBy(() -> WriterTable.refresh(copy, loader))
          .isInstanceOf(io.icebergcdc.commit.ReplacedTableException.class)
          .hasMessageContaining("db.t of the job was dropped and created again")
          .hasMessageContaining("--read-again naming the table's source table");

      catalog.dropTable(ID, true);
      assertThatThrownBy(() -> WriterTable.refresh(copy, loader))
          .isInstanceOf(io.icebergcdc.commit.ReplacedTableException.class)
          .hasMessageContaining("db.t of the job is no longer in the catalog");
    }
  }

  @Test
  void aTableWithoutSnapshotsIsKeptAsOneAndRefreshedToItsFirst() throws Exception {
    Table committed = catalog().createTable(ID, schema(), spec, Map.of("format-version", "3"));
    try (TableLoader loader = loader()) {
      Table copy = WriterTable.load(loader);
      assertThat(copy.currentSnapshot()).isNull();
      assertThat(copy.snapshots()).isEmpty();

      append(committed, 0);
      assertThat(WriterTable.refresh(copy, loader).currentSnapshot()).isNotNull();
    }
  }
}
