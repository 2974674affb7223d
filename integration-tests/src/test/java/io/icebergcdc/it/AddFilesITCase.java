package io.icebergcdc.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.icebergcdc.commit.SnapshotSummaryKeys;
import io.icebergcdc.sink.CatalogDefinition;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.flink.api.common.RuntimeExecutionMode;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.types.Row;
import org.apache.flink.util.CloseableIterator;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.data.parquet.GenericParquetWriter;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.DataWriter;
import org.apache.iceberg.io.OutputFile;
import org.apache.iceberg.parquet.Parquet;
import org.apache.iceberg.types.Types;
import org.apache.parquet.example.data.Group;
import org.apache.parquet.example.data.simple.SimpleGroupFactory;
import org.apache.parquet.hadoop.ParquetWriter;
import org.apache.parquet.hadoop.example.ExampleParquetWriter;
import org.apache.parquet.io.LocalOutputFile;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.MessageTypeParser;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Existing Parquet files adopted into a table without copying them: through the catalog's SQL
 * procedure {@code CALL lake.`system`.add_files(...)}, then read back with {@code SELECT}, on a
 * Hadoop catalog and on the REST catalog with its tables and the files on S3Proxy; and through the
 * job jar's {@code add-files} command, as a user runs it, with its argument errors and refusals one
 * line each.
 */
class AddFilesITCase {

  @RegisterExtension
  static final MiniClusterExtension FLINK =
      new MiniClusterExtension(
          new MiniClusterResourceConfiguration.Builder()
              .setNumberTaskManagers(1)
              .setNumberSlotsPerTaskManager(4)
              .build());

  private static final Schema SCHEMA =
      new Schema(
          Types.NestedField.required(1, "id", Types.LongType.get()),
          Types.NestedField.optional(2, "name", Types.StringType.get()),
          Types.NestedField.optional(3, "day", Types.DateType.get()));

  private static final LocalDate NOV_30 = LocalDate.parse("2026-11-30");

  @TempDir Path dir;

  private static StreamTableEnvironment batch() {
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
    env.setRuntimeMode(RuntimeExecutionMode.BATCH);
    env.setParallelism(2);
    return StreamTableEnvironment.create(env);
  }

  private static List<String> select(StreamTableEnvironment sql, String query) throws Exception {
    List<String> rows = new ArrayList<>();
    try (CloseableIterator<Row> result = sql.executeSql(query).collect()) {
      result.forEachRemaining(
          row -> {
            List<String> fields = new ArrayList<>();
            for (int i = 0; i < row.getArity(); i++) {
              fields.add(String.valueOf(row.getField(i)));
            }
            rows.add(String.join(",", fields));
          });
    }
    rows.sort(null);
    return rows;
  }

  /** Writes rows with Iceberg's writer, whose columns carry the schema's field ids. */
  private static Path writeWithIds(Path file, Schema schema, Object[]... rows) throws IOException {
    Files.createDirectories(file.getParent());
    writeWithIds(org.apache.iceberg.Files.localOutput(file.toFile()), schema, rows);
    return file;
  }

  private static void writeWithIds(OutputFile file, Schema schema, Object[]... rows)
      throws IOException {
    DataWriter<Record> writer =
        Parquet.writeData(file)
            .schema(schema)
            .withSpec(PartitionSpec.unpartitioned())
            .createWriterFunc(GenericParquetWriter::create)
            .build();
    try (writer) {
      for (Object[] values : rows) {
        Record record = GenericRecord.create(schema);
        for (int i = 0; i < values.length; i++) {
          record.set(i, values[i]);
        }
        writer.write(record);
      }
    }
  }

  /**
   * Writes rows with plain parquet-java, as Spark or Hive would: no field ids.
   *
   * @param rows each row's values in the order of the message type's columns; null for none
   */
  private static Path writeWithoutIds(Path file, String messageType, Object[]... rows)
      throws IOException {
    Files.createDirectories(file.getParent());
    MessageType type = MessageTypeParser.parseMessageType(messageType);
    SimpleGroupFactory groups = new SimpleGroupFactory(type);
    try (ParquetWriter<Group> writer =
        ExampleParquetWriter.builder(new LocalOutputFile(file)).withType(type).build()) {
      for (Object[] values : rows) {
        Group group = groups.newGroup();
        for (int i = 0; i < values.length; i++) {
          String column = type.getFieldName(i);
          if (values[i] instanceof Long number) {
            group.add(column, number);
          } else if (values[i] instanceof LocalDate day) {
            group.add(column, (int) day.toEpochDay());
          } else if (values[i] != null) {
            group.add(column, values[i].toString());
          }
        }
        writer.write(group);
      }
    }
    return file;
  }

  @Test
  void theSqlProcedureAddsFilesThatSelectReads() throws Exception {
    StreamTableEnvironment sql = batch();
    String warehouse = dir.resolve("warehouse").toString();
    sql.executeSql(
            "CREATE CATALOG lake WITH ('type' = 'iceberg-cdc', 'catalog-type' = 'hadoop',"
                + " 'warehouse' = '"
                + warehouse
                + "')")
        .await();
    sql.executeSql("CREATE DATABASE lake.shop").await();
    sql.executeSql("CREATE TABLE lake.shop.events (id BIGINT NOT NULL, name STRING, `day` DATE)")
        .await();
    Catalog catalog = CatalogDefinition.hadoop(warehouse).connect();
    Table table = catalog.loadTable(TableIdentifier.of("shop", "events"));
    Path incoming = dir.resolve("incoming");
    writeWithIds(
        incoming.resolve("iceberg.parquet"),
        table.schema(),
        new Object[] {1L, "a", NOV_30},
        new Object[] {2L, "b", null});
    // Columns in another order than the table's, matched by name through the name mapping.
    writeWithoutIds(
        incoming.resolve("spark/part-00000.snappy.parquet"),
        "message spark_schema { optional int32 day (DATE); optional binary name (STRING);"
            + " required int64 id; }",
        new Object[] {NOV_30.plusDays(1), "c", 3L});

    List<String> added =
        select(sql, "CALL lake.`system`.add_files('shop.events', '" + incoming.toUri() + "')");

    table.refresh();
    assertThat(added).containsExactly("2,3," + table.currentSnapshot().snapshotId());
    assertThat(select(sql, "SELECT id, name, `day` FROM lake.shop.events"))
        .containsExactly("1,a,2026-11-30", "2,b,null", "3,c,2026-12-01");
    assertThat(table.currentSnapshot().operation()).isEqualTo("append");
    assertThat(table.currentSnapshot().summary())
        .containsEntry(SnapshotSummaryKeys.ADDED_FILES, "2")
        .containsEntry(SnapshotSummaryKeys.ADDED_FILES_SOURCE, incoming.toUri().toString());
    assertThat(select(sql, "SHOW PROCEDURES IN lake.`system`")).containsExactly("add_files");

    // A file whose column does not fit: the call fails naming it, and nothing is added.
    Path bad =
        writeWithoutIds(
            dir.resolve("bad/part-0.parquet"),
            "message m { required int64 id; optional int64 name; }",
            new Object[] {4L, 5L});
    assertThatThrownBy(
            () ->
                select(
                    sql,
                    "CALL lake.`system`.add_files('shop.events', '" + dir.resolve("bad") + "')"))
        .hasStackTraceContaining("cannot add " + bad + " to table ")
        .hasStackTraceContaining("its column name is long in the file but string in the table");
    table.refresh();
    assertThat(table.snapshots()).hasSize(1);
    CatalogDefinition.close(catalog);
  }

  @Test
  void onS3TheProcedureListsAPrefixThroughTheTablesFileIo() throws Exception {
    try (LakeServers lake = LakeServers.start("add-files-lake")) {
      String properties =
          lake.s3Properties().entrySet().stream()
              .map(e -> ", 'catalog." + e.getKey() + "' = '" + e.getValue() + "'")
              .collect(Collectors.joining());
      StreamTableEnvironment sql = batch();
      sql.executeSql(
              "CREATE CATALOG lake WITH ('type' = 'iceberg-cdc', 'catalog-type' = 'rest',"
                  + " 'uri' = '"
                  + lake.rest.uri()
                  + "'"
                  + properties
                  + ")")
          .await();
      sql.executeSql("CREATE DATABASE lake.shop").await();
      sql.executeSql("CREATE TABLE lake.shop.events (id BIGINT NOT NULL, name STRING, `day` DATE)")
          .await();
      Catalog catalog = lake.restCatalog().connect();
      Table table = catalog.loadTable(TableIdentifier.of("shop", "events"));
      String prefix = "s3://" + lake.bucket + "/incoming";
      writeWithIds(
          table.io().newOutputFile(prefix + "/a.parquet"),
          table.schema(),
          new Object[] {1L, "a", NOV_30},
          new Object[] {2L, "b", NOV_30});
      writeWithIds(
          table.io().newOutputFile(prefix + "/sub/b.parquet"),
          table.schema(),
          new Object[] {3L, "c", null});
      // A key that shares the prefix's text but is not under it as a directory.
      writeWithIds(
          table.io().newOutputFile(prefix + "-other/c.parquet"),
          table.schema(),
          new Object[] {4L, "d", null});

      List<String> added =
          select(sql, "CALL lake.`system`.add_files('shop.events', '" + prefix + "')");

      table.refresh();
      assertThat(added).containsExactly("2,3," + table.currentSnapshot().snapshotId());
      Set<String> locations = new HashSet<>();
      try (CloseableIterable<FileScanTask> tasks = table.newScan().planFiles()) {
        tasks.forEach(task -> locations.add(task.file().location()));
      }
      assertThat(locations)
          .containsExactlyInAnyOrder(prefix + "/a.parquet", prefix + "/sub/b.parquet");
      assertThat(select(sql, "SELECT id, name, `day` FROM lake.shop.events"))
          .containsExactly("1,a,2026-11-30", "2,b,2026-11-30", "3,c,null");
      CatalogDefinition.close(catalog);
    }
  }

  @Test
  void theCommandAddsHivePartitionsAndTellsWhatDoesNotFitInOneLine() throws Exception {
    JobJar.assertBuilt();
    String warehouse = dir.resolve("wh").toString();
    Catalog catalog = CatalogDefinition.hadoop(warehouse).connect();
    Table table =
        catalog.createTable(
            TableIdentifier.of("shop", "orders"),
            SCHEMA,
            PartitionSpec.builderFor(SCHEMA).identity("day").build());
    Path incoming = dir.resolve("incoming");
    writeWithoutIds(
        incoming.resolve("day=2026-11-30/000000_0.parquet"),
        "message hive_schema { required int64 id; optional binary name (STRING); }",
        new Object[] {1L, "a"},
        new Object[] {2L, "b"});
    writeWithIds(
        incoming.resolve("day=2026-12-01/part-0.parquet"),
        SCHEMA,
        new Object[] {3L, "c", NOV_30.plusDays(1)});

    JobJar.Result added =
        JobJar.run(
            dir,
            List.of(
                "add-files",
                "--table",
                "shop.orders",
                "--path",
                incoming.toString(),
                "--warehouse",
                warehouse));

    assertThat(added.status()).as(added.err()).isZero();
    table.refresh();
    assertThat(added.out().strip())
        .isEqualTo(
            "Added 2 files (3 rows) from "
                + incoming
                + " to shop.orders in snapshot "
                + table.currentSnapshot().snapshotId());
    List<String> rows = new ArrayList<>();
    try (CloseableIterable<Record> records = IcebergGenerics.read(table).build()) {
      records.forEach(r -> rows.add(r.getField("id") + "," + r.getField("day")));
    }
    assertThat(rows).containsExactlyInAnyOrder("1,2026-11-30", "2,2026-11-30", "3,2026-12-01");

    JobJar.Result noPath =
        JobJar.run(dir, List.of("add-files", "--table", "shop.orders", "--warehouse", warehouse));
    assertThat(noPath.status()).isEqualTo(2);
    assertThat(noPath.lastErrorLine()).isEqualTo("error: add-files: --path is required");

    JobJar.Result again =
        JobJar.run(
            dir,
            List.of(
                "add-files",
                "--table",
                "shop.orders",
                "--path",
                incoming.toString(),
                "--warehouse",
                warehouse));
    assertThat(again.status()).isEqualTo(1);
    assertThat(again.err().strip().lines().filter(l -> l.startsWith("error:")).count())
        .isEqualTo(1);
    assertThat(again.lastErrorLine())
        .startsWith("error: cannot add " + incoming.resolve("day=2026-11-30/000000_0.parquet"))
        .endsWith(": it is in the table already");

    Path mixed =
        writeWithIds(
            dir.resolve("mixed/part-0.parquet"),
            SCHEMA,
            new Object[] {4L, "d", NOV_30},
            new Object[] {5L, "e", NOV_30.plusDays(1)});
    JobJar.Result spanning =
        JobJar.run(
            dir,
            List.of(
                "add-files",
                "--table",
                "shop.orders",
                "--path",
                dir.resolve("mixed").toString(),
                "--warehouse",
                warehouse));
    assertThat(spanning.status()).isEqualTo(1);
    assertThat(spanning.lastErrorLine())
        .startsWith("error: cannot add " + mixed)
        .contains("its rows span more than one partition of day");
    table.refresh();
    assertThat(table.snapshots()).hasSize(1);
    CatalogDefinition.close(catalog);
  }
}
