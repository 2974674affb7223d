package io.icebergcdc.sink.internal;

import static io.icebergcdc.cdc.TestChanges.delete;
import static io.icebergcdc.cdc.TestChanges.insert;
import static io.icebergcdc.cdc.TestChanges.update;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.ColumnMask;
import io.icebergcdc.cdc.TestChanges;
import io.icebergcdc.cdc.typeutils.ChangeEventTypeInfo;
import io.icebergcdc.cdc.typeutils.RowKeyTypeInfo;
import io.icebergcdc.commit.ChangeCommittable;
import io.icebergcdc.commit.ContentFileCodec;
import io.icebergcdc.dedup.AmbiguousChangePolicy;
import io.icebergcdc.dedup.Dedup;
import io.icebergcdc.sink.CdcTables;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.flink.api.common.serialization.SerializerConfigImpl;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.apache.flink.streaming.util.OneInputStreamOperatorTestHarness;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.StringData;
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
import org.apache.iceberg.types.Types;
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

  private ChangeEvent evolved(ChangeEvent change, int schemaId, String note) {
    org.apache.flink.table.data.RowData after = change.after();
    GenericRowData row =
        GenericRowData.of(
            after.getLong(0),
            after.getString(1),
            note == null ? null : StringData.fromString(note));
    return change.inSchema(schemaId, null, row, ColumnMask.EMPTY, ColumnMask.EMPTY);
  }

  /**
   * Equality mode: the dedup before the writer gives the net changes of a checkpoint the rows of
   * the newest schema its changes showed (a column added while the job runs), whichever schema each
   * change came in, and the writer, built with the job's schema, writes that schema's files.
   */
  @Test
  void theNetChangesOfACheckpointAreWrittenInTheNewestSchemaTheirChangesShow() throws Exception {
    Table table = createTable(null, Map.of());
    List<ChangeEvent> inserts = new java.util.ArrayList<>();
    for (int id = 1; id <= 60; id++) {
      inserts.add(insert(id, "row " + id, id));
    }
    commit(table, write(inserts).get(0));
    int evolved = table.schema().schemaId() + 1;

    // Keys 1 to 30 updated in the job's schema, key 31 in the newer one, then keys 32 to 60 in
    // the job's again (changes of the older schema after one of the newer), and key 61 inserted
    // in the newer schema and updated in the job's.
    List<ChangeEvent> changes = new java.util.ArrayList<>();
    Map<Long, List<Object>> expected = new TreeMap<>();
    for (int id = 1; id <= 60; id++) {
      String name = "updated " + id;
      String note = id == 31 ? "note 31" : null;
      ChangeEvent update = update(id, name, 100 + id);
      changes.add(id == 31 ? evolved(update, evolved, note) : update);
      expected.put((long) id, java.util.Arrays.asList(name, note));
    }
    changes.add(evolved(insert(61, "new", 200), evolved, "note 61"));
    changes.add(update(61, "new 2", 201));
    expected.put(61L, java.util.Arrays.asList("new 2", null));

    List<ChangeEvent> net;
    try (var dedup =
        new KeyedOneInputStreamOperatorTestHarness<>(
            Dedup.operator(
                TestChanges.CHANGE_SCHEMA,
                Duration.ofHours(1),
                AmbiguousChangePolicy.FAIL,
                1_000_000,
                null,
                new TableSchemaFollower(
                    TableLoader.fromCatalog(catalog(), ID), TestChanges.CHANGE_SCHEMA)),
            ChangeEvent::key,
            RowKeyTypeInfo.INSTANCE)) {
      dedup.open();
      for (ChangeEvent change : changes) {
        if (change.rowSchemaId() == evolved && table.schema().schemaId() != evolved) {
          // The source evolves the table before it sends the first change of the new schema.
          assertThat(addNote(table)).isEqualTo(evolved);
        }
        dedup.processElement(new StreamRecord<>(change));
      }
      dedup.prepareSnapshotPreBarrier(1);
      net = dedup.extractOutputValues();
    }
    assertThat(net).hasSize(61).allSatisfy(c -> assertThat(c.rowSchemaId()).isEqualTo(evolved));

    commit(table, write(net).get(0));

    assertThat(notedRows(table)).isEqualTo(expected);
  }

  /** Adds an optional string column {@code note} to the table; returns the new schema's id. */
  private static int addNote(Table table) {
    table.updateSchema().addColumn("note", Types.StringType.get()).commit();
    table.refresh();
    return table.schema().schemaId();
  }

  /** The name and note of each row, by id. */
  private static Map<Long, List<Object>> notedRows(Table table) throws Exception {
    table.refresh();
    Map<Long, List<Object>> rows = new TreeMap<>();
    try (CloseableIterable<Record> records = IcebergGenerics.read(table).build()) {
      for (Record r : records) {
        List<Object> was =
            rows.put(
                (Long) r.getField("id"),
                java.util.Arrays.asList(r.getField("name"), r.getField("note")));
        assertThat(was).as("another row of id %s", r.getField("id")).isNull();
      }
    }
    return rows;
  }

  /** A key updated in the job's schema and again in a later one, in two checkpoints. */
  @Test
  void aKeyWrittenInTheJobsSchemaIsUpdatedInALaterOne() throws Exception {
    Table table = createTable(null, Map.of());
    int evolved = addNote(table);

    try (var harness = writer()) {
      harness.open();
      harness.processElement(new StreamRecord<>(insert(1, "a", 1)));
      harness.processElement(new StreamRecord<>(insert(2, "b", 2)));
      harness.prepareSnapshotPreBarrier(1);
      harness.processElement(new StreamRecord<>(evolved(update(1, "a2", 3), evolved, "n")));
      harness.prepareSnapshotPreBarrier(2);
      // Rows of the job's schema again: each checkpoint is written in the schema of its rows.
      harness.processElement(new StreamRecord<>(update(2, "b2", 4)));
      // Numbered with the job's schema's id, a row is one of the job's schema: the same files.
      ChangeEvent numbered = insert(3, "c", 5);
      harness.processElement(
          new StreamRecord<>(
              numbered.inSchema(
                  TestChanges.SCHEMA.schemaId(),
                  null,
                  numbered.after(),
                  ColumnMask.EMPTY,
                  ColumnMask.EMPTY)));
      harness.prepareSnapshotPreBarrier(3);
      for (ChangeCommittable committable : harness.extractOutputValues()) {
        commit(table, committable);
      }
    }

    assertThat(notedRows(table))
        .containsOnly(
            Map.entry(1L, java.util.Arrays.asList("a2", "n")),
            Map.entry(2L, java.util.Arrays.asList("b2", null)),
            Map.entry(3L, java.util.Arrays.asList("c", null)));
  }

  @Test
  void rowsOfTwoSchemasBetweenTwoCheckpointsAreRefused() throws Exception {
    Table table = createTable(null, Map.of());
    int evolved = addNote(table);

    try (var harness = writer()) {
      harness.open();
      harness.processElement(new StreamRecord<>(insert(1, "a", 1)));
      assertThatThrownBy(
              () ->
                  harness.processElement(
                      new StreamRecord<>(evolved(insert(2, "b", 2), evolved, "n"))))
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("db.items")
          .hasMessageContaining("two schemas");
    }
  }

  private OneInputStreamOperatorTestHarness<ChangeEvent, ChangeCommittable> writer()
      throws Exception {
    return new OneInputStreamOperatorTestHarness<>(
        new ChangeWriterOperator(
            TableLoader.fromCatalog(catalog(), ID), TestChanges.CHANGE_SCHEMA, Map.of()),
        ChangeEventTypeInfo.of(TestChanges.CHANGE_SCHEMA)
            .createSerializer(new SerializerConfigImpl()));
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
        String was = rows.put((Long) r.getField("id"), (String) r.getField("name"));
        assertThat(was).as("another row of id %s", r.getField("id")).isNull();
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
