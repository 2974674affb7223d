package io.icebergcdc.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.icebergcdc.commit.SnapshotSummaryKeys;
import io.icebergcdc.sink.CatalogDefinition;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.apache.flink.api.common.RuntimeExecutionMode;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.types.Row;
import org.apache.flink.util.CloseableIterator;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.FileContent;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.util.HadoopInputFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code CREATE CATALOG ... WITH ('type' = 'iceberg-cdc', ...)}: databases and tables of an Iceberg
 * catalog with no DDL of their own, written through this project's sink and read back with {@code
 * SELECT} through Iceberg's Flink source, on a Hadoop catalog and on the REST catalog server with
 * its tables on S3Proxy.
 */
class SqlCatalogITCase {

  @RegisterExtension
  static final MiniClusterExtension FLINK =
      new MiniClusterExtension(
          new MiniClusterResourceConfiguration.Builder()
              .setNumberTaskManagers(1)
              .setNumberSlotsPerTaskManager(8)
              .build());

  @TempDir Path dir;

  private static StreamTableEnvironment batch() {
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
    env.setRuntimeMode(RuntimeExecutionMode.BATCH);
    env.setParallelism(2);
    return StreamTableEnvironment.create(env);
  }

  private static void run(StreamTableEnvironment sql, String statement) throws Exception {
    sql.executeSql(statement).await();
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

  /** Creates a keyed table, merges two loads into it (the second with a hint), reads it back. */
  private static void mergeTwoLoadsAndReadThemBack(StreamTableEnvironment sql) throws Exception {
    run(sql, "CREATE DATABASE IF NOT EXISTS shop");
    run(
        sql,
        "CREATE TABLE shop.customers (id BIGINT NOT NULL, name STRING,"
            + " PRIMARY KEY (id) NOT ENFORCED)"
            + " WITH ('format-version' = '2', 'write.parquet.compression-codec' = 'zstd')");
    assertThat(select(sql, "SHOW TABLES IN shop")).containsExactly("customers");
    run(sql, "INSERT INTO shop.customers VALUES (1, 'a'), (2, 'b')");
    run(
        sql,
        "INSERT INTO shop.customers /*+ OPTIONS('compression' = 'gzip') */"
            + " VALUES (2, 'b2'), (3, 'c')");
    assertThat(select(sql, "SELECT id, name FROM shop.customers"))
        .containsExactly("1,a", "2,b2", "3,c");
    // The checks after a load, in SQL: what each commit did, and the files.
    assertThat(
            select(
                sql,
                "SELECT operation, summary['iceberg-cdc.rows-inserted'],"
                    + " summary['iceberg-cdc.rows-updated'] FROM shop.`customers$snapshots`"))
        .containsExactlyInAnyOrder("append,2,0", "overwrite,1,1");
    assertThat(select(sql, "SELECT content, record_count FROM shop.`customers$files`"))
        .contains("0,2");
  }

  @Test
  void aHadoopCatalogsTablesAreWrittenByOurSinkAndReadBySelect() throws Exception {
    StreamTableEnvironment sql = batch();
    String warehouse = dir.resolve("warehouse").toString();
    // A catalog property of the kind that holds a secret.
    run(
        sql,
        "CREATE CATALOG lake WITH ('type' = 'iceberg-cdc', 'warehouse' = '"
            + warehouse
            + "', 'catalog.s3.secret-access-key' = 'hush-hush')");
    run(sql, "USE CATALOG lake");
    mergeTwoLoadsAndReadThemBack(sql);
    // Iceberg's catalog gives its tables a copy of the catalog's options; not this one's.
    assertThat(select(sql, "SHOW CREATE TABLE shop.customers"))
        .singleElement()
        .asString()
        .doesNotContain("hush-hush")
        .doesNotContain("src-catalog");

    Table table =
        CatalogDefinition.hadoop(warehouse)
            .connect()
            .loadTable(TableIdentifier.of("shop", "customers"));
    // The merge: one row updated by a position delete, not an equality delete.
    assertThat(table.currentSnapshot().summary())
        .containsEntry(SnapshotSummaryKeys.ROWS_UPDATED, "1")
        .containsEntry(SnapshotSummaryKeys.ROWS_INSERTED, "1");
    List<String> codecs = new ArrayList<>();
    for (FileScanTask task : table.newScan().planFiles()) {
      assertThat(task.deletes()).allMatch(d -> d.content() == FileContent.POSITION_DELETES);
      try (ParquetFileReader reader =
          ParquetFileReader.open(
              HadoopInputFile.fromPath(
                  new org.apache.hadoop.fs.Path(task.file().location()), new Configuration()))) {
        codecs.add(reader.getFooter().getBlocks().get(0).getColumns().get(0).getCodec().name());
      }
    }
    assertThat(codecs)
        .as("the hint's codec for its write only")
        .containsExactlyInAnyOrder("ZSTD", "GZIP");
    assertThat(table.properties()).containsEntry("write.parquet.compression-codec", "zstd");

    // Partition transforms, which PARTITIONED BY cannot say.
    run(
        sql,
        "CREATE TABLE shop.orders (id BIGINT NOT NULL, total INT, PRIMARY KEY (id) NOT ENFORCED)"
            + " WITH ('partition-spec' = 'bucket(4, id)')");
    run(sql, "INSERT INTO shop.orders VALUES (1, 10), (2, 20), (3, 30)");
    run(sql, "INSERT INTO shop.orders VALUES (2, 21)");
    assertThat(select(sql, "SELECT id, total FROM shop.orders"))
        .containsExactly("1,10", "2,21", "3,30");
    Table orders =
        CatalogDefinition.hadoop(warehouse)
            .connect()
            .loadTable(TableIdentifier.of("shop", "orders"));
    assertThat(orders.spec().fields())
        .extracting(f -> f.transform().toString())
        .containsExactly("bucket[4]");
    assertThat(orders.properties()).doesNotContainKey("partition-spec");

    // A table created like another, with partition transforms: its properties hold none of the
    // options Iceberg's catalog gives a table for its own connector, so it can be read.
    run(
        sql,
        "CREATE TABLE shop.orders_copy WITH ('partition-spec' = 'bucket(2, id)') LIKE shop.orders");
    run(sql, "INSERT INTO shop.orders_copy VALUES (7, 70)");
    assertThat(select(sql, "SELECT id, total FROM shop.orders_copy")).containsExactly("7,70");
    assertThat(
            CatalogDefinition.hadoop(warehouse)
                .connect()
                .loadTable(TableIdentifier.of("shop", "orders_copy"))
                .properties())
        .doesNotContainKeys("connector", "src-catalog");
  }

  @Test
  void aStreamingSelectFollowsWhatLaterLoadsAppend() throws Exception {
    String catalog =
        "CREATE CATALOG lake WITH ('type' = 'iceberg-cdc', 'warehouse' = '"
            + dir.resolve("warehouse")
            + "')";
    StreamTableEnvironment loads = batch();
    run(loads, catalog);
    run(loads, "CREATE DATABASE lake.feed");
    run(loads, "CREATE TABLE lake.feed.events (id BIGINT, v STRING)");
    run(loads, "INSERT INTO lake.feed.events VALUES (1, 'a')");

    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
    env.setParallelism(1);
    StreamTableEnvironment streaming = StreamTableEnvironment.create(env);
    run(streaming, catalog);
    org.apache.flink.table.api.TableResult result =
        streaming.executeSql(
            "SELECT id, v FROM lake.feed.events"
                + " /*+ OPTIONS('streaming' = 'true', 'monitor-interval' = '1s') */");
    try (CloseableIterator<Row> rows = result.collect()) {
      assertThat(rows.next().toString()).isEqualTo("+I[1, a]");
      run(loads, "INSERT INTO lake.feed.events VALUES (2, 'b'), (3, 'c')");
      List<String> appended = List.of(rows.next().toString(), rows.next().toString());
      assertThat(appended).containsExactlyInAnyOrder("+I[2, b]", "+I[3, c]");
    } finally {
      result.getJobClient().ifPresent(job -> job.cancel());
    }
  }

  @Test
  void aRestCatalogOnS3IsUsedTheSameWay() throws Exception {
    try (LakeServers lake = LakeServers.start("sql-catalog-lake")) {
      String properties =
          lake.s3Properties().entrySet().stream()
              .map(e -> ", 'catalog." + e.getKey() + "' = '" + e.getValue() + "'")
              .collect(Collectors.joining());
      StreamTableEnvironment sql = batch();
      run(
          sql,
          "CREATE CATALOG lake WITH ('type' = 'iceberg-cdc', 'catalog-type' = 'rest',"
              + " 'uri' = '"
              + lake.rest.uri()
              + "'"
              + properties
              + ")");
      run(sql, "USE CATALOG lake");
      mergeTwoLoadsAndReadThemBack(sql);
      Table table = lake.restCatalog().connect().loadTable(TableIdentifier.of("shop", "customers"));
      assertThat(table.location()).startsWith(lake.warehouse());
      assertThat(Map.copyOf(table.currentSnapshot().summary()))
          .containsEntry(SnapshotSummaryKeys.ROWS_UPDATED, "1");
    }
  }
}
