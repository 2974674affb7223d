package io.icebergcdc.bench;

import io.icebergcdc.commit.SnapshotSummaryKeys;
import io.icebergcdc.locallake.LocalRestCatalog;
import io.icebergcdc.sink.CatalogDefinition;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.AppendFiles;
import org.apache.iceberg.BaseTable;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.StaticTableOperations;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.hadoop.HadoopCatalog;
import org.apache.iceberg.types.Types;

/**
 * The heap a loaded table holds by the snapshots it keeps: a Hadoop table is given each count of
 * snapshots in turn (appends whose summaries carry the keys a capture job's commits carry), then
 * loaded 200 times, the copies held, and the heap after a full collection compared with before;
 * beside it, the same metadata without the snapshots no branch or tag points to (as a writer of
 * this project keeps each of its tables, through the same call of Iceberg's). A snapshot's heap is
 * the difference of the two over the snapshots the second lacks. The appends' summaries are smaller
 * than those of a capture job's row deltas (no delete files counted), so the figures are a lower
 * bound.
 *
 * <p>With {@code --rest}, the table lives in Iceberg's REST catalog server (a process of its own
 * over a local warehouse), and the copies are loaded through the job's two catalogs of it: the
 * committer's, which loads every snapshot, and the writers' ({@code snapshot-loading-mode=refs}),
 * which loads only those a branch or tag points to.
 *
 * <pre>bash bench/java.sh TableMetadataHeap [--rest] [counts of snapshots, default 10 100 360 1000]
 * </pre>
 */
public final class TableMetadataHeap {

  private static final int COPIES = 200;

  private TableMetadataHeap() {}

  public static void main(String[] args) throws Exception {
    boolean rest = args.length > 0 && args[0].equals("--rest");
    List<String> countArgs = List.of(args).subList(rest ? 1 : 0, args.length);
    int[] counts =
        countArgs.isEmpty()
            ? new int[] {10, 100, 360, 1000}
            : countArgs.stream().mapToInt(Integer::parseInt).toArray();
    Path warehouse = Files.createTempDirectory("table-metadata-heap");
    if (rest) {
      try (LocalRestCatalog server =
          LocalRestCatalog.start(warehouse.resolve("warehouse").toString(), Map.of())) {
        rest(server, counts);
      }
      return;
    }
    HadoopCatalog catalog = new HadoopCatalog(new Configuration(), warehouse.toString());
    TableIdentifier id = TableIdentifier.of("db", "t");
    Table table =
        catalog.createTable(
            id,
            new Schema(
                Types.NestedField.required(1, "id", Types.LongType.get()),
                Types.NestedField.optional(2, "v", Types.StringType.get())),
            PartitionSpec.unpartitioned(),
            Map.of(
                "format-version", "3",
                "write.metadata.delete-after-commit.enabled", "true",
                "write.metadata.previous-versions-max", "20"));
    System.out.println(
        "| snapshots | metadata file, KB | heap a loaded table, KB | a snapshot, KB"
            + " | without the historical snapshots, KB |");
    System.out.println("| ---: | ---: | ---: | ---: | ---: |");
    int committed = 0;
    for (int count : counts) {
      for (; committed < count; committed++) {
        commit(table, committed);
      }
      Table loaded = catalog.loadTable(id);
      String location = ((BaseTable) loaded).operations().current().metadataFileLocation();
      long fileBytes =
          Files.size(Path.of(new org.apache.hadoop.fs.Path(location).toUri().getPath()));
      double full =
          heapPerCopy(
              () -> {
                Table copy = catalog.loadTable(id);
                copy.currentSnapshot();
                return copy;
              });
      double current =
          heapPerCopy(
              () -> {
                BaseTable loadedTable = (BaseTable) catalog.loadTable(id);
                TableMetadata metadata = loadedTable.operations().current();
                return new BaseTable(
                    new StaticTableOperations(
                        TableMetadata.buildFrom(metadata)
                            .suppressHistoricalSnapshots()
                            .discardChanges()
                            .withMetadataLocation(metadata.metadataFileLocation())
                            .build(),
                        loadedTable.io()),
                    loadedTable.name());
              });
      System.out.printf(
          Locale.ROOT,
          "| %,d | %,.0f | %,.1f | %.2f | %,.1f |%n",
          count,
          fileBytes / 1024.0,
          full / 1024,
          (full - current) / 1024 / Math.max(1, count - 1),
          current / 1024);
    }
  }

  /** The copies through the job's two catalogs of a REST catalog server. */
  private static void rest(LocalRestCatalog server, int[] counts) throws Exception {
    CatalogDefinition definition =
        CatalogDefinition.builder().type("rest").uri(server.uri()).build();
    Catalog committers = definition.loader().loadCatalog();
    Catalog writers = definition.writersLoader().loadCatalog();
    TableIdentifier id = TableIdentifier.of("db", "t");
    ((SupportsNamespaces) committers).createNamespace(Namespace.of("db"));
    Table table =
        committers.createTable(
            id,
            new Schema(
                Types.NestedField.required(1, "id", Types.LongType.get()),
                Types.NestedField.optional(2, "v", Types.StringType.get())),
            PartitionSpec.unpartitioned(),
            Map.of("format-version", "3"));
    System.out.println(
        "| snapshots | heap a committer's copy, KB | a snapshot, KB | heap a writer's copy, KB |");
    System.out.println("| ---: | ---: | ---: | ---: |");
    int committed = 0;
    for (int count : counts) {
      for (; committed < count; committed++) {
        commit(table, committed);
      }
      double full =
          heapPerCopy(
              () -> {
                Table copy = committers.loadTable(id);
                copy.currentSnapshot();
                return copy;
              });
      double current =
          heapPerCopy(
              () -> {
                Table copy = writers.loadTable(id);
                copy.currentSnapshot();
                return copy;
              });
      System.out.printf(
          Locale.ROOT,
          "| %,d | %,.1f | %.2f | %,.1f |%n",
          count,
          full / 1024,
          (full - current) / 1024 / Math.max(1, count - 1),
          current / 1024);
    }
    CatalogDefinition.close(writers);
    CatalogDefinition.close(committers);
  }

  /** Appends one file with a capture job's summary keys. */
  private static void commit(Table table, int checkpoint) {
    DataFile file =
        DataFiles.builder(PartitionSpec.unpartitioned())
            .withPath(
                table.location()
                    + "/data/00000-"
                    + checkpoint
                    + "-"
                    + java.util.UUID.randomUUID()
                    + "-00001.parquet")
            .withFileSizeInBytes(4096)
            .withRecordCount(100)
            .withFormat(FileFormat.PARQUET)
            .build();
    AppendFiles append = table.newFastAppend().appendFile(file);
    append.set(SnapshotSummaryKeys.JOB_ID, "5f0c6f3bb1a0e1b7a5a2d6f3c9e4b8a1");
    append.set(SnapshotSummaryKeys.OPERATOR_ID, "9dd63673dd41ea021b896d5203f3ba7c");
    append.set(SnapshotSummaryKeys.CHECKPOINT_ID, Integer.toString(checkpoint + 1));
    append.set(SnapshotSummaryKeys.RUN_ID, "3b1c2f0e-8a4d-4c6b-9e7f-1a2b3c4d5e6f");
    append.set(SnapshotSummaryKeys.ROWS_INSERTED, Integer.toString(checkpoint * 3 % 1000));
    append.set(SnapshotSummaryKeys.ROWS_UPDATED, Integer.toString(checkpoint * 7 % 1000));
    append.set(SnapshotSummaryKeys.ROWS_DELETED, Integer.toString(checkpoint % 100));
    append.set(SnapshotSummaryKeys.STALE_DROPPED, "0");
    append.set(SnapshotSummaryKeys.DUPLICATES_DROPPED, "0");
    append.set(SnapshotSummaryKeys.SOURCE_POSITION, "lsn=" + (24_000_000L + 4_096L * checkpoint));
    append.commit();
  }

  /** The heap each of {@link #COPIES} objects from {@code load} holds, in bytes. */
  private static double heapPerCopy(java.util.function.Supplier<Object> load) throws Exception {
    List<Object> copies = new ArrayList<>(COPIES);
    long before = usedAfterGc();
    for (int i = 0; i < COPIES; i++) {
      copies.add(load.get());
    }
    long after = usedAfterGc();
    if (copies.size() != COPIES) {
      throw new IllegalStateException("copies lost");
    }
    return (after - before) / (double) COPIES;
  }

  private static long usedAfterGc() throws InterruptedException {
    Runtime runtime = Runtime.getRuntime();
    for (int i = 0; i < 3; i++) {
      System.gc();
      Thread.sleep(100);
    }
    return runtime.totalMemory() - runtime.freeMemory();
  }
}
