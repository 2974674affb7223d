package io.icebergcdc.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.icebergcdc.commit.SnapshotSummaryKeys;
import io.icebergcdc.sink.CatalogDefinition;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.types.Row;
import org.apache.flink.util.CloseableIterator;
import org.apache.iceberg.DataOperations;
import org.apache.iceberg.FileContent;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The row-level statements of batch SQL on {@code iceberg-cdc} tables, of the connector and of the
 * catalog: {@code UPDATE} and {@code DELETE} through the key index (position deletes or deletion
 * vectors, never equality deletes), a {@code DELETE} of whole files as a metadata-only delete,
 * copy-on-write for tables without a primary key, loads with a write id, and {@code INSERT
 * OVERWRITE} by {@code overwrite.filter}.
 */
class SqlRowLevelITCase {

  @RegisterExtension
  static final MiniClusterExtension FLINK =
      new MiniClusterExtension(
          new MiniClusterResourceConfiguration.Builder()
              .setNumberTaskManagers(1)
              .setNumberSlotsPerTaskManager(4)
              .build());

  @TempDir Path dir;
  private TableEnvironment sql;

  @BeforeEach
  void batch() {
    sql = TableEnvironment.create(EnvironmentSettings.inBatchMode());
    sql.getConfig().set("parallelism.default", "2");
  }

  private String with(String extra) {
    return " WITH ('connector' = 'iceberg-cdc', 'warehouse' = '"
        + dir.resolve("warehouse")
        + "', 'database-name' = 'db'"
        + extra
        + ")";
  }

  private void run(String statement) throws Exception {
    sql.executeSql(statement).await();
  }

  private void keyed(String name, String formatVersion) throws Exception {
    sql.executeSql(
        "CREATE TABLE "
            + name
            + " (id BIGINT NOT NULL, v STRING, n INT, PRIMARY KEY (id) NOT ENFORCED)"
            + with(", 'format-version' = '" + formatVersion + "'"));
    run(
        "INSERT INTO "
            + name
            + " VALUES (1, 'a', 10), (2, 'b', 20), (3, 'c', 30), (4, 'b', 40), (5, 'e', 50)");
  }

  @Test
  void updateRewritesTheMatchingRowsByKeyInOneSnapshotWithoutEqualityDeletes() throws Exception {
    for (String version : List.of("2", "3")) {
      String name = "keyed_v" + version;
      keyed(name, version);
      run("UPDATE " + name + " SET n = n + 1, v = 'updated' WHERE v = 'b'");

      Table table = table(name);
      assertThat(rows(table, "id", "v", "n"))
          .containsExactly("1,a,10", "2,updated,21", "3,c,30", "4,updated,41", "5,e,50");
      assertThat(table.snapshots()).hasSize(2);
      Snapshot update = table.currentSnapshot();
      assertThat(update.operation()).isEqualTo(DataOperations.OVERWRITE);
      assertThat(update.summary())
          .containsEntry(SnapshotSummaryKeys.STATEMENT, "UPDATE")
          .containsEntry(SnapshotSummaryKeys.ROWS_UPDATED, "2")
          .containsEntry(SnapshotSummaryKeys.ROWS_INSERTED, "0")
          .containsEntry(SnapshotSummaryKeys.DELETES_FELL_BACK, "0")
          .containsEntry("added-records", "2");
      assertThat(deleteContents(table)).containsOnly(FileContent.POSITION_DELETES).isNotEmpty();
    }
  }

  @Test
  void deleteOfSomeRowsOfAFileIsARowLevelDeleteByKey() throws Exception {
    keyed("keyed", "3");
    run("DELETE FROM keyed WHERE v = 'b' OR id = 5");

    Table table = table("keyed");
    assertThat(rows(table, "id", "v", "n")).containsExactly("1,a,10", "3,c,30");
    Snapshot delete = table.currentSnapshot();
    assertThat(delete.summary())
        .containsEntry(SnapshotSummaryKeys.STATEMENT, "DELETE")
        .containsEntry(SnapshotSummaryKeys.ROWS_DELETED, "3")
        .containsEntry(SnapshotSummaryKeys.DELETES_FELL_BACK, "0")
        .doesNotContainKey("added-data-files");
    assertThat(deleteContents(table)).containsOnly(FileContent.POSITION_DELETES).isNotEmpty();
    assertThat(select("SELECT id FROM keyed WHERE n > 15")).containsExactly("+I[3]");
  }

  @Test
  void deleteOfWholePartitionsIsMetadataOnly() throws Exception {
    sql.executeSql(
        "CREATE TABLE daily (`day` STRING NOT NULL, id BIGINT NOT NULL, v STRING,"
            + " PRIMARY KEY (`day`, id) NOT ENFORCED) PARTITIONED BY (`day`)"
            + with(""));
    run(
        "INSERT INTO daily VALUES ('mon', 1, 'a'), ('mon', 2, 'b'), ('tue', 3, 'c'),"
            + " ('wed', 4, 'd')");
    Table table = table("daily");
    int filesBefore = files(table).size();

    run("DELETE FROM daily WHERE `day` IN ('mon', 'wed')");

    table.refresh();
    assertThat(rows(table, "day", "id", "v")).containsExactly("tue,3,c");
    Snapshot delete = table.currentSnapshot();
    assertThat(delete.operation()).isEqualTo(DataOperations.DELETE);
    assertThat(delete.summary())
        .containsEntry(SnapshotSummaryKeys.STATEMENT, "DELETE")
        .containsEntry("deleted-records", "3")
        .doesNotContainKey("added-delete-files")
        .doesNotContainKey("added-data-files");
    assertThat(files(table)).hasSizeLessThan(filesBefore);

    run("DELETE FROM daily WHERE `day` = 'fri'");
    assertThat(table("daily").snapshots()).as("nothing matched: no snapshot").hasSize(2);
  }

  @Test
  void columnsDeclaredAtAnotherPrecisionAreWrittenAsTheTablesTypesHoldThem() throws Exception {
    org.apache.iceberg.catalog.Catalog catalog =
        CatalogDefinition.hadoop(dir.resolve("warehouse").toString()).loader().loadCatalog();
    org.apache.iceberg.Schema schema =
        new org.apache.iceberg.Schema(
            List.of(
                org.apache.iceberg.types.Types.NestedField.required(
                    1, "id", org.apache.iceberg.types.Types.LongType.get()),
                org.apache.iceberg.types.Types.NestedField.optional(
                    2, "amount", org.apache.iceberg.types.Types.DecimalType.of(12, 4)),
                org.apache.iceberg.types.Types.NestedField.optional(
                    3, "ts", org.apache.iceberg.types.Types.TimestampType.withoutZone())),
            java.util.Set.of(1));
    catalog.createTable(TableIdentifier.of("db", "prices"), schema);
    catalog.createTable(
        TableIdentifier.of("db", "plain_prices"), new org.apache.iceberg.Schema(schema.columns()));
    String columns = "id BIGINT NOT NULL, amount DECIMAL(12, 2), ts TIMESTAMP(3)";
    sql.executeSql(
        "CREATE TABLE prices (" + columns + ", PRIMARY KEY (id) NOT ENFORCED)" + with(""));
    sql.executeSql("CREATE TABLE plain_prices (" + columns + ")" + with(""));
    for (String name : List.of("prices", "plain_prices")) {
      run(
          "INSERT INTO "
              + name
              + " VALUES (1, 12.34, TIMESTAMP '2026-12-05 10:15:30.123'),"
              + " (2, -0.05, TIMESTAMP '1969-12-31 23:59:59.999')");
      assertThat(rows(table(name), "id", "amount", "ts"))
          .as(name)
          .containsExactly(
              "1,12.3400,2026-12-05T10:15:30.123", "2,-0.0500,1969-12-31T23:59:59.999");
    }

    // Declared without the table's key, its rows would give key 1 a second row.
    sql.executeSql(
        "CREATE TABLE prices_without_key (" + columns + ")" + with(", 'table-name' = 'prices'"));
    assertThatThrownBy(
            () ->
                run(
                    "INSERT INTO prices_without_key VALUES (1, 1.00, TIMESTAMP '2026-12-06 00:00:00')"))
        .hasStackTraceContaining("has the primary key [id]")
        .hasStackTraceContaining("PRIMARY KEY (id) NOT ENFORCED");
    assertThat(rows(table("prices"), "id")).containsExactly("1", "2");
  }

  @Test
  void updateOfAKeyColumnIsRefusedNamingIt() throws Exception {
    keyed("keyed", "2");
    assertThatThrownBy(() -> run("UPDATE keyed SET id = id + 10 WHERE v = 'b'"))
        .hasStackTraceContaining("sets primary key column 'id'")
        .hasStackTraceContaining("DELETE the row and INSERT it");
    assertThat(table("keyed").snapshots()).hasSize(1);
  }

  @Test
  void aTableWithoutAPrimaryKeyIsRewrittenByUpdateAndDelete() throws Exception {
    // One writer: each file holds every row, so the DELETE below matches no file wholly.
    sql.getConfig().set("parallelism.default", "1");
    sql.executeSql("CREATE TABLE plain (id BIGINT, v STRING)" + with(""));
    run("INSERT INTO plain VALUES (1, 'a'), (2, 'b'), (3, 'c')");
    run("UPDATE plain SET v = 'B' WHERE id = 2");
    run("DELETE FROM plain WHERE id = 3");

    Table table = table("plain");
    assertThat(rows(table, "id", "v")).containsExactly("1,a", "2,B");
    List<Snapshot> snapshots = new ArrayList<>();
    table.snapshots().forEach(snapshots::add);
    assertThat(snapshots).hasSize(3);
    assertThat(snapshots.subList(1, 3))
        .extracting(s -> s.summary().get(SnapshotSummaryKeys.STATEMENT))
        .containsExactly("UPDATE", "DELETE");
    assertThat(snapshots.get(2).summary())
        .containsEntry(SnapshotSummaryKeys.OVERWRITE, "the whole table");
    assertThat(deleteContents(table)).isEmpty();
  }

  /**
   * A connector table declared with TINYINT, SMALLINT and CHAR, which Iceberg holds as int and
   * string: its table is created and written, and reads back the same values.
   */
  @Test
  void smallIntegerAndCharColumnsAreWrittenAsIntAndString() throws Exception {
    sql.executeSql(
        "CREATE TABLE small (id SMALLINT NOT NULL, flag TINYINT, code CHAR(3),"
            + " PRIMARY KEY (id) NOT ENFORCED)"
            + with(""));
    run("INSERT INTO small VALUES (CAST(1 AS SMALLINT), CAST(-7 AS TINYINT), 'abc')");
    run("INSERT INTO small VALUES (CAST(1 AS SMALLINT), CAST(8 AS TINYINT), 'xyz')");
    assertThat(rows(table("small"), "id", "flag", "code")).containsExactly("1,8,xyz");
  }

  @Test
  void aLoadWithAWriteIdIsPublishedOnce() throws Exception {
    keyed("keyed", "2");
    String load =
        "INSERT INTO keyed /*+ OPTIONS('write-id' = 'daily-2026-11-30') */"
            + " VALUES (6, 'f', 60), (7, 'g', 70)";
    run(load);
    run(load);

    Table table = table("keyed");
    assertThat(table.snapshots()).hasSize(2);
    assertThat(table.currentSnapshot().summary())
        .containsEntry(SnapshotSummaryKeys.WRITE_ID, "daily-2026-11-30")
        .containsEntry(SnapshotSummaryKeys.ROWS_INSERTED, "2");
    assertThat(rows(table, "id")).hasSize(7);
  }

  @Test
  void aCatalogTableTakesTheSameStatements() throws Exception {
    lake();
    sql.executeSql(
        "CREATE TABLE lake.db.orders (id BIGINT NOT NULL, status STRING,"
            + " PRIMARY KEY (id) NOT ENFORCED) WITH ('format-version' = '3')");
    run("INSERT INTO lake.db.orders VALUES (1, 'new'), (2, 'new'), (3, 'paid')");
    run("UPDATE lake.db.orders SET status = 'shipped' WHERE status = 'paid'");
    run("DELETE FROM lake.db.orders WHERE id = 1");

    assertThat(select("SELECT id, status FROM lake.db.orders"))
        .containsExactlyInAnyOrder("+I[2, new]", "+I[3, shipped]");
    Table table = table("orders");
    assertThat(table.currentSnapshot().summary())
        .containsEntry(SnapshotSummaryKeys.STATEMENT, "DELETE");
    assertThat(deleteContents(table)).containsOnly(FileContent.POSITION_DELETES);

    // A misspelt hint would change what the write does without a word.
    assertThatThrownBy(
            () ->
                run(
                    "INSERT INTO lake.db.orders /*+ OPTIONS('write_id' = 'daily-1') */"
                        + " VALUES (4, 'new')"))
        .hasStackTraceContaining("unknown option 'write_id'")
        .hasStackTraceContaining("write-id");
    assertThatThrownBy(
            () ->
                run(
                    "INSERT INTO lake.db.orders /*+ OPTIONS('sink.parallelizm' = '2') */"
                        + " VALUES (4, 'new')"))
        .hasStackTraceContaining("unknown option 'sink.parallelizm'");
    run(
        "INSERT INTO lake.db.orders /*+ OPTIONS('write-id' = 'daily-1',"
            + " 'write.parquet.compression-codec' = 'gzip') */ VALUES (4, 'new')");
    assertThat(select("SELECT id FROM lake.db.orders"))
        .containsExactlyInAnyOrder("+I[2]", "+I[3]", "+I[4]");

    // A write id kept as the table's property would make every later load publish nothing: the
    // catalog refuses to set it, and a write refuses a table that holds it (set by another engine).
    assertThatThrownBy(
            () -> sql.executeSql("ALTER TABLE lake.db.orders SET ('write-id' = 'daily-2')").await())
        .hasStackTraceContaining("the property 'write-id' is an option of one write");
    assertThat(table("orders").properties()).doesNotContainKey("write-id");
    table("orders").updateProperties().set("write-id", "daily-2").commit();
    assertThatThrownBy(() -> run("INSERT INTO lake.db.orders VALUES (9, 'new')"))
        .hasStackTraceContaining("holds the property 'write-id' = 'daily-2'");
    assertThat(select("SELECT id FROM lake.db.orders"))
        .containsExactlyInAnyOrder("+I[2]", "+I[3]", "+I[4]");
  }

  @Test
  void optionsThatWouldFailEveryWriteAreRefusedBeforeTheTableIsCreatedOrChanged() throws Exception {
    lake();
    assertThatThrownBy(
            () ->
                sql.executeSql(
                    "CREATE TABLE lake.db.versions (id BIGINT NOT NULL, v STRING,"
                        + " PRIMARY KEY (id) NOT ENFORCED) WITH ('sequence.field' = 'v')"))
        .hasStackTraceContaining(
            "table db.versions: option 'sequence.field' names 'v', a column of type STRING, which"
                + " cannot order changes");
    assertThatThrownBy(
            () ->
                sql.executeSql(
                    "CREATE TABLE lake.db.versions (id BIGINT NOT NULL, v BIGINT,"
                        + " PRIMARY KEY (id) NOT ENFORCED) WITH ('sequence-field' = 'v')"))
        .hasStackTraceContaining("the property 'sequence-field', which is no option of its writes")
        .hasStackTraceContaining("did you mean 'sequence.field'?");
    assertThatThrownBy(
            () ->
                run(
                    "CREATE TABLE lake.db.versions (PRIMARY KEY (id) NOT ENFORCED)"
                        + " WITH ('sequence.field' = 'label') AS SELECT CAST(1 AS BIGINT) AS id,"
                        + " 'a' AS label"))
        .hasStackTraceContaining("names 'label', a column of type CHAR(1) NOT NULL");
    assertThat(sql.executeSql("SHOW TABLES IN lake.db").collect())
        .toIterable()
        .noneMatch(row -> "versions".equals(row.getField(0)));

    sql.executeSql(
            "CREATE TABLE lake.db.versions (id BIGINT NOT NULL, v BIGINT, label STRING,"
                + " PRIMARY KEY (id) NOT ENFORCED) WITH ('sequence.field' = 'v')")
        .await();
    assertThatThrownBy(
            () ->
                sql.executeSql("ALTER TABLE lake.db.versions SET ('sequence.field' = 'label')")
                    .await())
        .hasStackTraceContaining("names 'label', a column of type STRING");
    assertThatThrownBy(
            () -> sql.executeSql("ALTER TABLE lake.db.versions SET ('dedup.tombstone-tl' = '1 d')"))
        .hasStackTraceContaining("'dedup.tombstone-tl', which is no option of its writes");
    assertThat(table("versions").properties())
        .containsEntry("sequence.field", "v")
        .doesNotContainKey("dedup.tombstone-tl");
    // A refused change of a write would go nowhere: SQL writes have no dead-letter output.
    assertThatThrownBy(
            () ->
                run(
                    "INSERT INTO lake.db.versions /*+ OPTIONS('dedup.on-ambiguous-change' ="
                        + " 'DEAD_LETTER') */ VALUES (5, 1, 'a'), (5, 1, 'b')"))
        .hasStackTraceContaining(
            "table db.versions: option 'dedup.on-ambiguous-change' = DEAD_LETTER needs a"
                + " dead-letter output, which SQL writes do not have yet");
    assertThatThrownBy(
            () ->
                sql.executeSql(
                        "ALTER TABLE lake.db.versions SET ('dedup.on-ambiguous-change' ="
                            + " 'DEAD_LETTER')")
                    .await())
        .hasStackTraceContaining("needs a dead-letter output");
    assertThat(select("SELECT id FROM lake.db.versions")).isEmpty();
    // A column change the sequence field would no longer fit is refused.
    assertThatThrownBy(() -> sql.executeSql("ALTER TABLE lake.db.versions DROP v").await())
        .hasStackTraceContaining("names 'v', which the table does not have");
    assertThat(table("versions").schema().findField("v")).isNotNull();
    // A property another engine set does not stop other changes, its own reset among them.
    table("versions").updateProperties().set("dedup.tombstone-tl", "1 d").commit();
    sql.executeSql("ALTER TABLE lake.db.versions SET ('write.parquet.compression-codec' = 'zstd')")
        .await();
    sql.executeSql("ALTER TABLE lake.db.versions RESET ('dedup.tombstone-tl')").await();
    assertThat(table("versions").properties())
        .containsEntry("write.parquet.compression-codec", "zstd")
        .doesNotContainKey("dedup.tombstone-tl");
    run("INSERT INTO lake.db.versions VALUES (1, 2, 'b'), (1, 1, 'a')");
    assertThat(select("SELECT id, v, label FROM lake.db.versions")).containsExactly("+I[1, 2, b]");
  }

  private void lake() {
    sql.executeSql(
        "CREATE CATALOG lake WITH ('type' = 'iceberg-cdc', 'catalog-type' = 'hadoop',"
            + " 'warehouse' = '"
            + dir.resolve("warehouse")
            + "')");
    sql.executeSql("CREATE DATABASE IF NOT EXISTS lake.db");
  }

  @Test
  void anOverwriteByFilterReplacesWhatTheFilterMatchesWhetherOrNotTheInputHasRowsThere()
      throws Exception {
    lake();
    sql.executeSql(
        "CREATE TABLE lake.db.events (id BIGINT, event_ts TIMESTAMP(6), v STRING)"
            + " WITH ('partition-spec' = 'days(event_ts)')");
    run(
        "INSERT INTO lake.db.events VALUES"
            + " (1, TIMESTAMP '2026-01-05 10:00:00', 'old'),"
            + " (2, TIMESTAMP '2026-01-06 10:00:00', 'old'),"
            + " (3, TIMESTAMP '2026-01-07 10:00:00', 'old')");
    String filter = "event_ts >= TIMESTAMP ''2026-01-06 00:00:00''";
    run(
        "INSERT OVERWRITE lake.db.events /*+ OPTIONS('overwrite.filter' = '"
            + filter
            + "') */ VALUES (4, TIMESTAMP '2026-01-06 11:00:00', 'new')");

    Table table = table("events");
    assertThat(rows(table, "id", "v")).containsExactly("1,old", "4,new");
    Snapshot overwrite = table.currentSnapshot();
    assertThat(overwrite.operation()).isEqualTo(DataOperations.OVERWRITE);
    assertThat(overwrite.summary())
        .containsEntry(
            SnapshotSummaryKeys.OVERWRITE,
            "the rows where event_ts >= TIMESTAMP '2026-01-06 00:00:00'")
        .containsEntry("deleted-records", "2")
        .containsEntry("added-records", "1");

    assertThatThrownBy(
            () ->
                run(
                    "INSERT OVERWRITE lake.db.events /*+ OPTIONS('overwrite.filter' = '"
                        + filter
                        + "') */ VALUES (5, TIMESTAMP '2026-01-08 00:00:00', 'in'),"
                        + " (6, TIMESTAMP '2026-01-04 09:30:00', 'out')"))
        .hasStackTraceContaining("got the row (id=6, event_ts=2026-01-04T09:30, v=out)")
        .hasStackTraceContaining("which the filter does not match");
    assertThat(table("events").snapshots()).as("nothing committed").hasSize(2);
  }

  @Test
  void anOverwriteFilterThatSplitsAFileOrIsNotUnderstoodFailsBeforeWriting() throws Exception {
    sql.executeSql("CREATE TABLE plain (id BIGINT, v STRING)" + with(""));
    // One writer: one file holds both rows, which the filter splits.
    sql.getConfig().set("parallelism.default", "1");
    run("INSERT INTO plain VALUES (1, 'a'), (2, 'b')");
    assertThat(files(table("plain"))).hasSize(1);
    assertThatThrownBy(
            () ->
                run(
                    "INSERT OVERWRITE plain /*+ OPTIONS('overwrite.filter' = 'v = ''a''') */"
                        + " VALUES (3, 'a')"))
        .hasStackTraceContaining("matches some but not all rows of data file")
        .hasStackTraceContaining("an overwrite replaces whole files");
    assertThatThrownBy(
            () ->
                run(
                    "INSERT OVERWRITE plain /*+ OPTIONS('overwrite.filter' = 'colour = 1') */"
                        + " VALUES (3, 'a')"))
        .hasStackTraceContaining("the table has no column 'colour'");
    assertThatThrownBy(
            () ->
                run(
                    "INSERT INTO plain /*+ OPTIONS('overwrite.filter' = 'id = 1') */"
                        + " VALUES (3, 'a')"))
        .hasStackTraceContaining("says what an INSERT OVERWRITE replaces; this write is not one");
    assertThat(table("plain").snapshots()).hasSize(1);
  }

  @Test
  void createTableAsSelectSetsTheTablesPropertiesAndSpecBeforeItsFirstLoad() throws Exception {
    lake();
    run(
        "CREATE TABLE lake.db.ctas (PRIMARY KEY (id) NOT ENFORCED) WITH ("
            + " 'partition-spec' = 'bucket(4, id)',"
            + " 'format-version' = '3',"
            + " 'write.parquet.compression-codec' = 'zstd')"
            + " AS SELECT CAST(id AS BIGINT) AS id, v FROM (VALUES (1, 'a'), (2, 'b'), (3, 'c'))"
            + " AS t(id, v)");
    Table table = table("ctas");
    assertThat(rows(table, "id", "v")).containsExactly("1,a", "2,b", "3,c");
    assertThat(table.spec().fields())
        .extracting(f -> f.transform().toString())
        .containsExactly("bucket[4]");
    assertThat(table.schema().identifierFieldNames()).containsExactly("id");
    assertThat(table.properties()).containsEntry("write.parquet.compression-codec", "zstd");
    assertThat(
            ((org.apache.iceberg.HasTableOperations) table).operations().current().formatVersion())
        .isEqualTo(3);
    assertThat(table.snapshots()).hasSize(1);
    assertThat(files(table))
        .allSatisfy(task -> assertThat(parquetCodecs(task.file().location())).containsOnly("ZSTD"));

    run(
        "CREATE OR REPLACE TABLE lake.db.ctas WITH ('partition-spec' = 'bucket(2, id)')"
            + " AS SELECT CAST(7 AS BIGINT) AS id, 'g' AS v");
    Table replaced = table("ctas");
    assertThat(rows(replaced, "id", "v")).containsExactly("7,g");
    assertThat(replaced.spec().fields())
        .extracting(f -> f.transform().toString())
        .containsExactly("bucket[2]");
  }

  private static java.util.Set<String> parquetCodecs(String location) throws Exception {
    java.util.Set<String> codecs = new java.util.HashSet<>();
    try (org.apache.parquet.hadoop.ParquetFileReader reader =
        org.apache.parquet.hadoop.ParquetFileReader.open(
            org.apache.parquet.hadoop.util.HadoopInputFile.fromPath(
                new org.apache.hadoop.fs.Path(location),
                new org.apache.hadoop.conf.Configuration()))) {
      reader
          .getFooter()
          .getBlocks()
          .forEach(b -> b.getColumns().forEach(c -> codecs.add(c.getCodec().name())));
    }
    return codecs;
  }

  /**
   * Files a filter matches wholly by their column statistics, not their partition (an unpartitioned
   * keyed table): an overwrite by filter replaces them, and a DELETE removes them without reading
   * or writing any file.
   */
  @Test
  void wholeFilesByTheirStatisticsAreReplacedAndDeleted() throws Exception {
    lake();
    sql.executeSql(
            "CREATE TABLE lake.db.stats (id BIGINT NOT NULL, v STRING, PRIMARY KEY (id) NOT"
                + " ENFORCED)")
        .await();
    run("INSERT INTO lake.db.stats VALUES (1, 'a'), (2, 'b'), (3, 'c')");
    run("INSERT INTO lake.db.stats VALUES (10, 'x'), (11, 'y'), (12, 'z')");
    run(
        "INSERT OVERWRITE lake.db.stats /*+ OPTIONS('overwrite.filter' = 'id >= 10') */"
            + " VALUES (10, 'x2')");
    assertThat(rows(table("stats"), "id", "v")).containsExactly("1,a", "10,x2", "2,b", "3,c");

    run("INSERT INTO lake.db.stats VALUES (20, 'p'), (21, 'q')");
    run("DELETE FROM lake.db.stats WHERE id >= 20");
    Table table = table("stats");
    assertThat(rows(table, "id", "v")).containsExactly("1,a", "10,x2", "2,b", "3,c");
    assertThat(table.currentSnapshot().operation()).isEqualTo("delete");
    assertThat(table.currentSnapshot().summary())
        .containsEntry(SnapshotSummaryKeys.STATEMENT, "DELETE")
        .doesNotContainKey("added-data-files")
        .doesNotContainKey("added-delete-files");
  }

  @Test
  void anAtomicCreateTableAsSelectCreatesTheTableWithItsRowsOrNothing() throws Exception {
    lake();
    sql.getConfig().set("table.rtas-ctas.atomicity-enabled", "true");
    assertThatThrownBy(
            () ->
                run(
                    "CREATE TABLE lake.db.failed (PRIMARY KEY (id) NOT ENFORCED)"
                        + " WITH ('partition-spec' = 'bucket(4, id)') AS SELECT"
                        + " CAST(id AS BIGINT) AS id, v FROM (VALUES (1, 'a'), (2, 'b'), (1, 'c'))"
                        + " AS t(id, v)"))
        .hasStackTraceContaining("key id=1");
    // Neither the table nor its staging table, nor any file of the load, is left.
    assertThat(tableNames()).isEmpty();
    assertThat(dir.resolve("warehouse/db/failed")).doesNotExist();
    // Options the table would refuse are refused in its name, before a staging table is made.
    assertThatThrownBy(
            () ->
                run(
                    "CREATE TABLE lake.db.misspelt (PRIMARY KEY (id) NOT ENFORCED)"
                        + " WITH ('sequence-field' = 'v') AS SELECT CAST(1 AS BIGINT) AS id,"
                        + " CAST(1 AS BIGINT) AS v"))
        .hasStackTraceContaining("table db.misspelt: the property 'sequence-field'");
    assertThat(tableNames()).isEmpty();

    run(
        "CREATE TABLE lake.db.orders (PRIMARY KEY (id) NOT ENFORCED) WITH ("
            + " 'partition-spec' = 'bucket(4, id)', 'format-version' = '3',"
            + " 'write.parquet.compression-codec' = 'zstd')"
            + " AS SELECT CAST(id AS BIGINT) AS id, v FROM (VALUES (1, 'a'), (2, 'b'), (3, 'c'))"
            + " AS t(id, v)");
    assertThat(tableNames()).containsExactly("orders");
    Table table = table("orders");
    assertThat(rows(table, "id", "v")).containsExactly("1,a", "2,b", "3,c");
    assertThat(table.spec().fields())
        .extracting(f -> f.transform().toString())
        .containsExactly("bucket[4]");
    assertThat(table.schema().identifierFieldNames()).containsExactly("id");
    assertThat(table.properties())
        .containsEntry("write.parquet.compression-codec", "zstd")
        .doesNotContainKey("write.data.path");
    assertThat(
            ((org.apache.iceberg.HasTableOperations) table).operations().current().formatVersion())
        .isEqualTo(3);
    assertThat(table.snapshots()).hasSize(1);
    assertThat(table.currentSnapshot().summary())
        .containsEntry(SnapshotSummaryKeys.ROWS_INSERTED, "3");
    assertThat(files(table))
        .allSatisfy(
            task ->
                assertThat(task.file().location()).startsWith(table.location() + "/data/ctas-"));
    // The table is an ordinary one: its next load upserts through the key index.
    run("INSERT INTO lake.db.orders VALUES (2, 'B'), (4, 'd')");
    assertThat(rows(table("orders"), "id", "v")).containsExactly("1,a", "2,B", "3,c", "4,d");

    // A streaming load never finishes, so its table would never appear: refused, nothing created.
    sql.getConfig().set("execution.runtime-mode", "streaming");
    assertThatThrownBy(
            () ->
                sql.executeSql(
                    "CREATE TABLE lake.db.streamed AS SELECT CAST(1 AS BIGINT) AS id, 'a' AS v"))
        .hasStackTraceContaining("needs batch execution");
    assertThat(tableNames()).containsExactly("orders");
  }

  @Test
  void anAtomicCreateTableAsSelectWhoseTableAppearsMeanwhileFailsAndLeavesIt() throws Exception {
    lake();
    sql.getConfig().set("table.rtas-ctas.atomicity-enabled", "true");
    sql.executeSql(
        "CREATE TEMPORARY TABLE slow (id BIGINT NOT NULL, v STRING) WITH ('connector' ="
            + " 'datagen', 'number-of-rows' = '4', 'rows-per-second' = '1',"
            + " 'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '4')");
    org.apache.flink.table.api.TableResult load =
        sql.executeSql(
            "CREATE TABLE lake.db.raced (PRIMARY KEY (id) NOT ENFORCED) AS SELECT * FROM slow");
    CatalogDefinition.hadoop(dir.resolve("warehouse").toString())
        .loader()
        .loadCatalog()
        .createTable(
            TableIdentifier.of("db", "raced"),
            new org.apache.iceberg.Schema(
                org.apache.iceberg.types.Types.NestedField.required(
                    1, "other", org.apache.iceberg.types.Types.IntegerType.get())));
    assertThatThrownBy(load::await)
        .hasStackTraceContaining(
            "table db.raced was created while its CREATE TABLE AS SELECT ran: the load is dropped");
    assertThat(tableNames()).containsExactly("raced");
    assertThat(table("raced").schema().columns())
        .extracting(c -> c.name())
        .containsExactly("other");
    assertThat(table("raced").snapshots()).isEmpty();
    // The load's files, written under the table's data location, are gone with its staging table.
    Path data = dir.resolve("warehouse/db/raced/data");
    if (java.nio.file.Files.exists(data)) {
      try (java.util.stream.Stream<Path> files = java.nio.file.Files.walk(data)) {
        assertThat(files.filter(java.nio.file.Files::isRegularFile)).isEmpty();
      }
    }
  }

  private java.util.Set<String> tableNames() {
    java.util.Set<String> names = new java.util.TreeSet<>();
    sql.executeSql("SHOW TABLES IN lake.db")
        .collect()
        .forEachRemaining(row -> names.add((String) row.getField(0)));
    return names;
  }

  @Test
  void aCreateTableAsSelectWhoseLoadFailsLeavesTheTableEmpty() throws Exception {
    lake();
    assertThatThrownBy(
            () ->
                run(
                    "CREATE TABLE lake.db.failed (PRIMARY KEY (id) NOT ENFORCED) AS SELECT"
                        + " CAST(id AS BIGINT) AS id, v FROM (VALUES (1, 'a'), (1, 'b')) AS t(id, v)"))
        .hasStackTraceContaining("key id=1");
    Table table = table("failed");
    assertThat(table.snapshots()).isEmpty();
  }

  @Test
  void aFilteredOverwriteOfAKeyedTableWithGzipLevelSix() throws Exception {
    lake();
    run(
        "CREATE TABLE lake.db.sales (id BIGINT NOT NULL, region STRING, amount INT,"
            + " sale_date DATE NOT NULL, PRIMARY KEY (id, sale_date) NOT ENFORCED)"
            + " WITH ('partition-spec' = 'days(sale_date)', 'format-version' = '3',"
            + " 'write.parquet.compression-codec' = 'zstd')");
    run(
        "INSERT INTO lake.db.sales VALUES (1, 'north', 1, DATE '2026-01-01'),"
            + " (2, 'south', 2, DATE '2026-01-04'), (3, 'south', 3, DATE '2026-01-05')");
    run(
        "INSERT OVERWRITE lake.db.sales /*+ OPTIONS('overwrite.filter' ="
            + " 'sale_date >= DATE ''2026-01-04''', 'compression' = 'gzip',"
            + " 'compression-level' = '6') */ VALUES (5000, 'east', 7, DATE '2026-01-04')");
    Table table = table("sales");
    assertThat(rows(table, "id", "region")).containsExactly("1,north", "5000,east");
    // A filter on a column outside the key would leave a key's row outside it beside its new row.
    assertThatThrownBy(
            () ->
                run(
                    "INSERT OVERWRITE lake.db.sales /*+ OPTIONS('overwrite.filter' ="
                        + " 'region = ''east''') */ VALUES (1, 'east', 9, DATE '2026-01-01')"))
        .hasStackTraceContaining("names columns [region] outside its primary key");
    assertThat(rows(table("sales"), "id", "region")).containsExactly("1,north", "5000,east");
  }

  private List<String> select(String query) throws Exception {
    List<String> rows = new ArrayList<>();
    try (CloseableIterator<Row> it = sql.executeSql(query).collect()) {
      it.forEachRemaining(r -> rows.add(r.toString()));
    }
    return rows;
  }

  private Table table(String name) {
    return CatalogDefinition.hadoop(dir.resolve("warehouse").toString())
        .loader()
        .loadCatalog()
        .loadTable(TableIdentifier.of("db", name));
  }

  private static List<FileScanTask> files(Table table) throws Exception {
    List<FileScanTask> tasks = new ArrayList<>();
    try (CloseableIterable<FileScanTask> planned = table.newScan().planFiles()) {
      planned.forEach(tasks::add);
    }
    return tasks;
  }

  /** The content of every delete file the table's current snapshot applies. */
  private static List<FileContent> deleteContents(Table table) throws Exception {
    List<FileContent> contents = new ArrayList<>();
    for (FileScanTask task : files(table)) {
      task.deletes().forEach(d -> contents.add(d.content()));
    }
    return contents;
  }

  private static List<String> rows(Table table, String... columns) throws Exception {
    List<String> rows = new ArrayList<>();
    try (CloseableIterable<Record> records = IcebergGenerics.read(table).build()) {
      for (Record r : records) {
        StringBuilder row = new StringBuilder();
        for (String column : columns) {
          row.append(row.length() == 0 ? "" : ",").append(r.getField(column));
        }
        rows.add(row.toString());
      }
    }
    Collections.sort(rows);
    return rows;
  }
}
