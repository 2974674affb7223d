package io.icebergcdc.sink.internal;

import static io.icebergcdc.cdc.TestChanges.delete;
import static io.icebergcdc.cdc.TestChanges.insert;
import static io.icebergcdc.cdc.TestChanges.update;
import static io.icebergcdc.cdc.TestChanges.updateWithoutName;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.RowKey;
import io.icebergcdc.cdc.TestChanges;
import io.icebergcdc.cdc.typeutils.RowKeyTypeInfo;
import io.icebergcdc.commit.ChangeCommittable;
import io.icebergcdc.commit.ChangeCommittableSerializer;
import io.icebergcdc.commit.ContentFileCodec;
import io.icebergcdc.sink.CdcTables;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.apache.flink.core.io.SimpleVersionedSerializerTypeSerializerProxy;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.AppendFiles;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileContent;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.RowDelta;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.data.parquet.GenericParquetReaders;
import org.apache.iceberg.deletes.BaseDVFileWriter;
import org.apache.iceberg.flink.CatalogLoader;
import org.apache.iceberg.flink.TableLoader;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.OutputFileFactory;
import org.apache.iceberg.parquet.Parquet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class PositionDeltaWriterOperatorTest {

  private static final TableIdentifier ID = TableIdentifier.of("db", "items");
  private static final int MAX_PARALLELISM = 128;

  @TempDir Path warehouse;

  /** The catalog's {@code io-impl}, or null for its default. */
  private String fileIo;

  private CatalogLoader catalog() {
    Map<String, String> properties = new java.util.HashMap<>();
    properties.put("warehouse", warehouse.toUri().toString());
    if (fileIo != null) {
      properties.put("io-impl", fileIo);
    }
    return CatalogLoader.hadoop("test", new Configuration(), properties);
  }

  private Table table() {
    return CdcTables.createOrLoad(
        catalog().loadCatalog(), ID, TestChanges.SCHEMA, null, 3, List.of("id"));
  }

  private KeyedOneInputStreamOperatorTestHarness<RowKey, ChangeEvent, ChangeCommittable> harness(
      boolean bootstrap, OperatorSubtaskState restore) throws Exception {
    return harness(bootstrap, restore, 1, 0);
  }

  private double compactionRatio = 1.0;

  /** Bytes of recent rows the writer holds for compaction; negative for the option's default. */
  private long compactionCacheBytes = -1;

  /** Size below which files are merged; negative for the option's default. */
  private long smallFileSize = -1;

  /** The source position the table holds, for a writer that starts without state; or null. */
  private io.icebergcdc.cdc.SourceSequence tablePosition;

  private io.icebergcdc.cdc.SourceSequence tableTruncatedAt;

  /** The surveys' interval; null for every checkpoint. */
  private java.time.Duration surveyInterval;

  /** How the writer deletes rows; null for the default, by position. */
  private io.icebergcdc.sink.DeleteMode deleteMode;

  /** The writers' clock, in nanoseconds, when a test sets it. */
  private final java.util.concurrent.atomic.AtomicLong now =
      new java.util.concurrent.atomic.AtomicLong(1);

  private KeyedOneInputStreamOperatorTestHarness<RowKey, ChangeEvent, ChangeCommittable> harness(
      boolean bootstrap, OperatorSubtaskState restore, int parallelism, int subtask)
      throws Exception {
    return harness(bootstrap, restore, parallelism, subtask, null);
  }

  private static final String SINK_TAG = "0000beef";

  /**
   * @param job the job the writer runs in, whose files it names with {@link #SINK_TAG}; null for a
   *     job of the harness's own, with Iceberg's names
   */
  private KeyedOneInputStreamOperatorTestHarness<RowKey, ChangeEvent, ChangeCommittable> harness(
      boolean bootstrap,
      OperatorSubtaskState restore,
      int parallelism,
      int subtask,
      org.apache.flink.api.common.JobID job)
      throws Exception {
    PositionDeltaWriterOperator<RowKey> operator =
        new PositionDeltaWriterOperator<>(
            TableLoader.fromCatalog(catalog(), ID),
            TestChanges.CHANGE_SCHEMA,
            new RowKeySelector(),
            bootstrap,
            java.util.Map.of(),
            java.time.Duration.ofDays(1),
            io.icebergcdc.dedup.AmbiguousChangePolicy.FAIL,
            compactionRatio);
    if (compactionCacheBytes >= 0) {
      operator.setCompactionCacheBytes(compactionCacheBytes);
    }
    if (smallFileSize >= 0) {
      operator.setSmallFileSize(smallFileSize);
    }
    // Every checkpoint after a write looks through the table, unless a test sets an interval.
    operator.setSurveyInterval(surveyInterval == null ? java.time.Duration.ZERO : surveyInterval);
    operator.setClock(now::get);
    if (tablePosition != null) {
      operator.setTablePosition(tablePosition);
    }
    if (tableTruncatedAt != null) {
      operator.setTableTruncatedAt(tableTruncatedAt);
    }
    if (deleteMode != null) {
      operator.setDeleteMode(deleteMode);
    }
    KeyedOneInputStreamOperatorTestHarness<RowKey, ChangeEvent, ChangeCommittable> harness;
    if (job == null) {
      harness =
          new KeyedOneInputStreamOperatorTestHarness<>(
              operator,
              new RowKeySelector(),
              RowKeyTypeInfo.INSTANCE,
              MAX_PARALLELISM,
              parallelism,
              subtask);
    } else {
      operator.setSinkTag(SINK_TAG);
      harness =
          new KeyedOneInputStreamOperatorTestHarness<>(
              operator,
              new RowKeySelector(),
              RowKeyTypeInfo.INSTANCE,
              new org.apache.flink.runtime.operators.testutils.MockEnvironmentBuilder()
                  .setJobID(job)
                  .setParallelism(parallelism)
                  .setMaxParallelism(MAX_PARALLELISM)
                  .setSubtaskIndex(subtask)
                  .build());
    }
    harness.setup(
        new SimpleVersionedSerializerTypeSerializerProxy<>(ChangeCommittableSerializer::new));
    if (restore != null) {
      harness.initializeState(restore);
    }
    harness.open();
    return harness;
  }

  private static ChangeCommittable checkpoint(
      KeyedOneInputStreamOperatorTestHarness<RowKey, ChangeEvent, ChangeCommittable> harness,
      long id,
      ChangeEvent... events)
      throws Exception {
    harness.getOutput().clear();
    for (ChangeEvent event : events) {
      harness.processElement(new StreamRecord<>(event));
    }
    harness.prepareSnapshotPreBarrier(id);
    List<ChangeCommittable> out = harness.extractOutputValues();
    assertThat(out).hasSize(1);
    return out.get(0);
  }

  /**
   * Writes keys 1 to 10 in checkpoint 1 and commits them as the committer would, checkpoint 1
   * complete: the location of their file.
   */
  private static String commitTenKeys(
      KeyedOneInputStreamOperatorTestHarness<RowKey, ChangeEvent, ChangeCommittable> harness,
      Table table)
      throws Exception {
    ChangeCommittable written = checkpoint(harness, 1, inserts(1, 10, 0));
    append(table, written);
    harness.notifyOfCompletedCheckpoint(1);
    return ContentFileCodec.decodeDataFile(written.dataFiles().get(0), table.specs()).location();
  }

  /** Commits the data files of {@code committable} to {@code table}, as a committer would. */
  static void append(Table table, ChangeCommittable committable) {
    table.refresh();
    AppendFiles append = table.newAppend();
    committable
        .dataFiles()
        .forEach(f -> append.appendFile(ContentFileCodec.decodeDataFile(f, table.specs())));
    append.commit();
  }

  /**
   * The writer of one table closes its data files of several partitions at a checkpoint on threads
   * of its own, several at once (on object storage, each is uploaded as it closes), then hands them
   * on complete; a single file it closes on its task thread.
   */
  @Test
  void theFilesOfSeveralPartitionsAreClosedAtOnce() throws Exception {
    fileIo = ClosingThreadsFileIO.class.getName();
    ClosingThreadsFileIO.reset();
    Table table =
        CdcTables.createOrLoad(
            catalog().loadCatalog(), ID, TestChanges.SCHEMA, "bucket(2, id)", 3, List.of("id"));
    try (var harness = harness(false, null)) {
      // The closings of the two partitions' files wait for each other: they run at once.
      ClosingThreadsFileIO.meetOnClose(2);
      ChangeCommittable first = checkpoint(harness, 1, inserts(1, 8, 0));
      ClosingThreadsFileIO.meetOnClose(0);
      assertThat(first.dataFiles()).hasSize(2);
      for (String file : first.dataFiles()) {
        String location = ContentFileCodec.decodeDataFile(file, table.specs()).location();
        assertThat(ClosingThreadsFileIO.closedBy(location)).startsWith("iceberg-cdc-file-closing-");
      }
      append(table, first);
      harness.notifyOfCompletedCheckpoint(1);

      ChangeCommittable second = checkpoint(harness, 2, insert(9, "i", 9));
      String location =
          ContentFileCodec.decodeDataFile(second.dataFiles().get(0), table.specs()).location();
      assertThat(ClosingThreadsFileIO.closedBy(location))
          .isEqualTo(Thread.currentThread().getName());
      append(table, second);
    } finally {
      ClosingThreadsFileIO.reset();
    }
    assertThat(rowsOf(table)).hasSize(9);
  }

  /**
   * A partition's file that fails to close fails the checkpoint, naming the table: nothing is
   * handed on, and as the task ends the files of both partitions are removed.
   */
  @Test
  void aPartitionsFileThatFailsToCloseLeavesNoFile() throws Exception {
    fileIo = ClosingThreadsFileIO.class.getName();
    ClosingThreadsFileIO.reset();
    CdcTables.createOrLoad(
        catalog().loadCatalog(), ID, TestChanges.SCHEMA, "bucket(2, id)", 3, List.of("id"));
    ClosingThreadsFileIO.failClosing("/data/id_bucket=1/");
    try (var harness = harness(false, null)) {
      for (ChangeEvent insert : inserts(1, 8, 0)) {
        harness.processElement(new StreamRecord<>(insert));
      }
      assertThatThrownBy(() -> harness.prepareSnapshotPreBarrier(1))
          .hasMessageContaining("cannot close the files of table")
          .hasMessageContaining("injected failure closing");
      assertThat(harness.extractOutputValues()).isEmpty();
    } finally {
      ClosingThreadsFileIO.reset();
    }
    try (var files = java.nio.file.Files.walk(warehouse.resolve("db").resolve("items"))) {
      assertThat(
              files
                  .filter(java.nio.file.Files::isRegularFile)
                  .filter(file -> file.toString().contains("/data/"))
                  .filter(file -> !file.getFileName().toString().endsWith(".crc"))
                  .toList())
          .isEmpty();
    }
  }

  /**
   * In equality mode the operator of one table (the file job's and the SQL connector's) deletes by
   * key: an update or delete of a key with a row writes an equality delete on the key, a key new to
   * a table the writer started empty needs none, a key whose row was written for a checkpoint not
   * yet known complete is deleted by position (the committer may commit that checkpoint with the
   * next one, in one snapshot), and a writer that starts without state on a table with rows deletes
   * every key it meets by key, without loading the index; none counted as a fallback.
   */
  @Test
  void inEqualityModeUpdatesAndDeletesAreWrittenByKey() throws Exception {
    deleteMode = io.icebergcdc.sink.DeleteMode.EQUALITY;
    Table table = table();
    try (var harness = harness(true, null)) {
      ChangeCommittable first =
          checkpoint(harness, 1, insert(1, "a", 1), insert(2, "b", 2), insert(3, "c", 3));
      assertThat(first.deleteFiles()).as("new keys of a table started empty").isEmpty();
      append(table, first);
      harness.notifyOfCompletedCheckpoint(1);

      ChangeCommittable second =
          checkpoint(harness, 2, update(3, "c2", 4), delete(1, 5), insert(4, "d", 6));
      assertThat(second.positionDeletes().isEmpty()).isTrue();
      assertThat(second.equalityFallbacks()).isZero();
      assertThat(second.deleteFiles()).hasSize(1);
      org.apache.iceberg.DeleteFile byKey =
          ContentFileCodec.decodeDeleteFile(second.deleteFiles().get(0), table.specs());
      assertThat(byKey.content()).isEqualTo(org.apache.iceberg.FileContent.EQUALITY_DELETES);
      assertThat(byKey.recordCount()).as("keys 3 and 1").isEqualTo(2);
      String secondFile =
          ContentFileCodec.decodeDataFile(second.dataFiles().get(0), table.specs()).location();

      // Checkpoint 2 not known complete: key 4's row, written for it, is deleted by position.
      ChangeCommittable third = checkpoint(harness, 3, update(4, "d2", 7), update(2, "b2", 8));
      assertThat(third.positionDeletes().files()).containsExactly(secondFile);
      assertThat(third.positionDeletes().count()).isEqualTo(1);
      assertThat(third.deleteFiles()).as("key 2, of checkpoint 1").hasSize(1);
      assertThat(third.equalityFallbacks()).isZero();
    }
    try (var withoutState = harness(true, null)) {
      ChangeCommittable out = checkpoint(withoutState, 1, insert(9, "z", 20));
      assertThat(out.deleteFiles()).as("a key that may have a row").hasSize(1);
      assertThat(out.positionDeletes().isEmpty()).isTrue();
      assertThat(out.equalityFallbacks()).isZero();
    }
  }

  /**
   * Equality deletes reach the rows of every partition spec the table's data files have: on a table
   * partitioned since it got rows in its first, unpartitioned spec, they are written in that spec,
   * which Iceberg applies to every data file; on one partitioned by another spec of key columns
   * before, in the key's partition of each spec; one whose earlier spec partitions by a column
   * outside the key is refused in equality mode, with a line naming both specs, unless the table
   * has an unpartitioned spec, where the deletes then go.
   */
  @Test
  void equalityDeletesReachTheRowsOfAnEarlierSpec() throws Exception {
    deleteMode = io.icebergcdc.sink.DeleteMode.EQUALITY;
    Table table = table();
    try (var first = harness(true, null)) {
      append(table, checkpoint(first, 1, insert(1, "a", 1), insert(2, "b", 2)));
    }
    table
        .updateSpec()
        .addField(org.apache.iceberg.expressions.Expressions.bucket("id", 4))
        .commit();
    assertThat(updateByKey(table).keySet()).as("the unpartitioned spec").containsExactly(0);
    assertThat(rowsOf(table)).containsExactly("1=a2");

    Table bucketed =
        recreate(
            org.apache.iceberg.PartitionSpec.builderFor(TestChanges.SCHEMA)
                .bucket("id", 2)
                .build());
    try (var first = harness(true, null)) {
      append(bucketed, checkpoint(first, 1, insert(1, "a", 1), insert(2, "b", 2)));
    }
    bucketed
        .updateSpec()
        .removeField("id_bucket")
        .addField(org.apache.iceberg.expressions.Expressions.bucket("id", 4))
        .commit();
    assertThat(updateByKey(bucketed).keySet()).as("both specs").containsExactly(0, 1);
    assertThat(rowsOf(bucketed)).containsExactly("1=a2");

    Table byName =
        recreate(
            org.apache.iceberg.PartitionSpec.builderFor(TestChanges.SCHEMA)
                .identity("name")
                .build());
    appendRowOfName(byName, 1, "a");
    byName
        .updateSpec()
        .removeField("name")
        .addField(org.apache.iceberg.expressions.Expressions.bucket("id", 4))
        .commit();
    assertThatThrownBy(() -> harness(true, null))
        .hasMessageContaining("holds data files of partition spec [0] besides its current spec 1")
        .hasMessageContaining("rewrite_data_files");

    // With an unpartitioned spec among the table's (its first, without data left), the deletes go
    // there and reach the files partitioned by name too.
    Table wasUnpartitioned = recreate(org.apache.iceberg.PartitionSpec.unpartitioned());
    wasUnpartitioned.updateSpec().addField("name").commit();
    appendRowOfName(wasUnpartitioned, 1, "a");
    appendRowOfName(wasUnpartitioned, 2, "b");
    wasUnpartitioned
        .updateSpec()
        .removeField("name")
        .addField(org.apache.iceberg.expressions.Expressions.bucket("id", 4))
        .commit();
    assertThat(updateByKey(wasUnpartitioned).keySet())
        .as("the unpartitioned spec")
        .containsExactly(0);
    assertThat(rowsOf(wasUnpartitioned)).containsExactly("1=a2");
  }

  /**
   * Appends a data file of one row to {@code table}, partitioned by its name in the current spec.
   */
  private static void appendRowOfName(Table table, long id, String name) throws Exception {
    org.apache.iceberg.data.GenericRecord record =
        org.apache.iceberg.data.GenericRecord.create(TestChanges.SCHEMA);
    org.apache.iceberg.io.OutputFile out =
        table.io().newOutputFile(table.locationProvider().newDataLocation(name + id + ".parquet"));
    org.apache.iceberg.io.DataWriter<org.apache.iceberg.data.Record> writer =
        org.apache.iceberg.parquet.Parquet.writeData(out)
            .schema(TestChanges.SCHEMA)
            .createWriterFunc(org.apache.iceberg.data.parquet.GenericParquetWriter::create)
            .withSpec(table.spec())
            .withPartition(partitionOfName(table, name))
            .build();
    try (writer) {
      writer.write(record.copy(java.util.Map.of("id", id, "name", name)));
    }
    table.newAppend().appendFile(writer.toDataFile()).commit();
  }

  /** Drops the test table and creates it again, of the test schema, partitioned by {@code spec}. */
  private Table recreate(org.apache.iceberg.PartitionSpec spec) {
    catalog().loadCatalog().dropTable(ID);
    return catalog()
        .loadCatalog()
        .createTable(ID, TestChanges.SCHEMA, spec, java.util.Map.of("format-version", "3"));
  }

  private static org.apache.iceberg.PartitionKey partitionOfName(Table table, String name) {
    org.apache.iceberg.PartitionKey key =
        new org.apache.iceberg.PartitionKey(table.spec(), table.schema());
    org.apache.iceberg.data.GenericRecord record =
        org.apache.iceberg.data.GenericRecord.create(table.schema());
    key.partition(record.copy(java.util.Map.of("id", 0L, "name", name)));
    return key;
  }

  /**
   * Updates key 1 and deletes key 2 by a writer without state in equality mode, commits what it
   * wrote, and returns its equality delete files by spec id.
   */
  private java.util.Map<Integer, List<org.apache.iceberg.DeleteFile>> updateByKey(Table table)
      throws Exception {
    try (var writer = harness(true, null)) {
      ChangeCommittable out = checkpoint(writer, 1, update(1, "a2", 3), delete(2, 4));
      table.refresh();
      RowDelta delta = table.newRowDelta();
      java.util.Map<Integer, List<org.apache.iceberg.DeleteFile>> bySpec =
          new java.util.TreeMap<>();
      for (String encoded : out.deleteFiles()) {
        org.apache.iceberg.DeleteFile delete =
            ContentFileCodec.decodeDeleteFile(encoded, table.specs());
        assertThat(delete.content()).isEqualTo(org.apache.iceberg.FileContent.EQUALITY_DELETES);
        bySpec.computeIfAbsent(delete.specId(), id -> new java.util.ArrayList<>()).add(delete);
        delta.addDeletes(delete);
      }
      out.dataFiles()
          .forEach(f -> delta.addRows(ContentFileCodec.decodeDataFile(f, table.specs())));
      delta.commit();
      return bySpec;
    }
  }

  /** The table's rows as {@code id=name}. */
  private static List<String> rowsOf(Table table) throws Exception {
    table.refresh();
    List<String> rows = new java.util.ArrayList<>();
    try (org.apache.iceberg.io.CloseableIterable<Record> records =
        org.apache.iceberg.data.IcebergGenerics.read(table).build()) {
      records.forEach(r -> rows.add(r.getField("id") + "=" + r.getField("name")));
    }
    java.util.Collections.sort(rows);
    return rows;
  }

  @Test
  void updatesAndDeletesOfIndexedKeysBecomePositionsAndNewKeysNeedNoDelete() throws Exception {
    Table table = table();
    try (var harness = harness(true, null)) {
      ChangeCommittable first =
          checkpoint(harness, 1, insert(1, "a", 1), insert(2, "b", 2), insert(3, "c", 3));
      assertThat(first.dataFiles()).hasSize(1);
      assertThat(first.positionDeletes().isEmpty()).isTrue();
      assertThat(first.deleteFiles()).isEmpty();
      String file =
          ContentFileCodec.decodeDataFile(first.dataFiles().get(0), table.specs()).location();

      ChangeCommittable second =
          checkpoint(harness, 2, update(3, "c2", 4), delete(1, 5), insert(4, "d", 6));
      assertThat(second.positionDeletes().files()).containsExactly(file);
      assertThat(second.positionDeletes().positions(file)).containsExactly(0, 2);
      assertThat(second.deleteFiles()).isEmpty();
      assertThat(second.equalityFallbacks()).isZero();

      // The updated row now lives in the second checkpoint's file, at its first position.
      ChangeCommittable third = checkpoint(harness, 3, update(3, "c3", 7), delete(1, 8));
      String secondFile =
          ContentFileCodec.decodeDataFile(second.dataFiles().get(0), table.specs()).location();
      assertThat(third.positionDeletes().files()).containsExactly(secondFile);
      assertThat(third.positionDeletes().positions(secondFile)).containsExactly(0);
    }
  }

  @Test
  void theIndexSurvivesARestore() throws Exception {
    Table table = table();
    OperatorSubtaskState state;
    String file;
    try (var harness = harness(true, null)) {
      ChangeCommittable first = checkpoint(harness, 1, insert(1, "a", 1), insert(2, "b", 2));
      file = ContentFileCodec.decodeDataFile(first.dataFiles().get(0), table.specs()).location();
      state = harness.snapshot(1, 1);
    }
    try (var restored = harness(true, state)) {
      ChangeCommittable next = checkpoint(restored, 2, update(2, "b2", 3));
      assertThat(next.positionDeletes().positions(file)).containsExactly(1);
    }
  }

  /**
   * Two writers write and commit the keys 0 to 99 that each owns; returns their state rescaled for
   * one writer. {@code written} sees each writer's keys and committable.
   */
  private OperatorSubtaskState twoWritersRescaledToOne(
      Table table, java.util.function.BiConsumer<List<ChangeEvent>, ChangeCommittable> written)
      throws Exception {
    OperatorSubtaskState[] states = new OperatorSubtaskState[2];
    for (int subtask = 0; subtask < 2; subtask++) {
      try (var writer = harness(true, null, 2, subtask)) {
        List<ChangeEvent> owned = new java.util.ArrayList<>();
        for (ChangeEvent event : inserts(0, 99, 0)) {
          if (org.apache.flink.runtime.state.KeyGroupRangeAssignment.assignKeyToParallelOperator(
                  event.key(), MAX_PARALLELISM, 2)
              == subtask) {
            owned.add(event);
          }
        }
        ChangeCommittable out = checkpoint(writer, 1, owned.toArray(new ChangeEvent[0]));
        append(table, out);
        written.accept(owned, out);
        states[subtask] = writer.snapshot(1, 1);
      }
    }
    return org.apache.flink.streaming.util.AbstractStreamOperatorTestHarness
        .repartitionOperatorState(
            org.apache.flink.streaming.util.AbstractStreamOperatorTestHarness.repackageState(
                states),
            MAX_PARALLELISM,
            2,
            1,
            0);
  }

  @Test
  void theIndexIsRedistributedWhenTheWritersAreRescaled() throws Exception {
    Table table = table();
    java.util.Map<Long, String> fileOfKey = new java.util.HashMap<>();
    OperatorSubtaskState rescaled =
        twoWritersRescaledToOne(
            table,
            (owned, written) -> {
              String file =
                  ContentFileCodec.decodeDataFile(written.dataFiles().get(0), table.specs())
                      .location();
              owned.forEach(e -> fileOfKey.put(e.keyRow().getLong(0), file));
            });

    // One writer now owns all keys: every update finds its row by position.
    try (var single = harness(true, rescaled, 1, 0)) {
      ChangeCommittable out = checkpoint(single, 2, updates(0, 99, 1000));
      assertThat(out.equalityFallbacks()).isZero();
      assertThat(out.positionDeletes().count()).isEqualTo(100);
      assertThat(out.positionDeletes().files())
          .containsExactlyInAnyOrderElementsOf(new java.util.HashSet<>(fileOfKey.values()));
    }
  }

  @Test
  void withoutBootstrapKeysOfAFilledTableFallBackToEqualityDeletes() throws Exception {
    Table table = table();
    try (var first = harness(true, null)) {
      append(table, checkpoint(first, 1, insert(1, "a", 1), insert(2, "b", 2)));
    }
    try (var fresh = harness(false, null)) {
      ChangeCommittable out = checkpoint(fresh, 1, update(1, "a2", 3), delete(2, 4));
      assertThat(out.positionDeletes().isEmpty()).isTrue();
      assertThat(out.equalityFallbacks()).isEqualTo(2);
      assertThat(out.deleteFiles())
          .singleElement()
          .satisfies(
              json ->
                  assertThat(ContentFileCodec.decodeDeleteFile(json, table.specs()).content())
                      .isEqualTo(FileContent.EQUALITY_DELETES));
    }
  }

  @Test
  void withBootstrapAJobWithoutStateLoadsTheIndexFromTheTable() throws Exception {
    Table table = table();
    DataFile file;
    try (var first = harness(true, null)) {
      ChangeCommittable written =
          checkpoint(first, 1, insert(1, "a", 1), insert(2, "b", 2), insert(3, "c", 3));
      append(table, written);
      file = ContentFileCodec.decodeDataFile(written.dataFiles().get(0), table.specs());
    }
    try (var fresh = harness(true, null)) {
      ChangeCommittable out = checkpoint(fresh, 1, update(3, "c2", 5), insert(9, "new", 6));
      assertThat(out.positionDeletes().positions(file.location())).containsExactly(2);
      assertThat(out.equalityFallbacks()).isZero();
      assertThat(out.deleteFiles()).isEmpty();
    }
  }

  /**
   * A truncate, as one of its copies reaches a writer subtask: the rows of changes before it are
   * deleted, committed ones by position and one held since the last checkpoint not written; a
   * change before it that comes after it is dropped, and changes after it are applied, whether they
   * came before it or after. Another copy, and the truncate again after a restore of the checkpoint
   * that applied it, change nothing more.
   */
  @Test
  void aTruncateDeletesTheRowsOfTheChangesBeforeIt() throws Exception {
    Table table = table();
    OperatorSubtaskState state;
    ChangeEvent truncate =
        ChangeEvent.truncate(
                TestChanges.TABLE, io.icebergcdc.cdc.SourceSequence.postgresLsn(10), 0L)
            .withKey(new RowKey(new byte[] {9, 9, 9, 9}));
    try (var harness = harness(true, null)) {
      ChangeCommittable first =
          checkpoint(harness, 1, insert(1, "a", 1), insert(2, "b", 2), insert(3, "c", 3));
      append(table, first);
      harness.notifyOfCompletedCheckpoint(1);
      DataFile file = ContentFileCodec.decodeDataFile(first.dataFiles().get(0), table.specs());

      ChangeCommittable second =
          checkpoint(
              harness,
              2,
              update(2, "b2", 5),
              insert(5, "e", 6),
              insert(7, "after", 12),
              truncate,
              truncate,
              update(3, "late", 8),
              insert(4, "d", 11));

      assertThat(second.positionDeletes().positions(file.location()))
          .containsExactlyInAnyOrder(0L, 1L, 2L);
      assertThat(second.dataFiles()).hasSize(1);
      DataFile written = ContentFileCodec.decodeDataFile(second.dataFiles().get(0), table.specs());
      assertThat(rowsOf(table, written)).containsExactlyInAnyOrder("7:after", "4:d");
      assertThat(second.stats().deleted()).as("the three committed rows").isEqualTo(3);
      assertThat(second.stats().staleDropped()).as("the late update").isEqualTo(1);
      state = harness.snapshot(2, 2);
    }
    try (var restored = harness(true, state)) {
      ChangeCommittable again =
          checkpoint(restored, 3, truncate, update(1, "late", 9), update(4, "d2", 13));
      assertThat(again.positionDeletes().files()).hasSize(1);
      assertThat(again.stats().deleted()).isZero();
      assertThat(again.stats().staleDropped()).isEqualTo(1);
      assertThat(again.stats().updated()).isEqualTo(1);
    }
  }

  /**
   * A changelog read again from its start by a job without state, on the table it wrote: a truncate
   * at or before the position the table holds is over already and deletes nothing (the table's rows
   * came after it); one after it deletes the rows the writer read from the table.
   */
  @Test
  void aTruncateTheTableHoldsAlreadyDeletesNothing() throws Exception {
    Table table = table();
    try (var first = harness(true, null)) {
      append(table, checkpoint(first, 1, insert(1, "a", 31), insert(2, "b", 32)));
    }
    tablePosition = io.icebergcdc.cdc.SourceSequence.postgresLsn(40);
    try (var again = harness(true, null)) {
      ChangeCommittable replayed =
          checkpoint(again, 1, truncateAt(30), insert(1, "a", 31), insert(2, "b", 32));
      assertThat(replayed.stats().deleted()).isZero();
      assertThat(replayed.positionDeletes().isEmpty()).isTrue();
      ChangeCommittable later = checkpoint(again, 2, truncateAt(50));
      assertThat(later.stats().deleted()).isEqualTo(2);
    }
  }

  /**
   * A job without state on a table whose summaries record a truncate that an earlier job applied (a
   * Kafka job started again from the table's offsets, one partition behind the others): a change
   * from before the truncate is dropped as stale, even of a key the writer does not know; a change
   * after it and a snapshot read (of the database as it is now) are applied, after a restore of its
   * checkpoint too; the truncate delivered again deletes nothing; and the position goes on in the
   * statistics, for the next summary.
   */
  @Test
  void aJobWithoutStateDropsTheChangesBeforeTheTruncateItsTableRecords() throws Exception {
    Table table = table();
    tableTruncatedAt = io.icebergcdc.cdc.SourceSequence.postgresLsn(10);
    OperatorSubtaskState state;
    try (var again = harness(true, null)) {
      ChangeCommittable next =
          checkpoint(
              again,
              1,
              update(2, "late", 8),
              insert(3, "after", 12),
              snapshotRead(4, "read"),
              truncateAt(10));
      assertThat(next.stats().staleDropped()).as("the late update").isEqualTo(1);
      assertThat(next.stats().inserted()).isEqualTo(2);
      assertThat(next.stats().deleted()).isZero();
      assertThat(next.stats().truncatedAt()).isEqualTo(tableTruncatedAt);
      DataFile written = ContentFileCodec.decodeDataFile(next.dataFiles().get(0), table.specs());
      assertThat(rowsOf(table, written)).containsExactlyInAnyOrder("3:after", "4:read");
      state = again.snapshot(1, 1);
    }
    // Restored from its checkpoint (mid-snapshot, say), it still knows where the position came
    // from: snapshot reads are kept, older changes dropped.
    try (var restored = harness(true, state)) {
      ChangeCommittable next =
          checkpoint(restored, 2, update(6, "late", 9), snapshotRead(7, "read"));
      assertThat(next.stats().staleDropped()).isEqualTo(1);
      assertThat(next.stats().inserted()).isEqualTo(1);
      assertThat(next.stats().truncatedAt()).isEqualTo(tableTruncatedAt);
      ChangeCommittable later = checkpoint(restored, 3, truncateAt(20));
      assertThat(later.stats().truncatedAt())
          .isEqualTo(io.icebergcdc.cdc.SourceSequence.postgresLsn(20));
      assertThat(later.stats().deleted()).as("rows 3, 4 and 7").isEqualTo(3);
    }
  }

  /**
   * A truncate position taken up from the table, of another server's binlog (another name), is
   * replaced by this source's truncate, whose file number and position are lower.
   */
  @Test
  void aTruncateOfAnotherBinlogReplacesThePositionTakenUpFromTheTable() throws Exception {
    table();
    tableTruncatedAt = io.icebergcdc.cdc.SourceSequence.mysqlBinlog("a-bin.000005", 100, 0);
    io.icebergcdc.cdc.SourceSequence truncate =
        io.icebergcdc.cdc.SourceSequence.mysqlBinlog("b-bin.000001", 50, 0);
    try (var harness = harness(true, null)) {
      ChangeCommittable next =
          checkpoint(
              harness,
              1,
              insert(1, "before", 0)
                  .withSequence(
                      io.icebergcdc.cdc.SourceSequence.mysqlBinlog("b-bin.000001", 10, 0)),
              ChangeEvent.truncate(TestChanges.TABLE, truncate, 0L)
                  .withKey(new RowKey(new byte[] {1, 2, 3})),
              insert(2, "after", 0)
                  .withSequence(
                      io.icebergcdc.cdc.SourceSequence.mysqlBinlog("b-bin.000001", 60, 0)));
      assertThat(next.stats().truncatedAt()).isEqualTo(truncate);
      assertThat(next.stats().inserted()).as("only the row after the truncate").isEqualTo(1);
    }
  }

  /** A row of the chunked snapshot, before every position of the log. */
  private static ChangeEvent snapshotRead(long id, String name) {
    return insert(id, name, 0)
        .withSequence(
            io.icebergcdc.cdc.SourceSequence.beforeLog(
                io.icebergcdc.cdc.SourceSequence.Kind.POSTGRES_LSN))
        .withOperation(io.icebergcdc.cdc.Operation.SNAPSHOT_READ);
  }

  private static ChangeEvent truncateAt(long lsn) {
    return ChangeEvent.truncate(
            TestChanges.TABLE, io.icebergcdc.cdc.SourceSequence.postgresLsn(lsn), 0L)
        .withKey(new RowKey(new byte[] {1, 2, 3}));
  }

  /** Without the table's keys (no bootstrap of a table with rows), a truncate fails the writer. */
  @Test
  void aTruncateFailsWhereTheIndexDoesNotKnowEveryKey() throws Exception {
    Table table = table();
    try (var first = harness(true, null)) {
      append(table, checkpoint(first, 1, insert(1, "a", 1)));
    }
    try (var fresh = harness(false, null)) {
      org.assertj.core.api.Assertions.assertThatThrownBy(
              () ->
                  fresh.processElement(
                      new StreamRecord<>(
                          ChangeEvent.truncate(
                                  TestChanges.TABLE,
                                  io.icebergcdc.cdc.SourceSequence.postgresLsn(10),
                                  0L)
                              .withKey(new RowKey(new byte[] {9})))))
          .hasMessageContaining("was truncated in the source at")
          .hasMessageContaining("sink.bootstrap-index = false");
    }
  }

  private static ChangeEvent[] inserts(long from, long to, long sequence) {
    List<ChangeEvent> events = new java.util.ArrayList<>();
    for (long id = from; id <= to; id++) {
      events.add(insert(id, "v" + id, sequence + id));
    }
    return events.toArray(new ChangeEvent[0]);
  }

  private static ChangeEvent[] updates(long from, long to, long sequence) {
    List<ChangeEvent> events = new java.util.ArrayList<>();
    for (long id = from; id <= to; id++) {
      events.add(update(id, "w" + id, sequence + id));
    }
    return events.toArray(new ChangeEvent[0]);
  }

  @Test
  void aCommittedFileWithEnoughDeletedRowsIsCompactedAndItsKeysMoveWithTheirRows()
      throws Exception {
    compactionRatio = 0.3;
    Table table = table();
    OperatorSubtaskState state;
    String first;
    try (var harness = harness(true, null)) {
      ChangeCommittable written = checkpoint(harness, 1, inserts(1, 10, 0));
      append(table, written);
      first = ContentFileCodec.decodeDataFile(written.dataFiles().get(0), table.specs()).location();
      state = harness.snapshot(1, 1);
    }
    // Restored from checkpoint 1, whose commit is complete: the writer knows its file again.
    try (var harness = harness(true, state)) {
      ChangeCommittable second = checkpoint(harness, 2, updates(1, 4, 100));
      assertThat(second.compactedDataFiles()).containsExactly(first);
      // Rows 0-3 were updated, 4-9 moved: all of them are deleted should the file be gone.
      assertThat(second.positionDeletes().positions(first))
          .containsExactly(0, 1, 2, 3, 4, 5, 6, 7, 8, 9);
      DataFile secondFile =
          ContentFileCodec.decodeDataFile(second.dataFiles().get(0), table.specs());
      assertThat(secondFile.recordCount()).isEqualTo(10);

      // Key 7 was the third row moved, after the four updated ones.
      ChangeCommittable third = checkpoint(harness, 3, update(7, "x", 1000));
      assertThat(third.positionDeletes().files()).containsExactly(secondFile.location());
      assertThat(third.positionDeletes().positions(secondFile.location())).containsExactly(6);
      assertThat(third.compactedDataFiles()).isEmpty();
    }
  }

  @ParameterizedTest(name = "rows held in memory: {0}")
  @ValueSource(booleans = {true, false})
  void compactionCopiesTheSameRowsWhetherItHoldsThemOrReadsTheFile(boolean held) throws Exception {
    compactionRatio = 0.3;
    compactionCacheBytes = held ? 1 << 20 : 0;
    Table table = table();
    try (var harness = harness(true, null)) {
      String first = commitTenKeys(harness, table);
      List<ChangeEvent> changes = new java.util.ArrayList<>(List.of(updates(1, 4, 100)));
      changes.add(delete(9, 150));
      ChangeCommittable second = checkpoint(harness, 2, changes.toArray(new ChangeEvent[0]));
      assertThat(second.compactedDataFiles()).containsExactly(first);
      assertThat(
              ((PositionDeltaWriterOperator<?>) harness.getOperator())
                  .dataFilesCompactedFromMemory())
          .isEqualTo(held ? 1 : 0);
      DataFile written = ContentFileCodec.decodeDataFile(second.dataFiles().get(0), table.specs());
      // The four updated rows, then the five live rows of the first file in their order there.
      assertThat(rowsOf(table, written))
          .containsExactly(
              "1:w1", "2:w2", "3:w3", "4:w4", "5:v5", "6:v6", "7:v7", "8:v8", "10:v10");
    }
  }

  /**
   * An update without a value the source did not send (PostgreSQL's unchanged TOASTed value) takes
   * it from the key's current row, held in memory or read from its data file, and the key's entry
   * follows the row written.
   */
  @ParameterizedTest(name = "rows held in memory: {0}")
  @ValueSource(booleans = {true, false})
  void anUpdateLackingAValueTakesItFromTheKeysCurrentRow(boolean held) throws Exception {
    // Held rows are kept for compaction: a ratio no file reaches here keeps them without merging.
    compactionRatio = held ? 0.99 : 1.0;
    compactionCacheBytes = held ? 1 << 20 : 0;
    Table table = table();
    try (var harness = harness(true, null)) {
      String first = commitTenKeys(harness, table);
      ChangeCommittable second =
          checkpoint(
              harness,
              2,
              updateWithoutName(2, 100),
              updateWithoutName(5, 101),
              update(7, "x", 102),
              updateWithoutName(7, 103));
      assertThat(second.positionDeletes().positions(first)).containsExactlyInAnyOrder(1, 4, 6);
      DataFile secondFile =
          ContentFileCodec.decodeDataFile(second.dataFiles().get(0), table.specs());
      List<String> secondRows = rowsOf(table, secondFile);
      assertThat(secondRows).containsExactlyInAnyOrder("2:v2", "5:v5", "7:x");
      append(table, second);
      harness.notifyOfCompletedCheckpoint(2);

      // Key 2's entry points at its row in the second file: the next update deletes it there.
      ChangeCommittable third = checkpoint(harness, 3, updateWithoutName(2, 200));
      assertThat(third.positionDeletes().positions(secondFile.location()))
          .containsExactly((long) secondRows.indexOf("2:v2"));
      DataFile thirdFile = ContentFileCodec.decodeDataFile(third.dataFiles().get(0), table.specs());
      assertThat(rowsOf(table, thirdFile)).containsExactly("2:v2");
      append(table, third);
      harness.notifyOfCompletedCheckpoint(3);
      ChangeCommittable fourth = checkpoint(harness, 4, update(2, "changed", 300));
      assertThat(fourth.positionDeletes().positions(thirdFile.location())).containsExactly(0L);
    }
  }

  /**
   * During a chunked snapshot the log delivers updates of rows whose chunk is not read yet: an
   * update lacking a value waits in state, across a restore, until the key's read lends the value
   * or a complete change replaces it; an input that ends first fails naming the key.
   */
  @Test
  void anUpdateOfARowNotReadYetWaitsInStateForItsSnapshotRead() throws Exception {
    Table table = table();
    OperatorSubtaskState state;
    try (var harness = harness(true, null)) {
      ChangeCommittable first =
          checkpoint(
              harness,
              1,
              insert(1, "a", 1),
              updateWithoutName(5, 10),
              updateWithoutName(6, 11),
              updateWithoutName(7, 12));
      assertThat(first.dataFiles()).hasSize(1);
      assertThat(
              rowsOf(
                  table, ContentFileCodec.decodeDataFile(first.dataFiles().get(0), table.specs())))
          .containsExactly("1:a");
      state = harness.snapshot(1, 1);
    }
    try (var restored = harness(true, state)) {
      ChangeCommittable second =
          checkpoint(
              restored,
              2,
              chunkRead(5, "read"),
              update(6, "complete", 13),
              updateWithoutName(7, 14));
      assertThat(
              rowsOf(
                  table, ContentFileCodec.decodeDataFile(second.dataFiles().get(0), table.specs())))
          .containsExactlyInAnyOrder("5:read", "6:complete");
      assertThat(second.stats().inserted()).isEqualTo(2);
      restored.processElement(new StreamRecord<>(chunkRead(8, "only read")));
      assertThatThrownBy(restored::endInput)
          .hasMessageContaining("key id=7")
          .hasMessageContaining("the input ended before one came");
    }
  }

  /**
   * Changes waiting for their keys' snapshot reads, before a truncate, are dropped with it: their
   * rows are gone; the reads that come after it are of before it too, and dropped; one kept after
   * it still waits, and the input's end fails naming it.
   */
  @Test
  void aTruncateDropsTheChangesWaitingForTheirRowsBeforeIt() throws Exception {
    table();
    try (var harness = harness(true, null)) {
      checkpoint(harness, 1, updateWithoutName(5, 10), updateWithoutName(6, 11));
      ChangeCommittable second =
          checkpoint(
              harness,
              2,
              ChangeEvent.truncate(
                      TestChanges.TABLE, io.icebergcdc.cdc.SourceSequence.postgresLsn(20), 0L)
                  .withKey(new RowKey(new byte[] {3})),
              updateWithoutName(7, 21));
      assertThat(second.stats().staleDropped()).as("the two kept changes").isEqualTo(2);
      ChangeCommittable third = checkpoint(harness, 3, chunkRead(5, "read"), chunkRead(6, "read"));
      assertThat(third.stats().staleDropped()).isEqualTo(2);
      assertThat(third.dataFiles()).isEmpty();
      assertThatThrownBy(harness::endInput).hasMessageContaining("key id=7");
    }
  }

  private static ChangeEvent chunkRead(long id, String name) {
    return insert(id, name, 0)
        .withOperation(io.icebergcdc.cdc.Operation.SNAPSHOT_READ)
        .withSequence(
            io.icebergcdc.cdc.SourceSequence.beforeLog(
                io.icebergcdc.cdc.SourceSequence.Kind.POSTGRES_LSN));
  }

  private static List<String> rowsOf(Table table, DataFile file) throws Exception {
    List<String> rows = new java.util.ArrayList<>();
    try (CloseableIterable<Record> records =
        Parquet.read(table.io().newInputFile(file.location()))
            .project(table.schema())
            .createReaderFunc(s -> GenericParquetReaders.buildReader(table.schema(), s))
            .build()) {
      for (Record record : records) {
        rows.add(record.getField("id") + ":" + record.getField("name"));
      }
    }
    return rows;
  }

  @Test
  void aFileIsNotCompactedBeforeItsCommitIsCompleteNorBelowTheRatio() throws Exception {
    compactionRatio = 0.3;
    Table table = table();
    try (var harness = harness(true, null)) {
      append(table, checkpoint(harness, 1, inserts(1, 10, 0)));
      ChangeCommittable second = checkpoint(harness, 2, updates(1, 5, 100));
      append(table, second);
      assertThat(second.compactedDataFiles()).as("checkpoint 1 not complete").isEmpty();
      harness.notifyOfCompletedCheckpoint(1);
      harness.notifyOfCompletedCheckpoint(2);
      ChangeCommittable third = checkpoint(harness, 3, updates(6, 6, 200));
      // The first file has 6 of 10 rows deleted, the second 1 of 5: only the first qualifies.
      assertThat(third.compactedDataFiles()).hasSize(1);
    }
  }

  /**
   * A state taken after the end of the input (a savepoint that drained it) holds files of no
   * checkpoint: restored, they count as of the restored checkpoint, and the files written since are
   * not taken as committed by the restore's read of the table, which predates them.
   */
  @Test
  void filesOfTheEndOfTheInputRestoreAsOfTheRestoredCheckpoint() throws Exception {
    compactionRatio = 0.5;
    surveyInterval = java.time.Duration.ofMinutes(1);
    now.set(1_000_000_000L);
    Table table = table();
    var job = new org.apache.flink.api.common.JobID();
    OperatorSubtaskState state;
    try (var harness = harness(true, null, 1, 0, job)) {
      append(table, checkpoint(harness, 1, inserts(1, 10, 0)));
      harness.notifyOfCompletedCheckpoint(1);
      harness.getOutput().clear();
      harness.processElement(new StreamRecord<>(insert(20, "end", 1)));
      harness.endInput();
      for (ChangeCommittable last : harness.extractOutputValues()) {
        append(table, last);
      }
      state = harness.snapshot(2, 2);
    }
    try (var restored = harness(true, state, 1, 0, job)) {
      ChangeCommittable written = checkpoint(restored, 3, insert(30, "new", 1));
      String file =
          ContentFileCodec.decodeDataFile(written.dataFiles().get(0), table.specs()).location();
      append(table, written);
      for (long checkpoint = 3; checkpoint <= 6; checkpoint++) {
        if (checkpoint > 3) {
          restored.prepareSnapshotPreBarrier(checkpoint);
        }
        restored.notifyOfCompletedCheckpoint(checkpoint);
      }
      // Within the minute of the read made at checkpoint 3, before the file's commit.
      now.set(2_000_000_000L);
      ChangeCommittable later = checkpoint(restored, 7, update(30, "y", 100));
      assertThat(later.positionDeletes().files()).containsExactly(file);
    }
  }

  @Test
  void theEndOfTheInputCompactsAheadOfItsEndOfData() throws Exception {
    compactionRatio = 0.3;
    Table table = table();
    try (var harness = harness(true, null)) {
      append(table, checkpoint(harness, 1, inserts(1, 10, 0)));
      harness.notifyOfCompletedCheckpoint(1);
      harness.getOutput().clear();
      for (ChangeEvent update : updates(1, 5, 100)) {
        harness.processElement(new StreamRecord<>(update));
      }
      harness.endInput();

      // Handed over with the end of the input, which the job's last commit holds: half of the
      // first file's rows are deleted.
      List<ChangeCommittable> last = harness.extractOutputValues();
      assertThat(last).hasSize(1);
      assertThat(last.get(0).compactedDataFiles()).hasSize(1);
      harness.getOutput().clear();
      harness.prepareSnapshotPreBarrier(2);
      assertThat(harness.extractOutputValues()).isEmpty();
    }
  }

  @Test
  void noCheckpointAfterTheEndOfTheInputCompacts() throws Exception {
    compactionRatio = 0.3;
    Table table = table();
    try (var harness = harness(true, null)) {
      append(table, checkpoint(harness, 1, inserts(1, 10, 0)));
      harness.getOutput().clear();
      for (ChangeEvent update : updates(1, 5, 100)) {
        harness.processElement(new StreamRecord<>(update));
      }
      // Checkpoint 1 is not known complete yet: its file is not compacted at the end.
      harness.endInput();
      List<ChangeCommittable> last = harness.extractOutputValues();
      assertThat(last).hasSize(1);
      assertThat(last.get(0).compactedDataFiles()).isEmpty();
      append(table, last.get(0));
      harness.getOutput().clear();
      harness.prepareSnapshotPreBarrier(2);
      harness.notifyOfCompletedCheckpoint(1);
      harness.notifyOfCompletedCheckpoint(2);

      // The job ends with checkpoint 2; checkpoint 3, taken while it ends, is never committed.
      harness.prepareSnapshotPreBarrier(3);
      assertThat(harness.extractOutputValues()).isEmpty();
    }
  }

  @Test
  void afterRescalingAWriterMovesItsRowsOutOfTheOtherWritersFilesOnceTheTableDeletesEnough()
      throws Exception {
    compactionRatio = 0.5;
    Table table = table();
    java.util.Map<String, List<ChangeEvent>> keysOfFile = new java.util.HashMap<>();
    OperatorSubtaskState rescaled = twoWritersRescaledToOne(table, keysOfFile);
    String[] files = keysOfFile.keySet().toArray(new String[0]);
    try (var single = harness(true, rescaled, 1, 0)) {
      // Neither file is its own any more, and the table deletes none of their rows yet.
      long firstKey = keysOfFile.get(files[0]).get(0).keyRow().getLong(0);
      ChangeCommittable out = checkpoint(single, 2, update(firstKey, "x", 1000));
      assertThat(out.compactedDataFiles()).isEmpty();
      assertThat(out.positionDeletes().count()).isEqualTo(1);

      // Another engine deletes the first half of the first file's rows.
      long rows = keysOfFile.get(files[0]).size();
      long[] half = java.util.stream.LongStream.range(0, (rows + 1) / 2).toArray();
      deleteByAnotherEngine(table, files[0], half);
      ChangeCommittable moved = checkpoint(single, 3);
      // The rows of the second half move: deleted there by position, written again here.
      assertThat(moved.compactedDataFiles()).isEmpty();
      assertThat(moved.positionDeletes().files()).containsExactly(files[0]);
      assertThat(moved.positionDeletes().positions(files[0]))
          .containsExactly(java.util.stream.LongStream.range((rows + 1) / 2, rows).toArray());
      assertThat(
              ContentFileCodec.decodeDataFile(moved.dataFiles().get(0), table.specs())
                  .recordCount())
          .isEqualTo(rows / 2);
    }
  }

  /**
   * {@link #twoWritersRescaledToOne(Table, java.util.function.BiConsumer)}, filling {@code
   * keysOfFile} with the changes each of the two writers' files holds, by the file's location.
   */
  private OperatorSubtaskState twoWritersRescaledToOne(
      Table table, java.util.Map<String, List<ChangeEvent>> keysOfFile) throws Exception {
    return twoWritersRescaledToOne(
        table,
        (owned, written) ->
            keysOfFile.put(
                ContentFileCodec.decodeDataFile(written.dataFiles().get(0), table.specs())
                    .location(),
                owned));
  }

  /**
   * After a rescaling, a writer that writes nothing more to the table still moves its rows out of
   * the other writers' files where the table deleted enough of them: a restored table is looked
   * through at the first checkpoint, as after a write.
   */
  @Test
  void afterRescalingAnIdleWriterMovesItsRowsOutOfTheOtherWritersFiles() throws Exception {
    compactionRatio = 0.5;
    Table table = table();
    java.util.Map<String, List<ChangeEvent>> keysOfFile = new java.util.HashMap<>();
    OperatorSubtaskState rescaled = twoWritersRescaledToOne(table, keysOfFile);
    String file = keysOfFile.keySet().iterator().next();
    try (var single = harness(true, rescaled, 1, 0)) {
      long rows = keysOfFile.get(file).size();
      deleteByAnotherEngine(
          table, file, java.util.stream.LongStream.range(0, (rows + 1) / 2).toArray());
      ChangeCommittable moved = checkpoint(single, 2);
      assertThat(moved.positionDeletes().positions(file))
          .containsExactly(java.util.stream.LongStream.range((rows + 1) / 2, rows).toArray());
    }
  }

  /**
   * Each writer of a job that started without state on a table of another engine's files owns some
   * keys of every file: each moves its own rows out of a file once the table deletes enough of it,
   * so that the commit that deletes the last live row removes the file.
   */
  @Test
  void writersSharingAFileEachMoveTheirOwnRowsOutOfIt() throws Exception {
    compactionRatio = 0.5;
    Table table = table();
    String file;
    try (var other = harness(true, null)) {
      ChangeCommittable written = checkpoint(other, 1, inserts(0, 99, 0));
      append(table, written);
      file = ContentFileCodec.decodeDataFile(written.dataFiles().get(0), table.specs()).location();
    }
    deleteByAnotherEngine(table, file, java.util.stream.LongStream.range(0, 60).toArray());
    java.util.Set<Long> movedPositions = new java.util.TreeSet<>();
    long copied = 0;
    for (int subtask = 0; subtask < 2; subtask++) {
      try (var writer = harness(true, null, 2, subtask)) {
        ChangeCommittable out = checkpoint(writer, 1);
        assertThat(out.compactedDataFiles()).isEmpty();
        long[] positions = out.positionDeletes().positions(file);
        assertThat(positions).isNotEmpty();
        for (long position : positions) {
          assertThat(movedPositions.add(position)).as("moved twice: %s", position).isTrue();
        }
        copied +=
            ContentFileCodec.decodeDataFile(out.dataFiles().get(0), table.specs()).recordCount();
      }
    }
    // Together they moved the 40 live rows, each once.
    assertThat(movedPositions)
        .containsExactlyElementsOf(java.util.stream.LongStream.range(60, 100).boxed().toList());
    assertThat(copied).isEqualTo(40);
  }

  @Test
  void smallFilesOfSimilarSizeAreMergedOnceFourAreCommitted() throws Exception {
    Table table = table();
    try (var harness = harness(true, null)) {
      List<String> small = commitSmallFiles(harness, table, 4, null);
      ChangeCommittable merged = checkpoint(harness, 5, insert(1000, "new", 1));
      assertThat(merged.compactedDataFiles()).containsExactlyInAnyOrderElementsOf(small);
      DataFile written = ContentFileCodec.decodeDataFile(merged.dataFiles().get(0), table.specs());
      assertThat(written.recordCount()).isEqualTo(41);
      // The merged rows' keys moved with them: an update deletes the copy.
      ChangeCommittable next = checkpoint(harness, 6, update(25, "u", 100));
      assertThat(next.positionDeletes().files()).containsExactly(written.location());
    }
  }

  /**
   * Rescaled in place (restored at another parallelism under the same job id, as the adaptive
   * scheduler does), the files the writers named before are shared: the one writer left merges the
   * four small files of the two before it.
   */
  @Test
  void afterARescalingInPlaceTheFilesOfTheEarlierWritersAreShared() throws Exception {
    Table table = table();
    var job = new org.apache.flink.api.common.JobID();
    OperatorSubtaskState[] states = new OperatorSubtaskState[2];
    List<String> files = new java.util.ArrayList<>();
    for (int subtask = 0; subtask < 2; subtask++) {
      try (var writer = harness(true, null, 2, subtask, job)) {
        for (long checkpoint = 1; checkpoint <= 2; checkpoint++) {
          List<ChangeEvent> owned = new java.util.ArrayList<>();
          for (ChangeEvent event : inserts(checkpoint * 100, checkpoint * 100 + 39, 0)) {
            if (org.apache.flink.runtime.state.KeyGroupRangeAssignment.assignKeyToParallelOperator(
                    event.key(), MAX_PARALLELISM, 2)
                == subtask) {
              owned.add(event);
            }
          }
          ChangeCommittable out = checkpoint(writer, checkpoint, owned.toArray(new ChangeEvent[0]));
          assertThat(out.compactedDataFiles()).isEmpty();
          append(table, out);
          files.add(
              ContentFileCodec.decodeDataFile(out.dataFiles().get(0), table.specs()).location());
        }
        states[subtask] = writer.snapshot(2, 2);
      }
    }
    OperatorSubtaskState rescaled =
        org.apache.flink.streaming.util.AbstractStreamOperatorTestHarness.repartitionOperatorState(
            org.apache.flink.streaming.util.AbstractStreamOperatorTestHarness.repackageState(
                states),
            MAX_PARALLELISM,
            2,
            1,
            0);
    try (var single = harness(true, rescaled, 1, 0, job)) {
      ChangeCommittable out = checkpoint(single, 3, insert(1, "new", 1));
      assertThat(out.positionDeletes().files()).containsExactlyInAnyOrderElementsOf(files);
      assertThat(out.positionDeletes().count()).isEqualTo(80);
      assertThat(
              ContentFileCodec.decodeDataFile(out.dataFiles().get(0), table.specs()).recordCount())
          .isEqualTo(81);
    }
  }

  /**
   * Own small files are merged at a survey, once a minute, when they were written a minute before;
   * the refreshes for a file at the compaction ratio in between do not put the survey off.
   */
  @Test
  void smallFilesWaitForTheSurveyAndRefreshesForTheRatioDoNotPutItOff() throws Exception {
    compactionRatio = 0.5;
    surveyInterval = java.time.Duration.ofMinutes(1);
    Table table = table();
    try (var harness = harness(true, null)) {
      List<String> small =
          commitSmallFiles(harness, table, 5, checkpoint -> now.set(checkpoint * 1_000_000_000L));
      // Six of the first file's ten rows updated: at the ratio, it is compacted at once.
      now.set(50_000_000_000L);
      ChangeCommittable atRatio = checkpoint(harness, 6, updates(10, 15, 100));
      assertThat(atRatio.compactedDataFiles()).containsExactly(small.get(0));
      append(table, atRatio);
      harness.notifyOfCompletedCheckpoint(6);

      // A minute after the first survey: the four other files, written a minute before, merge.
      now.set(70_000_000_000L);
      ChangeCommittable surveyed = checkpoint(harness, 7, insert(1001, "b", 1));
      assertThat(surveyed.compactedDataFiles())
          .containsExactlyInAnyOrderElementsOf(small.subList(1, 5));
    }
  }

  /**
   * A table without a snapshot when the writer started (as a job creates its tables) is not read
   * for small and shared files at the first checkpoint after the writer's first write, where the
   * writer could move no row out of any file: the first survey comes an interval after that
   * checkpoint. A table with rows at the start is read at the first checkpoint after the first
   * write.
   */
  @Test
  void aTableStartedEmptyIsFirstSurveyedAnIntervalAfterItsFirstWrite() throws Exception {
    compactionRatio = 0.5;
    surveyInterval = java.time.Duration.ofMinutes(1);
    Table table = table();
    try (var harness = harness(true, null)) {
      // Idle for a while after the start, then written.
      now.set(50_000_000_000L);
      append(table, checkpoint(harness, 1, inserts(1, 10, 0)));
      harness.notifyOfCompletedCheckpoint(1);
      now.set(80_000_000_000L);
      append(table, checkpoint(harness, 2, inserts(11, 20, 0)));
      harness.notifyOfCompletedCheckpoint(2);
      assertThat(surveys(harness)).isZero();

      now.set(111_000_000_000L);
      checkpoint(harness, 3, insert(100, "b", 1));
      assertThat(surveys(harness)).isEqualTo(1);
    }
    now.set(200_000_000_000L);
    try (var harness = harness(false, null)) {
      now.set(201_000_000_000L);
      checkpoint(harness, 1, insert(200, "c", 1));
      assertThat(surveys(harness)).isEqualTo(1);
    }
  }

  /**
   * Nor is such a table read for an update of a row in one of the writer's committed files within
   * an interval from the writer's start: the table as it was at the start, without files, stands
   * for the read a survey would have made. Past that interval the update reads it.
   */
  @Test
  void aTableStartedEmptyIsNotReadForAnUpdateInItsFirstInterval() throws Exception {
    compactionRatio = 0.5;
    surveyInterval = java.time.Duration.ofMinutes(1);
    Table table = table();
    try (var harness = harness(true, null)) {
      now.set(1_000_000_000L);
      append(table, checkpoint(harness, 1, inserts(1, 10, 0)));
      for (long checkpoint = 1; checkpoint <= 4; checkpoint++) {
        if (checkpoint > 1) {
          harness.prepareSnapshotPreBarrier(checkpoint);
        }
        harness.notifyOfCompletedCheckpoint(checkpoint);
      }
      now.set(20_000_000_000L);
      ChangeCommittable updated = checkpoint(harness, 5, update(2, "y", 100));
      assertThat(updated.positionDeletes().files()).hasSize(1);
      PositionDeltaWriterOperator<?> writer =
          (PositionDeltaWriterOperator<?>) harness.getOperator();
      assertThat(writer.compactionRefreshes()).isZero();
      assertThat(writer.tableSurveys()).isZero();

      // Past the interval: the update reads the table, and the checkpoint runs the first survey.
      now.set(70_000_000_000L);
      checkpoint(harness, 6, update(3, "z", 100));
      assertThat(writer.tableSurveys()).isEqualTo(1);
      assertThat(writer.compactionRefreshes()).isEqualTo(2);
    }
  }

  private static long surveys(
      KeyedOneInputStreamOperatorTestHarness<RowKey, ChangeEvent, ChangeCommittable> harness) {
    return ((PositionDeltaWriterOperator<?>) harness.getOperator()).tableSurveys();
  }

  /**
   * A table the subtask no longer writes is left alone once a survey an interval after its last
   * write has run: a job of hundreds of tables reads only those it writes. Once written again, it
   * is surveyed again, and finds what another engine did to it meanwhile.
   */
  @Test
  void anIdleTableIsSurveyedAgainOnlyOnceWritten() throws Exception {
    compactionRatio = 0.5;
    smallFileSize = 0;
    surveyInterval = java.time.Duration.ofMinutes(1);
    Table table = table();
    try (var harness = harness(true, null)) {
      now.set(1_000_000_000L);
      String file = commitTenKeys(harness, table);
      // Idle since: the survey a minute after the start is the last.
      now.set(100_000_000_000L);
      harness.prepareSnapshotPreBarrier(2);
      harness.notifyOfCompletedCheckpoint(2);
      // Another engine deletes six of the file's ten rows, past the compaction ratio.
      deleteByAnotherEngine(table, file, 0, 1, 2, 3, 4, 5);
      now.set(200_000_000_000L);
      harness.getOutput().clear();
      harness.prepareSnapshotPreBarrier(3);
      assertThat(harness.extractOutputValues()).as("an idle table surveyed").isEmpty();
      harness.notifyOfCompletedCheckpoint(3);

      // Written again: surveyed at this checkpoint, its four live rows moved, the file removed.
      now.set(210_000_000_000L);
      ChangeCommittable written = checkpoint(harness, 4, insert(1000, "b", 1));
      assertThat(written.compactedDataFiles()).containsExactly(file);
    }
  }

  /**
   * A row of another writer's file that another engine rewrote while this subtask left the table
   * idle (its surveys skipped) is deleted by key: the table's files are read again before the
   * delete, the last read being older than a survey interval.
   */
  @Test
  void aRowOfAFileRewrittenWhileTheTableWasIdleIsDeletedByKey() throws Exception {
    compactionRatio = 0.5;
    surveyInterval = java.time.Duration.ofMinutes(1);
    Table table = table();
    org.apache.iceberg.DataFile theirs;
    try (var other = harness(true, null)) {
      ChangeCommittable written = checkpoint(other, 1, inserts(1, 10, 0));
      append(table, written);
      theirs = ContentFileCodec.decodeDataFile(written.dataFiles().get(0), table.specs());
    }
    try (var harness = harness(true, null)) {
      now.set(1_000_000_000L);
      ChangeCommittable first = checkpoint(harness, 1, update(1, "x", 100));
      assertThat(first.positionDeletes().files()).containsExactly(theirs.location());
      // The survey a minute after the start, the last while the table is idle.
      now.set(100_000_000_000L);
      harness.prepareSnapshotPreBarrier(2);
      rewriteByAnotherEngine(table, theirs);

      now.set(300_000_000_000L);
      ChangeCommittable later = checkpoint(harness, 3, update(2, "y", 100));
      assertThat(later.positionDeletes().files()).isEmpty();
      assertThat(later.deleteFiles()).isNotEmpty();
    }
  }

  /**
   * The same for a file the subtask wrote itself, once its commit is known: it is no longer tracked
   * as its own, as a survey would have found.
   */
  @Test
  void aRowOfAnOwnFileRewrittenWhileTheTableWasIdleIsDeletedByKey() throws Exception {
    compactionRatio = 0.5;
    surveyInterval = java.time.Duration.ofMinutes(1);
    Table table = table();
    try (var harness = harness(true, null)) {
      now.set(1_000_000_000L);
      ChangeCommittable written = checkpoint(harness, 1, inserts(1, 10, 0));
      append(table, written);
      org.apache.iceberg.DataFile own =
          ContentFileCodec.decodeDataFile(written.dataFiles().get(0), table.specs());
      harness.notifyOfCompletedCheckpoint(1);
      // Idle: the survey a minute after the start is the last; checkpoints 2 to 4 complete.
      now.set(100_000_000_000L);
      for (long checkpoint = 2; checkpoint <= 4; checkpoint++) {
        harness.prepareSnapshotPreBarrier(checkpoint);
        harness.notifyOfCompletedCheckpoint(checkpoint);
      }
      rewriteByAnotherEngine(table, own);

      now.set(300_000_000_000L);
      ChangeCommittable later = checkpoint(harness, 5, update(2, "y", 100));
      assertThat(later.positionDeletes().files()).isEmpty();
      assertThat(later.deleteFiles()).isNotEmpty();
    }
  }

  /**
   * Updates lacking a value, of rows of an own file that another engine rewrote and expiry deleted
   * while the table was idle: the values are taken from the rows held in memory, which stay after
   * the file is no longer tracked as own, and the old rows deleted by key.
   */
  @Test
  void anUpdateLackingAValueOfAnOwnFileRewrittenWhileIdleTakesItFromMemory() throws Exception {
    compactionRatio = 0.99;
    compactionCacheBytes = 1 << 20;
    surveyInterval = java.time.Duration.ofMinutes(1);
    Table table = table();
    try (var harness = harness(true, null)) {
      now.set(1_000_000_000L);
      String own = commitTenKeys(harness, table);
      now.set(100_000_000_000L);
      for (long checkpoint = 2; checkpoint <= 4; checkpoint++) {
        harness.prepareSnapshotPreBarrier(checkpoint);
        harness.notifyOfCompletedCheckpoint(checkpoint);
      }
      table.refresh();
      DataFile ownFile = table.currentSnapshot().addedDataFiles(table.io()).iterator().next();
      assertThat(ownFile.location()).isEqualTo(own);
      rewriteByAnotherEngine(table, ownFile);
      table.io().deleteFile(own);

      now.set(300_000_000_000L);
      ChangeCommittable later =
          checkpoint(harness, 5, updateWithoutName(2, 100), updateWithoutName(5, 101));
      assertThat(later.positionDeletes().files()).isEmpty();
      assertThat(later.deleteFiles()).isNotEmpty();
      assertThat(
              rowsOf(
                  table, ContentFileCodec.decodeDataFile(later.dataFiles().get(0), table.specs())))
          .containsExactlyInAnyOrder("2:v2", "5:v5");
    }
  }

  /**
   * The same where a survey, not a change, finds that the own file left the table: its rows held in
   * memory stay for the update lacking a value that comes later.
   */
  @Test
  void anUpdateLackingAValueOfAnOwnFileASurveyFoundRewrittenTakesItFromMemory() throws Exception {
    compactionRatio = 0.99;
    compactionCacheBytes = 1 << 20;
    smallFileSize = 0;
    Table table = table();
    try (var harness = harness(true, null)) {
      String own = commitTenKeys(harness, table);
      DataFile ownFile = table.currentSnapshot().addedDataFiles(table.io()).iterator().next();
      assertThat(ownFile.location()).isEqualTo(own);
      for (long checkpoint = 2; checkpoint <= 4; checkpoint++) {
        append(table, checkpoint(harness, checkpoint, insert(100 + checkpoint, "n", 1)));
        harness.notifyOfCompletedCheckpoint(checkpoint);
      }
      rewriteByAnotherEngine(table, ownFile);
      table.io().deleteFile(own);
      // The survey of this checkpoint finds the file gone.
      append(table, checkpoint(harness, 5, insert(200, "n", 1)));
      harness.notifyOfCompletedCheckpoint(5);

      ChangeCommittable later = checkpoint(harness, 6, updateWithoutName(2, 100));
      assertThat(later.positionDeletes().files()).isEmpty();
      assertThat(
              rowsOf(
                  table, ContentFileCodec.decodeDataFile(later.dataFiles().get(0), table.specs())))
          .containsExactly("2:v2");
    }
  }

  /**
   * An own file whose checkpoint was aborted goes with a later one: a read of the table made as
   * that later checkpoint is known complete, before the committer has committed it, does not make
   * the file one that left the table.
   */
  @Test
  void anOwnFileOfAnAbortedCheckpointIsNotTakenAsLeftBeforeItsCommit() throws Exception {
    compactionRatio = 0.5;
    Table table = table();
    try (var harness = harness(true, null)) {
      now.set(1_000_000_000L);
      ChangeCommittable written = checkpoint(harness, 1, inserts(1, 10, 0));
      String own =
          ContentFileCodec.decodeDataFile(written.dataFiles().get(0), table.specs()).location();
      // Checkpoints 1 to 3 aborted; 4 completes, carrying the file, not committed yet.
      for (long checkpoint = 2; checkpoint <= 4; checkpoint++) {
        harness.prepareSnapshotPreBarrier(checkpoint);
      }
      harness.notifyOfCompletedCheckpoint(4);
      now.set(2_000_000_000L);
      ChangeCommittable later = checkpoint(harness, 5, update(2, "y", 100));
      assertThat(later.positionDeletes().files()).containsExactly(own);
    }
  }

  /** Another engine's rewrite of {@code file}: the file replaced by a copy of its rows. */
  private static void rewriteByAnotherEngine(Table table, org.apache.iceberg.DataFile file) {
    table.refresh();
    table
        .newRewrite()
        .deleteFile(file)
        .addFile(
            org.apache.iceberg.DataFiles.builder(table.spec())
                .copy(file)
                .withPath(file.location() + ".rewritten.parquet")
                .build())
        .commit();
  }

  @Test
  void withoutASmallFileSizeNoFilesAreMerged() throws Exception {
    smallFileSize = 0;
    Table table = table();
    try (var harness = harness(true, null)) {
      commitSmallFiles(harness, table, 5, null);
    }
  }

  /**
   * Writes and commits one small file of ten new keys at each of checkpoints 1 to {@code count},
   * checking that none is merged yet; the files' locations, in order.
   *
   * @param beforeEach what to do before each checkpoint (move the clock), or null
   */
  private List<String> commitSmallFiles(
      KeyedOneInputStreamOperatorTestHarness<RowKey, ChangeEvent, ChangeCommittable> harness,
      Table table,
      int count,
      java.util.function.LongConsumer beforeEach)
      throws Exception {
    List<String> small = new java.util.ArrayList<>();
    for (int checkpoint = 1; checkpoint <= count; checkpoint++) {
      if (beforeEach != null) {
        beforeEach.accept(checkpoint);
      }
      ChangeCommittable written =
          checkpoint(harness, checkpoint, inserts(checkpoint * 10L, checkpoint * 10L + 9, 0));
      assertThat(written.compactedDataFiles()).as("checkpoint %s", checkpoint).isEmpty();
      append(table, written);
      harness.notifyOfCompletedCheckpoint(checkpoint);
      small.add(
          ContentFileCodec.decodeDataFile(written.dataFiles().get(0), table.specs()).location());
    }
    return small;
  }

  /** Deletes rows of a data file with a deletion vector, as another engine would. */
  private static void deleteByAnotherEngine(Table table, String file, long... positions)
      throws Exception {
    table.refresh();
    BaseDVFileWriter dvs =
        new BaseDVFileWriter(
            OutputFileFactory.builderFor(table, 9, 9).format(FileFormat.PUFFIN).build(),
            path -> null);
    try (dvs) {
      for (long position : positions) {
        dvs.delete(file, position, table.spec(), null);
      }
    }
    RowDelta delta = table.newRowDelta();
    dvs.result().deleteFiles().forEach(delta::addDeletes);
    delta.commit();
  }

  @Test
  void aKeyWhoseFileLeftTheTableIsDeletedByKeyAfterARestore() throws Exception {
    Table table = table();
    DataFile file;
    try (var first = harness(true, null)) {
      ChangeCommittable written = checkpoint(first, 1, insert(1, "a", 1), insert(2, "b", 2));
      append(table, written);
      file = ContentFileCodec.decodeDataFile(written.dataFiles().get(0), table.specs());
    }
    // A job without state loads the index from the table: the file is not its own.
    OperatorSubtaskState state;
    try (var loaded = harness(true, null)) {
      ChangeCommittable out = checkpoint(loaded, 1, update(1, "a2", 3));
      assertThat(out.positionDeletes().positions(file.location())).containsExactly(0);
      state = loaded.snapshot(1, 1);
    }
    // Another writer removes the file; the restored writer forgets it and deletes key 2 by key.
    table.newDelete().deleteFile(file).commit();
    try (var restored = harness(true, state)) {
      ChangeCommittable out = checkpoint(restored, 2, update(2, "b2", 4));
      assertThat(out.positionDeletes().isEmpty()).isTrue();
      assertThat(out.equalityFallbacks()).isEqualTo(1);
    }
  }

  @Test
  void compactionDoesNotCopyARowThatAnotherEngineDeleted() throws Exception {
    compactionRatio = 0.3;
    Table table = table();
    try (var harness = harness(true, null)) {
      String first = commitTenKeys(harness, table);
      // Another engine deletes key 5, the fifth row, with a deletion vector.
      BaseDVFileWriter dvs =
          new BaseDVFileWriter(
              OutputFileFactory.builderFor(table, 9, 9).format(FileFormat.PUFFIN).build(),
              path -> null);
      try (dvs) {
        dvs.delete(first, 4, table.spec(), null);
      }
      RowDelta delta = table.newRowDelta();
      dvs.result().deleteFiles().forEach(delta::addDeletes);
      delta.commit();

      ChangeCommittable second = checkpoint(harness, 2, updates(1, 4, 100));
      assertThat(second.compactedDataFiles()).containsExactly(first);
      assertThat(second.positionDeletes().positions(first))
          .containsExactly(0, 1, 2, 3, 5, 6, 7, 8, 9);
      assertThat(
              ContentFileCodec.decodeDataFile(second.dataFiles().get(0), table.specs())
                  .recordCount())
          .isEqualTo(9);
    }
  }

  /**
   * A file another engine replaced may be gone (expired) by the commit, which could then not read
   * back the key of a position delete into it: once the writer saw the file go, it deletes by key.
   */
  @Test
  void aRowOfAFileAnotherEngineReplacedIsDeletedByKeyOnceTheWriterSawTheFileGo() throws Exception {
    compactionRatio = 0.3;
    Table table = table();
    try (var harness = harness(true, null)) {
      String file = commitTenKeys(harness, table);
      table.newDelete().deleteFile(file).commit();
      // Checkpoints without changes of those keys read the table; the writer stops counting the
      // file as its own once its commit is well behind.
      for (long id = 2; id <= 5; id++) {
        append(table, checkpoint(harness, id, inserts(10 * id + 50, 10 * id + 50, 0)));
        harness.notifyOfCompletedCheckpoint(id);
      }
      ChangeCommittable sixth = checkpoint(harness, 6, updates(1, 2, 100));
      assertThat(sixth.equalityFallbacks()).isEqualTo(2);
      assertThat(sixth.positionDeletes().files()).doesNotContain(file);
    }
  }

  @Test
  void aFileThatLeftTheTableIsNotCompacted() throws Exception {
    compactionRatio = 0.3;
    Table table = table();
    try (var harness = harness(true, null)) {
      table.newDelete().deleteFile(commitTenKeys(harness, table)).commit();
      ChangeCommittable second = checkpoint(harness, 2, updates(1, 4, 100));
      assertThat(second.compactedDataFiles()).isEmpty();
    }
  }
}
