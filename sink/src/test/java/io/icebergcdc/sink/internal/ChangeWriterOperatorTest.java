package io.icebergcdc.sink.internal;

import static io.icebergcdc.cdc.TestChanges.delete;
import static io.icebergcdc.cdc.TestChanges.insert;
import static io.icebergcdc.cdc.TestChanges.update;
import static org.assertj.core.api.Assertions.assertThat;

import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.TestChanges;
import io.icebergcdc.cdc.typeutils.ChangeEventTypeInfo;
import io.icebergcdc.commit.ChangeCommittable;
import io.icebergcdc.commit.ContentFileCodec;
import io.icebergcdc.sink.CdcTables;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.flink.api.common.serialization.SerializerConfigImpl;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.OneInputStreamOperatorTestHarness;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileContent;
import org.apache.iceberg.RowDelta;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.flink.CatalogLoader;
import org.apache.iceberg.flink.TableLoader;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.metadata.BlockMetaData;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.apache.parquet.hadoop.util.HadoopInputFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ChangeWriterOperatorTest {

  private static final TableIdentifier ID = TableIdentifier.of("db", "items");

  @TempDir Path warehouse;

  private CatalogLoader catalog() {
    return CatalogLoader.hadoop(
        "test", new Configuration(), Map.of("warehouse", warehouse.toUri().toString()));
  }

  private Table createTable(String partitionBy, Map<String, String> properties) {
    Table table =
        CdcTables.createOrLoad(
            catalog().loadCatalog(), ID, TestChanges.SCHEMA, partitionBy, 2, List.of("id"));
    var update = table.updateProperties();
    properties.forEach(update::set);
    update.commit();
    return table;
  }

  private List<ChangeCommittable> write(List<ChangeEvent> events) throws Exception {
    try (var harness =
        new OneInputStreamOperatorTestHarness<ChangeEvent, ChangeCommittable>(
            new ChangeWriterOperator(
                TableLoader.fromCatalog(catalog(), ID), TestChanges.CHANGE_SCHEMA, Map.of()),
            ChangeEventTypeInfo.of(TestChanges.CHANGE_SCHEMA)
                .createSerializer(new SerializerConfigImpl()))) {
      harness.open();
      for (ChangeEvent event : events) {
        harness.processElement(new StreamRecord<>(event));
      }
      harness.prepareSnapshotPreBarrier(1);
      return harness.extractOutputValues();
    }
  }

  private static void commit(Table table, ChangeCommittable committable) {
    table.refresh();
    RowDelta delta = table.newRowDelta();
    committable
        .dataFiles()
        .forEach(f -> delta.addRows(ContentFileCodec.decodeDataFile(f, table.specs())));
    committable
        .deleteFiles()
        .forEach(f -> delta.addDeletes(ContentFileCodec.decodeDeleteFile(f, table.specs())));
    delta.commit();
  }

  private static Map<Long, String> rows(Table table) throws Exception {
    table.refresh();
    Map<Long, String> rows = new TreeMap<>();
    try (CloseableIterable<Record> records = IcebergGenerics.read(table).build()) {
      for (Record r : records) {
        rows.put((Long) r.getField("id"), (String) r.getField("name"));
      }
    }
    return rows;
  }

  @Test
  void upsertsAndDeletesBecomeDataAndEqualityDeleteFilesThatReadBackRight() throws Exception {
    Table table = createTable(null, Map.of());
    commit(table, write(List.of(insert(1, "a", 1), insert(2, "b", 2), insert(3, "c", 3))).get(0));

    List<ChangeCommittable> out =
        write(List.of(update(1, "a2", 4), delete(2, 5), insert(4, "d", 6)));

    assertThat(out).hasSize(1);
    ChangeCommittable committable = out.get(0);
    assertThat(committable.dataFiles()).hasSize(1);
    DeleteFile deletes =
        ContentFileCodec.decodeDeleteFile(committable.deleteFiles().get(0), table.specs());
    assertThat(deletes.content()).isEqualTo(FileContent.EQUALITY_DELETES);
    assertThat(deletes.equalityFieldIds()).containsExactly(1);
    commit(table, committable);
    Map<Long, String> expected = new HashMap<>();
    expected.put(1L, "a2");
    expected.put(3L, "c");
    expected.put(4L, "d");
    assertThat(rows(table)).isEqualTo(expected);
  }

  @Test
  void honoursTheTablesParquetWriteProperties() throws Exception {
    Table table =
        createTable(
            null,
            Map.of(
                TableProperties.PARQUET_COMPRESSION, "zstd",
                TableProperties.PARQUET_COMPRESSION_LEVEL, "9",
                TableProperties.PARQUET_ROW_GROUP_SIZE_BYTES, "4096",
                TableProperties.PARQUET_PAGE_SIZE_BYTES, "1024",
                TableProperties.PARQUET_DICT_SIZE_BYTES, "1024"));
    List<ChangeEvent> events = new java.util.ArrayList<>();
    for (int i = 0; i < 20_000; i++) {
      events.add(insert(i, "name-" + i * 7919L, i + 1));
    }

    DataFile file =
        ContentFileCodec.decodeDataFile(write(events).get(0).dataFiles().get(0), table.specs());

    try (ParquetFileReader reader =
        ParquetFileReader.open(
            HadoopInputFile.fromPath(
                new org.apache.hadoop.fs.Path(file.location()), new Configuration()))) {
      List<BlockMetaData> rowGroups = reader.getFooter().getBlocks();
      assertThat(rowGroups.size()).isGreaterThan(1);
      assertThat(rowGroups.get(0).getColumns())
          .allSatisfy(c -> assertThat(c.getCodec()).isEqualTo(CompressionCodecName.ZSTD));
    }
  }

  @Test
  void theTargetFileSizeRollsFilesAndThePartitionSpecSplitsThem() throws Exception {
    Table table =
        createTable("bucket(4, id)", Map.of(TableProperties.WRITE_TARGET_FILE_SIZE_BYTES, "20000"));
    List<ChangeEvent> events = new java.util.ArrayList<>();
    for (int i = 0; i < 40_000; i++) {
      events.add(insert(i, "row " + i, i + 1));
    }

    ChangeCommittable out = write(events).get(0);

    List<DataFile> files =
        out.dataFiles().stream()
            .map(f -> ContentFileCodec.decodeDataFile(f, table.specs()))
            .toList();
    assertThat(files.stream().map(f -> f.partition().get(0, Integer.class)).distinct()).hasSize(4);
    assertThat(files.size()).isGreaterThan(4);
    assertThat(files.stream().mapToLong(DataFile::recordCount).sum()).isEqualTo(40_000);
  }
}
