package io.icebergcdc.sink;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.icebergcdc.commit.SnapshotSummaryKeys;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.data.parquet.GenericParquetReaders;
import org.apache.iceberg.data.parquet.GenericParquetWriter;
import org.apache.iceberg.hadoop.HadoopCatalog;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.DataWriter;
import org.apache.iceberg.mapping.NameMappingParser;
import org.apache.iceberg.parquet.Parquet;
import org.apache.iceberg.types.Conversions;
import org.apache.iceberg.types.Types;
import org.apache.parquet.example.data.Group;
import org.apache.parquet.example.data.simple.SimpleGroupFactory;
import org.apache.parquet.hadoop.ParquetWriter;
import org.apache.parquet.hadoop.example.ExampleParquetWriter;
import org.apache.parquet.io.LocalOutputFile;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.MessageTypeParser;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AddFilesTest {

  private static final Schema SCHEMA =
      new Schema(
          Types.NestedField.required(1, "id", Types.LongType.get()),
          Types.NestedField.optional(2, "name", Types.StringType.get()),
          Types.NestedField.optional(3, "day", Types.DateType.get()));

  private static final LocalDate NOV_30 = LocalDate.parse("2026-11-30");

  @TempDir Path dir;

  private Table table(PartitionSpec spec) {
    HadoopCatalog catalog =
        new HadoopCatalog(new Configuration(), dir.resolve("warehouse").toString());
    return catalog.createTable(TableIdentifier.of("db", "events"), SCHEMA, spec);
  }

  private static Record row(long id, String name, LocalDate day) {
    Record record = GenericRecord.create(SCHEMA);
    record.setField("id", id);
    record.setField("name", name);
    record.setField("day", day);
    return record;
  }

  /** Writes rows with Iceberg's writer: the file's columns carry the table's field ids. */
  private static Path writeWithIds(Path file, Record... rows) throws IOException {
    Files.createDirectories(file.getParent());
    DataWriter<Record> writer =
        Parquet.writeData(org.apache.iceberg.Files.localOutput(file.toFile()))
            .schema(SCHEMA)
            .withSpec(PartitionSpec.unpartitioned())
            .createWriterFunc(GenericParquetWriter::create)
            .overwrite()
            .build();
    try (writer) {
      for (Record row : rows) {
        writer.write(row);
      }
    }
    return file;
  }

  /**
   * Writes rows with plain parquet-java, as Spark or Hive would: no field ids.
   *
   * @param schema the Parquet message type
   * @param rows each row's values by column name
   */
  private static Path writeWithoutIds(Path file, String schema, List<Map<String, Object>> rows)
      throws IOException {
    Files.createDirectories(file.getParent());
    MessageType type = MessageTypeParser.parseMessageType(schema);
    SimpleGroupFactory groups = new SimpleGroupFactory(type);
    try (ParquetWriter<Group> writer =
        ExampleParquetWriter.builder(new LocalOutputFile(file)).withType(type).build()) {
      for (Map<String, Object> values : rows) {
        Group group = groups.newGroup();
        values.forEach(
            (column, value) -> {
              if (value instanceof Long number) {
                group.add(column, number);
              } else if (value instanceof Integer number) {
                group.add(column, number);
              } else if (value != null) {
                group.add(column, value.toString());
              }
            });
        writer.write(group);
      }
    }
    return file;
  }

  private static Map<String, Object> values(Object... pairs) {
    Map<String, Object> values = new HashMap<>();
    for (int i = 0; i < pairs.length; i += 2) {
      values.put((String) pairs[i], pairs[i + 1]);
    }
    return values;
  }

  private static int days(LocalDate day) {
    return (int) day.toEpochDay();
  }

  private static List<String> rows(Table table) throws IOException {
    List<String> rows = new ArrayList<>();
    try (CloseableIterable<Record> records = IcebergGenerics.read(table).build()) {
      for (Record record : records) {
        rows.add(
            record.getField("id") + "," + record.getField("name") + "," + record.getField("day"));
      }
    }
    rows.sort(null);
    return rows;
  }

  private static Map<String, DataFile> dataFiles(Table table) throws IOException {
    Map<String, DataFile> files = new HashMap<>();
    try (CloseableIterable<FileScanTask> tasks = table.newScan().includeColumnStats().planFiles()) {
      for (FileScanTask task : tasks) {
        files.put(task.file().location(), task.file());
      }
    }
    return files;
  }

  private static int snapshots(Table table) {
    table.refresh();
    int count = 0;
    for (var ignored : table.snapshots()) {
      count++;
    }
    return count;
  }

  @Test
  void adoptsTheParquetFilesOfADirectoryInOneSnapshotWithoutCopyingThem() throws IOException {
    Table table = table(PartitionSpec.unpartitioned());
    Path incoming = dir.resolve("incoming");
    Path a = writeWithIds(incoming.resolve("a.parquet"), row(1, "a", NOV_30), row(2, "b", NOV_30));
    Path b = writeWithIds(incoming.resolve("more/b.parquet"), row(3, "c", null));
    Path plain =
        writeWithoutIds(
            incoming.resolve("plain.parquet"),
            "message spark { required int64 id; optional binary name (STRING);"
                + " optional int32 day (DATE); }",
            List.of(values("id", 4L, "name", "d", "day", days(NOV_30.plusDays(1)))));
    Files.writeString(incoming.resolve("_SUCCESS"), "");
    Files.writeString(incoming.resolve("notes.txt"), "not data");
    writeWithIds(incoming.resolve("_temporary/0/left-over.parquet"), row(99, "x", null));

    AddFiles.Result result = AddFiles.adopt(table, incoming.toString());

    assertThat(result.files()).isEqualTo(3);
    assertThat(result.rows()).isEqualTo(4);
    assertThat(snapshots(table)).isEqualTo(1);
    assertThat(result.snapshotId()).isEqualTo(table.currentSnapshot().snapshotId());
    assertThat(table.currentSnapshot().summary())
        .containsEntry(SnapshotSummaryKeys.ADDED_FILES, "3")
        .containsEntry(SnapshotSummaryKeys.ADDED_FILES_SOURCE, incoming.toString())
        .containsEntry("added-records", "4");
    // Not copied: the table references the files where they are, and has no data of its own.
    assertThat(dataFiles(table).keySet())
        .containsExactlyInAnyOrder(a.toString(), b.toString(), plain.toString());
    try (Stream<Path> own = Files.walk(Path.of(table.location().replaceFirst("^file:", "")))) {
      assertThat(own.filter(p -> p.toString().endsWith(".parquet"))).isEmpty();
    }
    assertThat(rows(table))
        .containsExactly("1,a,2026-11-30", "2,b,2026-11-30", "3,c,null", "4,d,2026-12-01");
    // A file without field ids: the table now maps its columns by name for every reader.
    assertThat(table.properties()).containsKey(TableProperties.DEFAULT_NAME_MAPPING);
  }

  @Test
  void aLocationWithDotSegmentsLeavesOutItsHiddenFilesAndRecordsPlainPaths() throws IOException {
    Table table = table(PartitionSpec.unpartitioned());
    Path incoming = dir.resolve("incoming");
    Path a = writeWithIds(incoming.resolve("a.parquet"), row(1, "a", NOV_30));
    writeWithIds(incoming.resolve("_temporary/0/left-over.parquet"), row(99, "x", null));
    Files.createDirectories(incoming.resolve("sub"));

    AddFiles.Result result = AddFiles.adopt(table, incoming + "/sub/.././");

    assertThat(result.files()).isEqualTo(1);
    assertThat(dataFiles(table).keySet()).containsExactly(a.toString());
    // An object store's keys may hold such segments: left as they are.
    assertThat(ParquetFileListing.withoutDotSegments("s3://b/x/./y/../z", false))
        .isEqualTo("s3://b/x/./y/../z");
    assertThat(ParquetFileListing.withoutDotSegments("s3a://b/x/./y/../z", true))
        .isEqualTo("s3a://b/x/z");
    assertThat(ParquetFileListing.withoutDotSegments("hdfs:/x/../../y", false))
        .isEqualTo("hdfs:/y");
    assertThat(ParquetFileListing.withoutDotSegments("hdfs://nn:8020/a/../b", false))
        .isEqualTo("hdfs://nn:8020/b");
    assertThat(ParquetFileListing.withoutDotSegments("/data//in/../x", false)).isEqualTo("/data/x");
    assertThat(ParquetFileListing.withoutDotSegments("file:///x/../../y", false))
        .isEqualTo("file:///y");
    assertThat(ParquetFileListing.withoutDotSegments("/x/./y", false)).isEqualTo("/x/y");
  }

  @Test
  void aFileWithoutFieldIdsIsMatchedByNameWhateverItsColumnOrder() throws IOException {
    Table table = table(PartitionSpec.unpartitioned());
    Path file =
        writeWithoutIds(
            dir.resolve("incoming/reordered.parquet"),
            "message hive { optional int32 day (DATE); optional binary name (STRING);"
                + " required int64 id; }",
            List.of(
                values("day", days(NOV_30), "name", "x", "id", 7L), values("name", "y", "id", 9L)));

    AddFiles.Result result = AddFiles.adopt(table, file.toUri().toString());

    assertThat(result.files()).isEqualTo(1);
    DataFile adopted = dataFiles(table).values().iterator().next();
    assertThat(adopted.location()).isEqualTo(file.toUri().toString());
    assertThat(
            (Long) Conversions.fromByteBuffer(Types.LongType.get(), adopted.lowerBounds().get(1)))
        .isEqualTo(7L);
    assertThat(
            (Long) Conversions.fromByteBuffer(Types.LongType.get(), adopted.upperBounds().get(1)))
        .isEqualTo(9L);
    assertThat(adopted.nullValueCounts()).containsEntry(3, 1L);
    // Read as engines do, through the table's name mapping.
    List<String> rows = new ArrayList<>();
    try (CloseableIterable<Record> records =
        Parquet.read(table.io().newInputFile(adopted.location()))
            .project(SCHEMA)
            .withNameMapping(
                NameMappingParser.fromJson(
                    table.properties().get(TableProperties.DEFAULT_NAME_MAPPING)))
            .createReaderFunc(type -> GenericParquetReaders.buildReader(SCHEMA, type))
            .build()) {
      records.forEach(
          r -> rows.add(r.getField("id") + "," + r.getField("name") + "," + r.getField("day")));
    }
    assertThat(rows).containsExactly("7,x,2026-11-30", "9,y,null");
  }

  @Test
  void aKeyedTableRefusesAFileWithoutFieldIdsWhoseColumnsAreInAnotherOrder() throws IOException {
    HadoopCatalog catalog =
        new HadoopCatalog(new Configuration(), dir.resolve("warehouse").toString());
    Table keyed =
        catalog.createTable(
            TableIdentifier.of("db", "keyed"),
            new Schema(SCHEMA.columns(), java.util.Set.of(1)),
            PartitionSpec.unpartitioned());
    Path reordered =
        writeWithoutIds(
            dir.resolve("keyed/reordered.parquet"),
            "message hive { optional binary name (STRING); required int64 id;"
                + " optional int32 day (DATE); }",
            List.of(values("name", "x", "id", 7L)));
    assertThatThrownBy(() -> AddFiles.adopt(keyed, reordered.toString()))
        .hasMessageContaining("reordered.parquet")
        .hasMessageContaining("not in the table's order")
        .hasMessageContaining("primary key");
    assertThat(snapshots(keyed)).isZero();

    Path inOrder =
        writeWithoutIds(
            dir.resolve("keyed-ok/in-order.parquet"),
            "message spark { required int64 id; optional binary name (STRING);"
                + " optional int32 day (DATE); }",
            List.of(values("id", 8L, "name", "y")));
    assertThat(AddFiles.adopt(keyed, inOrder.toString()).files()).isEqualTo(1);
    assertThat(rows(keyed)).containsExactly("8,y,null");
  }

  @Test
  void takesIdentityPartitionsFromHiveDirectoriesOrElseFromStatistics() throws IOException {
    Table table = table(PartitionSpec.builderFor(SCHEMA).identity("day").build());
    Path incoming = dir.resolve("incoming");
    // As Hive writes: the partition column is in the directory's name only.
    Path hive =
        writeWithoutIds(
            incoming.resolve("day=2026-11-30/part-0.parquet"),
            "message hive { required int64 id; optional binary name (STRING); }",
            List.of(values("id", 1L, "name", "a"), values("id", 2L, "name", "b")));
    Path withColumn =
        writeWithIds(
            incoming.resolve("day=2026-12-01/part-0.parquet"), row(3, "c", NOV_30.plusDays(1)));
    Path noDirectory =
        writeWithIds(incoming.resolve("loose.parquet"), row(4, "d", NOV_30.plusDays(2)));

    assertThat(AddFiles.adopt(table, incoming.toString()).files()).isEqualTo(3);

    Map<String, DataFile> files = dataFiles(table);
    assertThat(files.get(hive.toString()).partition().get(0, Integer.class))
        .isEqualTo(days(NOV_30));
    assertThat(files.get(withColumn.toString()).partition().get(0, Integer.class))
        .isEqualTo(days(NOV_30.plusDays(1)));
    assertThat(files.get(noDirectory.toString()).partition().get(0, Integer.class))
        .isEqualTo(days(NOV_30.plusDays(2)));
    assertThat(rows(table))
        .containsExactly("1,a,2026-11-30", "2,b,2026-11-30", "3,c,2026-12-01", "4,d,2026-12-02");

    // A directory that says otherwise than the rows, and rows of two days without a directory.
    Path wrong =
        writeWithIds(dir.resolve("wrong/day=2026-12-03/part-0.parquet"), row(5, "e", NOV_30));
    assertThatThrownBy(() -> AddFiles.adopt(table, dir.resolve("wrong").toString()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(wrong.toString())
        .hasMessageContaining("day=2026-12-03");
    Path twoDays =
        writeWithIds(
            dir.resolve("two/days.parquet"), row(6, "f", NOV_30), row(7, "g", NOV_30.plusDays(1)));
    assertThatThrownBy(() -> AddFiles.adopt(table, dir.resolve("two").toString()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(twoDays.toString())
        .hasMessageContaining("more than one partition")
        .hasMessageContaining("2026-11-30 to 2026-12-01");
    assertThat(snapshots(table)).isEqualTo(1);
  }

  @Test
  void takesATransformsPartitionFromStatisticsWhenItsRowsAgree() throws IOException {
    Table table = table(PartitionSpec.builderFor(SCHEMA).month("day").build());
    Path november =
        writeWithIds(
            dir.resolve("nov/a.parquet"), row(1, "a", NOV_30.minusDays(20)), row(2, "b", NOV_30));
    Path spanning =
        writeWithIds(
            dir.resolve("both/b.parquet"), row(3, "c", NOV_30), row(4, "d", NOV_30.plusDays(1)));

    assertThatThrownBy(() -> AddFiles.adopt(table, dir.resolve("both").toString()))
        .hasMessageContaining(spanning.toString())
        .hasMessageContaining("more than one partition of day_month");
    assertThat(snapshots(table)).isZero();

    AddFiles.adopt(table, november.toString());
    DataFile adopted = dataFiles(table).get(november.toString());
    assertThat(adopted.partition().get(0, Integer.class)).isEqualTo((2026 - 1970) * 12 + 10);
  }

  @Test
  void aFileThatDoesNotFitTheSchemaIsNamedAndNothingIsCommitted() throws IOException {
    Table table = table(PartitionSpec.unpartitioned());
    writeWithIds(dir.resolve("typed/good.parquet"), row(1, "a", NOV_30));
    Path badType =
        writeWithoutIds(
            dir.resolve("typed/bad.parquet"),
            "message m { required int64 id; optional binary day (STRING); }",
            List.of(values("id", 2L, "day", "yesterday")));
    assertThatThrownBy(() -> AddFiles.adopt(table, dir.resolve("typed").toString()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "cannot add "
                + badType
                + " to table "
                + table.name()
                + ": its column day is string in the file but date in the table");

    Path extra =
        writeWithoutIds(
            dir.resolve("extra/colour.parquet"),
            "message m { required int64 id; optional binary colour (STRING); }",
            List.of(values("id", 3L, "colour", "red")));
    assertThatThrownBy(() -> AddFiles.adopt(table, extra.toString()))
        .hasMessageContaining(extra.toString())
        .hasMessageContaining("its column colour (binary STRING) is not in the table");

    Path noKey =
        writeWithoutIds(
            dir.resolve("nokey/x.parquet"),
            "message m { optional binary name (STRING); }",
            List.of(values("name", "n")));
    assertThatThrownBy(() -> AddFiles.adopt(table, noKey.toString()))
        .hasMessageContaining(noKey.toString())
        .hasMessageContaining("required column id (long) is not in the file");

    Path nullKey =
        writeWithoutIds(
            dir.resolve("nullkey/x.parquet"),
            "message m { optional int64 id; optional binary name (STRING); }",
            List.of(values("id", 5L), values("name", "no id")));
    assertThatThrownBy(() -> AddFiles.adopt(table, nullKey.toString()))
        .hasMessageContaining(nullKey.toString())
        .hasMessageContaining("column id is required, but the file's may be null and has 1 nulls");

    assertThat(snapshots(table)).isZero();
    assertThat(table.properties()).doesNotContainKey(TableProperties.DEFAULT_NAME_MAPPING);
  }

  @Test
  void aFileWhoseValuesIcebergWouldReadAsOthersIsRefused() throws IOException {
    Table table = table(PartitionSpec.unpartitioned());
    Path millis =
        writeWithoutIds(
            dir.resolve("millis/x.parquet"),
            "message m { required int64 id; optional int64 ts (TIMESTAMP(MILLIS,false)); }",
            List.of(values("id", 1L, "ts", 1_767_657_600_000L)));
    assertThatThrownBy(() -> AddFiles.adopt(table, millis.toString()))
        .hasMessageContaining(millis.toString())
        .hasMessageContaining("its column ts holds timestamps in MILLIS");
    Path unsigned =
        writeWithoutIds(
            dir.resolve("unsigned/x.parquet"),
            "message m { required int64 id; optional int32 n (INTEGER(32,false)); }",
            List.of(values("id", 1L, "n", 7)));
    assertThatThrownBy(() -> AddFiles.adopt(table, unsigned.toString()))
        .hasMessageContaining(unsigned.toString())
        .hasMessageContaining("its column n holds unsigned 32-bit integers");
    assertThat(snapshots(table)).isZero();
  }

  @Test
  void aFileAlreadyInTheTableIsRefused() throws IOException {
    Table table = table(PartitionSpec.unpartitioned());
    Path file = writeWithIds(dir.resolve("incoming/a.parquet"), row(1, "a", NOV_30));
    AddFiles.adopt(table, dir.resolve("incoming").toString());

    writeWithIds(dir.resolve("incoming/b.parquet"), row(2, "b", NOV_30));
    // Spelt as a URI this time: still the same file.
    assertThatThrownBy(() -> AddFiles.adopt(table, dir.resolve("incoming").toUri().toString()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("a.parquet")
        .hasMessageContaining("it is in the table already");
    assertThatThrownBy(() -> AddFiles.adopt(table, file.toString()))
        .hasMessage(
            "cannot add " + file + " to table " + table.name() + ": it is in the table already");
    assertThat(snapshots(table)).isEqualTo(1);
    assertThat(rows(table)).containsExactly("1,a,2026-11-30");
  }

  /** The table as another process sees it: loaded through a catalog of its own. */
  private Table loadedAgain(Table table) {
    return new HadoopCatalog(new Configuration(), dir.resolve("warehouse").toString())
        .loadTable(TableIdentifier.of("db", "events"));
  }

  @Test
  void twoAdoptionsOfTheSameFilesAtOnceCommitThemOnce() throws IOException {
    Table table = table(PartitionSpec.unpartitioned());
    Path file = writeWithIds(dir.resolve("incoming/a.parquet"), row(1, "a", NOV_30));
    Table other = loadedAgain(table);

    // The other adoption checks and commits the file after this one checked it, before it commits.
    assertThatThrownBy(
            () ->
                AddFiles.adopt(
                    table,
                    dir.resolve("incoming").toString(),
                    () -> AddFiles.adopt(other, file.toString())))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("cannot add " + file + " to table " + table.name())
        .hasMessageContaining("another commit added it to the table meanwhile (snapshot ");
    table.refresh();
    assertThat(snapshots(table)).isEqualTo(1);
    assertThat(rows(table)).containsExactly("1,a,2026-11-30");

    // The same on a table with snapshots: validated from the one the files were checked against.
    Path second = writeWithIds(dir.resolve("more/b.parquet"), row(2, "b", NOV_30));
    assertThatThrownBy(
            () ->
                AddFiles.adopt(
                    table,
                    dir.resolve("more").toString(),
                    () -> AddFiles.adopt(loadedAgain(table), second.toString())))
        .hasMessageContaining("another commit added it to the table meanwhile");
    table.refresh();
    assertThat(snapshots(table)).isEqualTo(2);
    assertThat(rows(table)).containsExactlyInAnyOrder("1,a,2026-11-30", "2,b,2026-11-30");
  }

  @Test
  void theSnapshotTheFilesWereCheckedAgainstExpiringMeanwhileLeavesTheAdoptionToCommit()
      throws IOException {
    Table table = table(PartitionSpec.unpartitioned());
    writeWithIds(dir.resolve("first/a.parquet"), row(1, "a", NOV_30));
    AddFiles.adopt(table, dir.resolve("first").toString());
    long checked = table.currentSnapshot().snapshotId();
    writeWithIds(dir.resolve("incoming/b.parquet"), row(2, "b", NOV_30));
    Path unrelated = writeWithIds(dir.resolve("elsewhere/c.parquet"), row(3, "c", NOV_30));
    Path another = writeWithIds(dir.resolve("elsewhere/d.parquet"), row(4, "d", NOV_30));

    AddFiles.Result result =
        AddFiles.adopt(
            table,
            dir.resolve("incoming").toString(),
            () -> {
              // Two commits, then the snapshot checked against and the one after it expire:
              // Iceberg cannot tell the history since it any more.
              Table other = loadedAgain(table);
              AddFiles.adopt(other, unrelated.toString());
              long between = other.currentSnapshot().snapshotId();
              AddFiles.adopt(other, another.toString());
              other.expireSnapshots().expireSnapshotId(checked).commit();
              other.expireSnapshots().expireSnapshotId(between).commit();
            });

    table.refresh();
    assertThat(result.files()).isEqualTo(1);
    assertThat(table.snapshot(checked)).isNull();
    assertThat(rows(table))
        .containsExactlyInAnyOrder(
            "1,a,2026-11-30", "2,b,2026-11-30", "3,c,2026-11-30", "4,d,2026-11-30");
  }

  @Test
  void otherFilesCommittedMeanwhileLeaveTheAdoptionToCommitAfterThem() throws IOException {
    Table table = table(PartitionSpec.unpartitioned());
    writeWithIds(dir.resolve("first/a.parquet"), row(1, "a", NOV_30));
    AddFiles.adopt(table, dir.resolve("first").toString());
    writeWithIds(dir.resolve("incoming/b.parquet"), row(2, "b", NOV_30));
    Path unrelated = writeWithIds(dir.resolve("elsewhere/c.parquet"), row(3, "c", NOV_30));

    AddFiles.Result result =
        AddFiles.adopt(
            table,
            dir.resolve("incoming").toString(),
            () -> AddFiles.adopt(loadedAgain(table), unrelated.toString()));

    table.refresh();
    assertThat(result.files()).isEqualTo(1);
    assertThat(snapshots(table)).isEqualTo(3);
    assertThat(table.currentSnapshot().snapshotId()).isEqualTo(result.snapshotId());
    assertThat(table.currentSnapshot().operation()).isEqualTo("append");
    assertThat(rows(table))
        .containsExactlyInAnyOrder("1,a,2026-11-30", "2,b,2026-11-30", "3,c,2026-11-30");
  }

  @Test
  void aLocationWithoutParquetFilesIsRefused() throws IOException {
    Table table = table(PartitionSpec.unpartitioned());
    Path empty = Files.createDirectories(dir.resolve("empty"));
    Files.writeString(empty.resolve("_SUCCESS"), "");
    assertThatThrownBy(() -> AddFiles.adopt(table, empty.toString()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("there is no Parquet file under " + empty + " to add to table " + table.name());
    assertThatThrownBy(() -> AddFiles.adopt(table, dir.resolve("missing").toString()))
        .hasMessageContaining("there is no Parquet file under");
    assertThatThrownBy(() -> AddFiles.adopt(table, dir.resolve("missing.parquet").toString()))
        .hasMessageContaining("there is no Parquet file under");
    assertThatThrownBy(() -> AddFiles.adopt(table, "relative/dir"))
        .hasMessageContaining("is relative");
    Files.writeString(empty.resolve("broken.parquet"), "not parquet at all");
    assertThatThrownBy(() -> AddFiles.adopt(table, empty.toString()))
        .hasMessageContaining("broken.parquet")
        .hasMessageContaining("cannot be read as a Parquet file");
    assertThat(snapshots(table)).isZero();
  }
}
