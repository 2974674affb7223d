package io.icebergcdc.commit;

import java.nio.file.Path;
import java.util.Map;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileMetadata;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.flink.CatalogLoader;
import org.apache.iceberg.flink.TableLoader;
import org.apache.iceberg.hadoop.HadoopCatalog;
import org.apache.iceberg.types.Types;

/** A real Hadoop-catalog table in a temporary folder, and file descriptions to commit to it. */
public final class TestTables {

  public static final TableIdentifier ID = TableIdentifier.of("db", "t");

  public static final org.apache.iceberg.Schema SCHEMA =
      new org.apache.iceberg.Schema(
          java.util.List.of(
              Types.NestedField.required(1, "id", Types.LongType.get()),
              Types.NestedField.optional(2, "name", Types.StringType.get())),
          java.util.Set.of(1));

  private TestTables() {}

  public static CatalogLoader catalog(Path warehouse) {
    return CatalogLoader.hadoop(
        "test",
        new org.apache.hadoop.conf.Configuration(),
        Map.of("warehouse", warehouse.toUri().toString()));
  }

  public static Table create(Path warehouse) {
    HadoopCatalog catalog = (HadoopCatalog) catalog(warehouse).loadCatalog();
    return catalog.createTable(
        ID, SCHEMA, PartitionSpec.unpartitioned(), Map.of(TableProperties.FORMAT_VERSION, "2"));
  }

  public static TableLoader loader(Path warehouse) {
    return TableLoader.fromCatalog(catalog(warehouse), ID);
  }

  public static DataFile dataFile(String name) {
    return DataFiles.builder(PartitionSpec.unpartitioned())
        .withPath("/data/" + name + ".parquet")
        .withFileSizeInBytes(100)
        .withRecordCount(10)
        .withFormat(org.apache.iceberg.FileFormat.PARQUET)
        .build();
  }

  public static DeleteFile equalityDeleteFile(String name) {
    return FileMetadata.deleteFileBuilder(PartitionSpec.unpartitioned())
        .ofEqualityDeletes(1)
        .withPath("/data/" + name + "-deletes.parquet")
        .withFileSizeInBytes(50)
        .withRecordCount(3)
        .withFormat(org.apache.iceberg.FileFormat.PARQUET)
        .build();
  }
}
