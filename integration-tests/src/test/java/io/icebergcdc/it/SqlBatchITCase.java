package io.icebergcdc.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.icebergcdc.commit.SnapshotSummaryKeys;
import io.icebergcdc.sink.CatalogDefinition;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.api.common.RuntimeExecutionMode;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.table.connector.ChangelogMode;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.types.Row;
import org.apache.flink.types.RowKind;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.DataOperations;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.metadata.BlockMetaData;
import org.apache.parquet.hadoop.util.HadoopInputFile;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Batch loads through the {@code iceberg-cdc} connector ({@code execution.runtime-mode = batch}):
 * {@code INSERT INTO} appends, {@code INSERT OVERWRITE} replaces the partitions in its input, a
 * static partition or the whole table and refuses an empty input, and a bounded changelog with a
 * primary key is merged as one snapshot; the write options and their validation.
 */
class SqlBatchITCase {

  @RegisterExtension
  static final MiniClusterExtension FLINK =
      new MiniClusterExtension(
          new MiniClusterResourceConfiguration.Builder()
              .setNumberTaskManagers(1)
              .setNumberSlotsPerTaskManager(4)
              .build());

  @TempDir Path dir;
  private StreamExecutionEnvironment env;
  private StreamTableEnvironment sql;

  @BeforeEach
  void batchEnvironment() {
    env = StreamExecutionEnvironment.getExecutionEnvironment();
    env.setRuntimeMode(RuntimeExecutionMode.BATCH);
    env.setParallelism(2);
    sql = StreamTableEnvironment.create(env);
  }

  /** A view of {@code count} rows (id, v, day) with ids from 1, spread over four days. */
  /**
   * Rows spread round-robin over both writers, each writer getting every day: the sequence source
   * alone may hand both of its splits to one reader, and round-robin over {@code i % 4} would give
   * each writer only two days.
   */
  private void generated(String view, long count) {
    sql.createTemporaryView(
        view,
        sql.fromDataStream(
            env.fromSequence(1, count)
                .rebalance()
                .map(i -> Row.of(i, "value " + i, DAYS[(int) ((i / 2) % DAYS.length)]))
                .returns(
                    Types.ROW_NAMED(
                        new String[] {"id", "v", "day"}, Types.LONG, Types.STRING, Types.STRING))));
  }

  private static final String[] DAYS = {"mon", "tue", "wed", "thu"};

  private static final String NO_ROWS =
      "SELECT * FROM (VALUES (CAST(0 AS BIGINT), 'x', 'tue')) AS t(id, v, `day`) WHERE id < 0";

  private String with(String extra) {
    return " WITH ('connector' = 'iceberg-cdc', 'warehouse' = '"
        + dir.resolve("warehouse")
        + "', 'database-name' = 'db'"
        + extra
        + ")";
  }

  /** An append-only table partitioned by day. */
  private void createEvents(String extra) {
    sql.executeSql(
        "CREATE TABLE events (id BIGINT, v STRING, `day` STRING) PARTITIONED BY (`day`)"
            + with(extra));
  }

  private void run(String statement) throws Exception {
    sql.executeSql(statement).await();
  }

  @Test
  void insertIntoAppendsAndEachLoadIsOneAppendSnapshot() throws Exception {
    createEvents("");
    run("INSERT INTO events VALUES (1, 'a', 'mon'), (2, 'b', 'tue'), (3, 'c', 'tue')");
    run("INSERT INTO events VALUES (4, 'd', 'mon')");

    Table table = table("events");
    assertThat(rows(table, "id", "v", "day"))
        .containsExactly("1,a,mon", "2,b,tue", "3,c,tue", "4,d,mon");
    List<Snapshot> snapshots = snapshots(table);
    assertThat(snapshots).extracting(Snapshot::operation).containsOnly(DataOperations.APPEND);
    assertThat(snapshots)
        .extracting(s -> s.summary().get("added-records"))
        .containsExactly("3", "1");
    assertThat(snapshots)
        .extracting(s -> s.summary().get(SnapshotSummaryKeys.ROWS_INSERTED))
        .containsExactly("3", "1");
  }

  @Test
  void insertOverwriteReplacesThePartitionsInItsInputOnly() throws Exception {
    createEvents("");
    run("INSERT INTO events VALUES (1, 'a', 'mon'), (2, 'b', 'tue'), (3, 'c', 'tue')");
    run("INSERT OVERWRITE events VALUES (5, 'e', 'tue'), (6, 'f', 'wed')");

    Table table = table("events");
    assertThat(rows(table, "id", "v", "day")).containsExactly("1,a,mon", "5,e,tue", "6,f,wed");
    Snapshot overwrite = table.currentSnapshot();
    assertThat(overwrite.operation()).isEqualTo(DataOperations.OVERWRITE);
    assertThat(overwrite.summary())
        .containsEntry("added-records", "2")
        .containsEntry("deleted-records", "2")
        .containsEntry(SnapshotSummaryKeys.ROWS_INSERTED, "2")
        .containsEntry(SnapshotSummaryKeys.OVERWRITE, "the partitions the input has rows in");
  }

  @Test
  void insertOverwriteOfAStaticPartitionReplacesThatPartition() throws Exception {
    createEvents("");
    run("INSERT INTO events VALUES (1, 'a', 'mon'), (2, 'b', 'tue'), (3, 'c', 'tue')");
    run("INSERT OVERWRITE events PARTITION (`day` = 'tue') SELECT 7, 'g'");

    Table table = table("events");
    assertThat(rows(table, "id", "v", "day")).containsExactly("1,a,mon", "7,g,tue");
    assertThat(table.currentSnapshot().operation()).isEqualTo(DataOperations.OVERWRITE);
    assertThat(table.currentSnapshot().summary())
        .containsEntry("deleted-records", "2")
        .containsEntry(SnapshotSummaryKeys.OVERWRITE, "partition (day=tue)");
  }

  @Test
  void anOverwriteOfATableWithAPrimaryKeyReplacesItAndCountsEachRowOnce() throws Exception {
    sql.executeSql(
        "CREATE TABLE keyed (id BIGINT NOT NULL, v STRING, PRIMARY KEY (id) NOT ENFORCED)"
            + with(""));
    run("INSERT INTO keyed VALUES (1, 'a'), (2, 'b'), (3, 'c')");
    run("INSERT OVERWRITE keyed VALUES (2, 'b2'), (4, 'd'), (4, 'd')");

    Table table = table("keyed");
    assertThat(rows(table, "id", "v")).containsExactly("2,b2", "4,d");
    assertThat(table.currentSnapshot().summary())
        .containsEntry("deleted-records", "3")
        .containsEntry("added-records", "2")
        .containsEntry(SnapshotSummaryKeys.ROWS_INSERTED, "2")
        .containsEntry(SnapshotSummaryKeys.DUPLICATES_DROPPED, "1");
  }

  @Test
  void aStaticPartitionOfAnIntegerColumnIsReplaced() throws Exception {
    sql.executeSql(
        "CREATE TABLE scores (id BIGINT, score INT, shard INT) PARTITIONED BY (shard)" + with(""));
    run("INSERT INTO scores VALUES (1, 10, 1), (2, 20, 2), (3, 30, 2)");
    run("INSERT OVERWRITE scores PARTITION (shard = 2) SELECT CAST(4 AS BIGINT), 40");

    assertThat(rows(table("scores"), "id", "score", "shard")).containsExactly("1,10,1", "4,40,2");
  }

  @Test
  void aStatementSetWritesSeveralTablesOfTheConnector() throws Exception {
    createEvents("");
    sql.executeSql("CREATE TABLE plain (id BIGINT, v STRING)" + with(""));
    org.apache.flink.table.api.StatementSet statements = sql.createStatementSet();
    statements.addInsertSql("INSERT INTO events VALUES (1, 'a', 'mon')");
    statements.addInsertSql("INSERT INTO plain VALUES (2, 'b')");
    statements.execute().await();

    assertThat(rows(table("events"), "id", "v", "day")).containsExactly("1,a,mon");
    assertThat(rows(table("plain"), "id", "v")).containsExactly("2,b");
  }

  @Test
  void anOverwriteWithAnEmptyInputFailsAndChangesNothingUnlessAllowed() throws Exception {
    createEvents("");
    run("INSERT INTO events VALUES (1, 'a', 'mon'), (2, 'b', 'tue')");
    Table table = table("events");
    long before = table.currentSnapshot().snapshotId();

    assertThatThrownBy(() -> run("INSERT OVERWRITE events " + NO_ROWS))
        .hasStackTraceContaining("the overwrite of the partitions the input has rows in of table")
        .hasStackTraceContaining("read no rows")
        .hasStackTraceContaining("'sink.overwrite.allow-empty-input' = 'true'");
    assertThatThrownBy(
            () ->
                run(
                    "INSERT OVERWRITE events PARTITION (`day` = 'tue') SELECT id, v FROM ("
                        + NO_ROWS
                        + ")"))
        .hasStackTraceContaining("would delete every row of partition (day=tue)");
    table.refresh();
    assertThat(table.currentSnapshot().snapshotId()).isEqualTo(before);

    // Allowed: a static partition is emptied; a dynamic overwrite has nothing to replace.
    String allow = " /*+ OPTIONS('sink.overwrite.allow-empty-input' = 'true') */";
    run(
        "INSERT OVERWRITE events"
            + allow
            + " PARTITION (`day` = 'tue') SELECT id, v FROM ("
            + NO_ROWS
            + ")");
    run("INSERT OVERWRITE events" + allow + " " + NO_ROWS);
    table.refresh();
    assertThat(rows(table, "id", "v", "day")).containsExactly("1,a,mon");
    assertThat(snapshots(table)).hasSize(2);
    assertThat(table.currentSnapshot().operation()).isEqualTo(DataOperations.DELETE);
  }

  @Test
  void insertOverwriteOfAnUnpartitionedTableReplacesItAll() throws Exception {
    sql.executeSql("CREATE TABLE plain (id BIGINT, v STRING)" + with(""));
    run("INSERT INTO plain VALUES (1, 'a'), (2, 'b')");
    run("INSERT OVERWRITE plain VALUES (3, 'c')");

    Table table = table("plain");
    assertThat(rows(table, "id", "v")).containsExactly("3,c");
    assertThat(table.currentSnapshot().summary())
        .containsEntry("deleted-records", "2")
        .containsEntry("added-records", "1")
        .containsEntry(SnapshotSummaryKeys.OVERWRITE, "the whole table");
  }

  @Test
  void aBatchLoadIntoATableWithAPrimaryKeyIsMergedAsOneSnapshot() throws Exception {
    sql.executeSql(
        "CREATE TABLE accounts (id BIGINT NOT NULL, balance BIGINT, seq BIGINT,"
            + " PRIMARY KEY (id) NOT ENFORCED)"
            + with(", 'sequence.field' = 'seq', 'format-version' = '3'"));
    run("INSERT INTO accounts VALUES (1, 100, 1), (2, 200, 1), (3, 300, 1)");
    // Key 1 three times, in no order: the sequence picks the latest, the older one is stale
    // and the repeat a duplicate; key 4 is new.
    run("INSERT INTO accounts VALUES (1, 150, 3), (4, 400, 2), (1, 120, 2), (1, 150, 3)");

    Table table = table("accounts");
    assertThat(rows(table, "id", "balance", "seq"))
        .containsExactly("1,150,3", "2,200,1", "3,300,1", "4,400,2");
    assertThat(snapshots(table)).hasSize(2);
    Snapshot merge = table.currentSnapshot();
    assertThat(merge.operation()).isEqualTo(DataOperations.OVERWRITE);
    assertThat(merge.summary())
        .containsEntry(SnapshotSummaryKeys.ROWS_INSERTED, "1")
        .containsEntry(SnapshotSummaryKeys.ROWS_UPDATED, "1")
        .containsEntry(SnapshotSummaryKeys.DELETES_FELL_BACK, "0")
        .containsEntry("added-dvs", "1")
        .containsEntry("added-position-deletes", "1")
        .doesNotContainKey("added-equality-delete-files");
  }

  /**
   * The same load in equality mode: the second load's writer does not know the table's keys, so it
   * deletes both of its keys by key, the update's and the new key's (and counts both as inserts: it
   * cannot tell a key it never met from a new one).
   */
  @Test
  void aBatchLoadInEqualityModeDeletesByKey() throws Exception {
    sql.executeSql(
        "CREATE TABLE accounts (id BIGINT NOT NULL, balance BIGINT, seq BIGINT,"
            + " PRIMARY KEY (id) NOT ENFORCED)"
            + with(", 'sequence.field' = 'seq', 'sink.delete-mode' = 'EQUALITY'"));
    run("INSERT INTO accounts VALUES (1, 100, 1), (2, 200, 1), (3, 300, 1)");
    run("INSERT INTO accounts VALUES (1, 150, 3), (4, 400, 2), (1, 120, 2), (1, 150, 3)");

    Table table = table("accounts");
    assertThat(rows(table, "id", "balance", "seq"))
        .containsExactly("1,150,3", "2,200,1", "3,300,1", "4,400,2");
    assertThat(snapshots(table)).hasSize(2);
    assertThat(snapshots(table).get(0).summary()).doesNotContainKey("added-equality-delete-files");
    assertThat(table.currentSnapshot().summary())
        .containsEntry(SnapshotSummaryKeys.ROWS_INSERTED, "2")
        .containsEntry(SnapshotSummaryKeys.ROWS_UPDATED, "0")
        .containsEntry(SnapshotSummaryKeys.DELETES_FELL_BACK, "0")
        .containsEntry("added-equality-deletes", "2")
        .doesNotContainKey("added-position-deletes");
  }

  @Test
  void aBoundedChangelogWithoutCheckpointsIsMergedAsOneSnapshot() throws Exception {
    // Batch execution reads insert-only sources only; a bounded changelog with deletes runs in
    // streaming execution, and without checkpoints its end commits it whole.
    StreamExecutionEnvironment streaming = StreamExecutionEnvironment.getExecutionEnvironment();
    streaming.setParallelism(2);
    StreamTableEnvironment changelog = StreamTableEnvironment.create(streaming);
    changelog.executeSql(
        "CREATE TABLE accounts (id BIGINT NOT NULL, balance BIGINT, seq BIGINT,"
            + " PRIMARY KEY (id) NOT ENFORCED)"
            + with(", 'sequence.field' = 'seq'"));
    changelog
        .executeSql("INSERT INTO accounts VALUES (1, 100, 1), (2, 200, 1), (3, 300, 1)")
        .await();
    changelog.createTemporaryView(
        "changes",
        changelog.fromChangelogStream(
            streaming
                .fromData(
                    Row.ofKind(RowKind.UPDATE_AFTER, 1L, 150L, 3L),
                    Row.ofKind(RowKind.DELETE, 2L, 200L, 2L),
                    Row.ofKind(RowKind.INSERT, 4L, 400L, 2L),
                    Row.ofKind(RowKind.UPDATE_AFTER, 1L, 120L, 2L),
                    Row.ofKind(RowKind.UPDATE_AFTER, 1L, 150L, 3L))
                .returns(
                    Types.ROW_NAMED(
                        new String[] {"id", "balance", "seq"}, Types.LONG, Types.LONG, Types.LONG)),
            org.apache.flink.table.api.Schema.newBuilder()
                .column("id", "BIGINT NOT NULL")
                .column("balance", "BIGINT")
                .column("seq", "BIGINT")
                .primaryKey("id")
                .build(),
            ChangelogMode.upsert()));
    changelog.executeSql("INSERT INTO accounts SELECT * FROM changes").await();

    Table table = table("accounts");
    assertThat(rows(table, "id", "balance", "seq"))
        .containsExactly("1,150,3", "3,300,1", "4,400,2");
    assertThat(snapshots(table)).hasSize(2);
    Snapshot merge = table.currentSnapshot();
    assertThat(merge.operation()).isEqualTo(DataOperations.OVERWRITE);
    assertThat(merge.summary())
        .containsEntry(SnapshotSummaryKeys.ROWS_INSERTED, "1")
        .containsEntry(SnapshotSummaryKeys.ROWS_UPDATED, "1")
        .containsEntry(SnapshotSummaryKeys.ROWS_DELETED, "1")
        .containsEntry(SnapshotSummaryKeys.DELETES_FELL_BACK, "0")
        .doesNotContainKey("added-equality-delete-files");
    // The planner normalizes an upsert source by key and drops some repeats itself; the rest
    // are dropped by sequence.
    assertThat(
            Long.parseLong(merge.summary().get(SnapshotSummaryKeys.DUPLICATES_DROPPED))
                + Long.parseLong(merge.summary().get(SnapshotSummaryKeys.STALE_DROPPED)))
        .isPositive();
  }

  @Test
  void twoDifferentRowsForOneKeyWithoutASequenceFailTheLoad() throws Exception {
    sql.executeSql(
        "CREATE TABLE users (id BIGINT NOT NULL, name STRING, PRIMARY KEY (id) NOT ENFORCED)"
            + with(""));
    // The same row twice is a duplicate, dropped and counted.
    run("INSERT INTO users VALUES (1, 'ann'), (2, 'bob'), (1, 'ann')");
    Table table = table("users");
    assertThat(rows(table, "id", "name")).containsExactly("1,ann", "2,bob");
    assertThat(table.currentSnapshot().summary())
        .containsEntry(SnapshotSummaryKeys.DUPLICATES_DROPPED, "1");

    assertThatThrownBy(() -> run("INSERT INTO users VALUES (3, 'cy'), (1, 'ann'), (1, 'anne')"))
        .hasStackTraceContaining("key id=1")
        .hasStackTraceContaining(
            "two different changes in a bounded input without a sequence to order them");
    table.refresh();
    assertThat(snapshots(table)).hasSize(1);
  }

  @Test
  void onlyDeletesCommitAsADeleteSnapshot() throws Exception {
    StreamExecutionEnvironment streaming = StreamExecutionEnvironment.getExecutionEnvironment();
    StreamTableEnvironment changelog = StreamTableEnvironment.create(streaming);
    changelog.executeSql(
        "CREATE TABLE gone (id BIGINT NOT NULL, name STRING, PRIMARY KEY (id) NOT ENFORCED)"
            + with(""));
    changelog.executeSql("INSERT INTO gone VALUES (1, 'a'), (2, 'b')").await();
    changelog.createTemporaryView(
        "deletes",
        changelog.fromChangelogStream(
            streaming
                .fromData(Row.ofKind(RowKind.DELETE, 1L, "a"))
                .returns(Types.ROW_NAMED(new String[] {"id", "name"}, Types.LONG, Types.STRING)),
            org.apache.flink.table.api.Schema.newBuilder()
                .column("id", "BIGINT NOT NULL")
                .column("name", "STRING")
                .primaryKey("id")
                .build(),
            ChangelogMode.upsert()));
    changelog.executeSql("INSERT INTO gone SELECT * FROM deletes").await();

    Table table = table("gone");
    assertThat(rows(table, "id", "name")).containsExactly("2,b");
    assertThat(table.currentSnapshot().operation()).isEqualTo(DataOperations.DELETE);
    assertThat(table.currentSnapshot().summary())
        .containsEntry(SnapshotSummaryKeys.ROWS_DELETED, "1");
  }

  @Test
  void aHintsWriteOptionsHoldForThatWriteOnly() throws Exception {
    createEvents("");
    generated("many", 20_000);
    run(
        "INSERT INTO events /*+ OPTIONS('compression' = 'gzip',"
            + " 'write.parquet.row-group-size-bytes' = '65536') */ SELECT * FROM many");
    Table table = table("events");
    List<String> codecs = new ArrayList<>();
    int rowGroups = 0;
    for (FileScanTask task : table.newScan().planFiles()) {
      try (ParquetFileReader reader =
          ParquetFileReader.open(
              HadoopInputFile.fromPath(
                  new org.apache.hadoop.fs.Path(task.file().location()), new Configuration()))) {
        for (BlockMetaData block : reader.getFooter().getBlocks()) {
          codecs.add(block.getColumns().get(0).getCodec().name());
          rowGroups++;
        }
      }
    }
    assertThat(codecs).containsOnly("GZIP");
    assertThat(rowGroups).as("row groups of at most 64 KiB").isGreaterThan(2);
    assertThat(table.properties())
        .containsEntry("write.parquet.compression-codec", "zstd")
        .doesNotContainKey("write.parquet.row-group-size-bytes");
  }

  /**
   * The guide's write-options example: a gzip level on an overwrite of a table Iceberg writes with
   * zstd (its default codec), which Iceberg's own writer fails on.
   */
  @Test
  void aGzipLevelInAHintIsWritten() throws Exception {
    createEvents("");
    run("INSERT INTO events VALUES (1, 'a', 'mon'), (2, 'b', 'tue')");
    run(
        "INSERT OVERWRITE events /*+ OPTIONS('compression' = 'gzip', 'compression-level' = '6')"
            + " */ VALUES (3, 'c', 'tue')");
    Table table = table("events");
    assertThat(rows(table, "id", "v", "day")).containsExactly("1,a,mon", "3,c,tue");
    List<String> codecs = new ArrayList<>();
    for (FileScanTask task : table.newScan().planFiles()) {
      try (ParquetFileReader reader =
          ParquetFileReader.open(
              HadoopInputFile.fromPath(
                  new org.apache.hadoop.fs.Path(task.file().location()), new Configuration()))) {
        codecs.add(reader.getFooter().getBlocks().get(0).getColumns().get(0).getCodec().name());
      }
    }
    assertThat(codecs).containsExactlyInAnyOrder("ZSTD", "GZIP");
  }

  @Test
  void truncateRemovesEveryRowInOneMetadataOnlySnapshot() throws Exception {
    // TRUNCATE needs a table environment made in batch mode, not one over a batch environment.
    sql =
        StreamTableEnvironment.create(
            env, org.apache.flink.table.api.EnvironmentSettings.inBatchMode());
    sql.executeSql(
        "CREATE TABLE keyed (id BIGINT NOT NULL, v STRING, PRIMARY KEY (id) NOT ENFORCED)"
            + with(""));
    run("INSERT INTO keyed VALUES (1, 'a'), (2, 'b')");
    run("INSERT INTO keyed VALUES (2, 'b2'), (3, 'c')");
    run("TRUNCATE TABLE keyed");

    Table table = table("keyed");
    assertThat(rows(table, "id", "v")).isEmpty();
    Snapshot truncate = table.currentSnapshot();
    assertThat(truncate.operation()).isEqualTo(DataOperations.DELETE);
    assertThat(truncate.summary())
        .containsEntry(SnapshotSummaryKeys.TRUNCATE, "true")
        .containsEntry("total-data-files", "0")
        .containsEntry("total-delete-files", "0");
    assertThat(table.newScan().planFiles()).isEmpty();
    run("INSERT INTO keyed VALUES (4, 'd')");
    assertThat(rows(table("keyed"), "id", "v")).containsExactly("4,d");
  }

  @Test
  void hashDistributionWritesEachPartitionFromOneWriter() throws Exception {
    createEvents(", 'write.distribution-mode' = 'hash'");
    generated("few", 400);
    run("INSERT INTO events SELECT * FROM few");
    sql.executeSql(
        "CREATE TABLE spread (id BIGINT, v STRING, `day` STRING) PARTITIONED BY (`day`)"
            + with(""));
    run("INSERT INTO spread SELECT * FROM few");

    assertThat(table("spread").currentSnapshot().summary())
        .as("without hash distribution both writers write every day")
        .containsEntry("added-data-files", "8");
    Table table = table("events");
    assertThat(table.currentSnapshot().summary())
        .containsEntry("added-data-files", "4")
        .containsEntry("added-records", "400");
  }

  @Test
  void invalidWriteOptionsFailNamingTheOption() {
    createEvents(", 'write.distribution-mode' = 'range'");
    assertThatThrownBy(() -> run("INSERT INTO events VALUES (1, 'a', 'mon')"))
        .hasStackTraceContaining("'write.distribution-mode' is 'range'");
    assertThatThrownBy(
            () ->
                run(
                    "INSERT INTO events /*+ OPTIONS('write.distribution-mode' = 'none',"
                        + " 'write.parquet.page-size' = '10') */ VALUES (1, 'a', 'mon')"))
        .hasStackTraceContaining("unknown write property 'write.parquet.page-size'");
    assertThatThrownBy(
            () ->
                run(
                    "INSERT INTO events /*+ OPTIONS('write.distribution-mode' = 'none',"
                        + " 'write.parquet.page-row-limit' = '0') */ VALUES (1, 'a', 'mon')"))
        .hasStackTraceContaining("'write.parquet.page-row-limit' must be a whole number from 1");
    assertThatThrownBy(
            () ->
                run(
                    "INSERT INTO events /*+ OPTIONS('write.distribution-mode' = 'none',"
                        + " 'compression' = 'zstd', 'write.parquet.compression-codec' = 'gzip')"
                        + " */ VALUES (1, 'a', 'mon')"))
        .hasStackTraceContaining("is given twice");
  }

  private Table table(String name) {
    return CatalogDefinition.hadoop(dir.resolve("warehouse").toString())
        .loader()
        .loadCatalog()
        .loadTable(TableIdentifier.of("db", name));
  }

  private static List<Snapshot> snapshots(Table table) {
    List<Snapshot> all = new ArrayList<>();
    table.snapshots().forEach(all::add);
    return all;
  }

  /** The rows, as comma-joined values of the given columns, sorted; duplicates kept. */
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
    java.util.Collections.sort(rows);
    return rows;
  }
}
