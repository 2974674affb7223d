package io.icebergcdc.sink.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.icebergcdc.locallake.LocalRestCatalog;
import io.icebergcdc.sink.CatalogDefinition;
import io.icebergcdc.sink.SharedCatalog;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.flink.TableLoader;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The writers' tables of a REST catalog (Iceberg's REST catalog server): loaded with only the
 * snapshots a branch or tag points to, and kept so as they are loaded again with later commits,
 * while the committer's catalog loads every snapshot, even where the catalog's properties ask for
 * branches' and tags' only.
 */
class WriterTableRestITCase {

  private static final TableIdentifier TABLE = TableIdentifier.of("db", "events");
  private static final Schema SCHEMA =
      new Schema(Types.NestedField.required(1, "id", Types.LongType.get()));

  @TempDir static Path dir;
  private static LocalRestCatalog rest;

  @BeforeAll
  static void startCatalog() throws Exception {
    // Credentials vended with each table: the client gives each table it loads a file IO of its
    // own.
    rest =
        LocalRestCatalog.start(
            dir.resolve("warehouse").toString(),
            Map.of(
                "include-credentials", "true",
                "s3.access-key-id", "vended-key",
                "s3.secret-access-key", "vended-secret"));
  }

  @AfterAll
  static void stopCatalog() throws Exception {
    if (rest != null) {
      rest.close();
    }
  }

  private static CatalogDefinition catalog(Map<String, String> properties) {
    return CatalogDefinition.builder().type("rest").uri(rest.uri()).properties(properties).build();
  }

  /** The job's catalog of {@code definition}, as its composer builds it. */
  private static SharedCatalog shared(CatalogDefinition definition) {
    return new SharedCatalog(definition.loader(), definition.writersLoader());
  }

  /** The snapshots the table's metadata holds now, without loading the others. */
  private static int snapshotsHeld(Table table) throws Exception {
    TableMetadata metadata = ((HasTableOperations) table).operations().current();
    java.lang.reflect.Field snapshots = TableMetadata.class.getDeclaredField("snapshots");
    snapshots.setAccessible(true);
    return ((List<?>) snapshots.get(metadata)).size();
  }

  private static void appendFiles(Table table, int count) {
    for (int i = 0; i < count; i++) {
      table.newAppend().appendFile(dataFile(table)).commit();
    }
  }

  private static DataFile dataFile(Table table) {
    return DataFiles.builder(PartitionSpec.unpartitioned())
        .withPath(table.location() + "/data/file-" + System.nanoTime() + ".parquet")
        .withFormat(FileFormat.PARQUET)
        .withFileSizeInBytes(100)
        .withRecordCount(1)
        .build();
  }

  private static int filesPlanned(Table table) throws Exception {
    int files = 0;
    try (CloseableIterable<FileScanTask> tasks = table.newScan().planFiles()) {
      for (FileScanTask ignored : tasks) {
        files++;
      }
    }
    return files;
  }

  @Test
  void aWritersTableHoldsOnlyItsBranchesSnapshotsAndTheCommittersEveryOne() throws Exception {
    CatalogDefinition definition = catalog(Map.of("snapshot-loading-mode", "refs"));
    Catalog committers = definition.loader().loadCatalog();
    try {
      run(definition, committers);
    } finally {
      CatalogDefinition.close(committers);
    }
  }

  private void run(CatalogDefinition definition, Catalog committers) throws Exception {
    ((SupportsNamespaces) committers).createNamespace(Namespace.of("db"));
    Table committed = committers.createTable(TABLE, SCHEMA);
    appendFiles(committed, 20);

    SharedCatalog shared = shared(definition);
    try (TableLoader loader = shared.writerTableLoader(TABLE)) {
      loader.open();
      assertThat(loader.loadTable().io())
          .as("each load's own file IO")
          .isNotSameAs(loader.loadTable().io());
      Table writers = WriterTable.load(loader);
      org.apache.iceberg.io.FileIO io = writers.io();
      assertThat(snapshotsHeld(writers)).isEqualTo(1);
      assertThat(writers.currentSnapshot().snapshotId())
          .isEqualTo(committed.currentSnapshot().snapshotId());
      assertThat(filesPlanned(writers)).isEqualTo(20);
      assertThat(snapshotsHeld(writers)).as("after planning its files").isEqualTo(1);

      appendFiles(committed, 5);
      writers = WriterTable.refresh(writers, loader);
      assertThat(writers.currentSnapshot().snapshotId())
          .isEqualTo(committed.currentSnapshot().snapshotId());
      assertThat(filesPlanned(writers)).isEqualTo(25);
      assertThat(snapshotsHeld(writers)).as("refreshed").isEqualTo(1);
      assertThat(writers.io()).as("the first load's file IO, kept").isSameAs(io);
      org.assertj.core.api.Assertions.assertThatThrownBy(
              writers.newAppend().appendFile(dataFile(writers))::commit)
          .isInstanceOf(UnsupportedOperationException.class)
          .hasMessageContaining("a writer's copy");
    }

    // The committer's: every snapshot, loaded and refreshed, though the properties ask for refs.
    try (TableLoader loader = shared.tableLoader(TABLE)) {
      loader.open();
      Table table = loader.loadTable();
      assertThat(snapshotsHeld(table)).isEqualTo(25);
      appendFiles(committed, 1);
      table.refresh();
      assertThat(snapshotsHeld(table)).isEqualTo(26);
    }
    // With the mode set to all, the writers load every snapshot too.
    try (TableLoader loader =
        shared(catalog(Map.of("snapshot-loading-mode", "all"))).writerTableLoader(TABLE)) {
      loader.open();
      assertThat(snapshotsHeld(WriterTable.load(loader))).isEqualTo(26);
    }
  }
}
