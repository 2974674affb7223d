package io.icebergcdc.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.icebergcdc.commit.SnapshotSummaryKeys;
import io.icebergcdc.localflink.LocalFlinkCluster;
import io.icebergcdc.sink.CatalogDefinition;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The {@code iceberg-cdc} catalog from Flink's SQL client on a standalone cluster of its own, the
 * cluster jar given with {@code -j}: {@code CREATE CATALOG}, {@code CREATE DATABASE}, {@code CREATE
 * TABLE}, two {@code INSERT}s and a {@code SELECT}.
 *
 * <p>A cluster of its own, so that it does not depend on what the other cluster tests left running;
 * that many jobs share one cluster is {@link SessionClusterITCase}'s.
 */
class SqlClientCatalogITCase {

  private static final Path JAR = Paths.get("../jobs/target/iceberg-cdc-cluster.jar");
  private static final Duration CLI_TIMEOUT = Duration.ofMinutes(4);

  @TempDir static Path clusterHome;
  private static LocalFlinkCluster cluster;

  @TempDir Path dir;

  @BeforeAll
  static void startCluster() throws Exception {
    assertThat(JAR).as("the cluster jar; build with mvn package first").isRegularFile();
    // About thirty jobs in a few minutes, on REST + S3 too: the class loaders of the last jobs
    // linger for a minute or so after each ends (README, "Session clusters"), more than Flink's
    // default 256 MB of metaspace holds for jobs this size; SessionClusterITCase is the one that
    // runs at the default.
    cluster = LocalFlinkCluster.start(clusterHome, 1, 2, clusterProperties());
  }

  private static java.util.Map<String, String> clusterProperties() throws Exception {
    java.util.Map<String, String> properties =
        new java.util.HashMap<>(StandaloneClusterITCase.dockerFlinkProperties());
    properties.put("taskmanager.memory.jvm-metaspace.size", "512m");
    return properties;
  }

  @AfterAll
  static void stopCluster() throws Exception {
    if (cluster != null) {
      cluster.close();
    }
  }

  private static Catalog catalog(String warehouse) {
    return CatalogDefinition.hadoop(warehouse).connect();
  }

  @Test
  void theSqlClientWritesAndReadsThroughTheCatalog() throws Exception {
    String warehouse = dir.resolve("catalog-warehouse").toString();
    Path statements = dir.resolve("catalog.sql");
    Files.writeString(
        statements,
        String.join(
            "\n",
            "SET 'table.dml-sync' = 'true';",
            "SET 'execution.runtime-mode' = 'batch';",
            "SET 'sql-client.execution.result-mode' = 'tableau';",
            "SET 'parallelism.default' = '2';",
            "CREATE CATALOG lake WITH ('type' = 'iceberg-cdc', 'warehouse' = '" + warehouse + "');",
            "USE CATALOG lake;",
            "CREATE DATABASE crm;",
            "CREATE TABLE crm.people (id BIGINT NOT NULL, name STRING, PRIMARY KEY (id) NOT"
                + " ENFORCED);",
            "INSERT INTO crm.people VALUES (1, 'ann'), (2, 'bob');",
            "INSERT INTO crm.people VALUES (2, 'bobby'), (3, 'cy');",
            "SELECT id, name FROM crm.people WHERE id = 2;",
            ""),
        StandardCharsets.UTF_8);

    LocalFlinkCluster.Result result =
        cluster.sqlClient(CLI_TIMEOUT, statements, JAR.toAbsolutePath());
    assertThat(result.exitCode()).as(result.output()).isZero();
    assertThat(result.output()).doesNotContain("[ERROR]").contains("bobby");

    Table table = catalog(warehouse).loadTable(TableIdentifier.of("crm", "people"));
    List<String> rows = new ArrayList<>();
    try (var records = org.apache.iceberg.data.IcebergGenerics.read(table).build()) {
      records.forEach(r -> rows.add(r.getField("id") + "," + r.getField("name")));
    }
    assertThat(rows).containsExactlyInAnyOrder("1,ann", "2,bobby", "3,cy");
    assertThat(table.currentSnapshot().summary())
        .containsEntry(SnapshotSummaryKeys.ROWS_UPDATED, "1");
  }

  /**
   * The loading guides' statements, adapted only to Flink SQL, from one SQL client session: a
   * 1,000-row load and a merge of 1,000 more (500 of them updates), {@code UPDATE}, a {@code
   * DELETE} of a whole partition and one of some rows, a filtered overwrite that is also a gzip
   * level 6 write, a load retried with its write id, a {@code TRUNCATE}, the checks after a load;
   * the table then equals a model of those statements, with no equality delete file.
   */
  private static void runTheGuidesStatements(String createCatalog, Catalog catalog, Path dir)
      throws Exception {
    Path statements = dir.resolve("guides.sql");
    Files.writeString(
        statements,
        String.join(
            "\n",
            "SET 'table.dml-sync' = 'true';",
            "SET 'execution.runtime-mode' = 'batch';",
            "SET 'sql-client.execution.result-mode' = 'tableau';",
            "SET 'parallelism.default' = '2';",
            createCatalog + ";",
            "CREATE DATABASE lake.shop;",
            "CREATE TABLE lake.shop.sales (id BIGINT NOT NULL, region STRING, amount INT,"
                + " sale_date DATE NOT NULL, PRIMARY KEY (id, sale_date) NOT ENFORCED)"
                + " WITH ('partition-spec' = 'days(sale_date)', 'format-version' = '3',"
                + " 'write.parquet.compression-codec' = 'zstd');",
            "CREATE TEMPORARY TABLE gen (n BIGINT) WITH ('connector' = 'datagen',"
                + " 'number-of-rows' = '1000', 'fields.n.kind' = 'sequence',"
                + " 'fields.n.start' = '1', 'fields.n.end' = '1000');",
            "INSERT INTO lake.shop.sales SELECT n, CASE WHEN n % 2 = 0 THEN 'north' ELSE 'south'"
                + " END, CAST(n % 100 AS INT) + 1, CAST(TIMESTAMPADD(DAY, CAST(n % 4 AS INT),"
                + " TIMESTAMP '2026-01-01 00:00:00') AS DATE) FROM gen;",
            "INSERT INTO lake.shop.sales SELECT n + 500, CASE WHEN (n + 500) % 2 = 0 THEN 'north'"
                + " ELSE 'south' END, CAST((n + 500) % 100 AS INT) + 1000,"
                + " CAST(TIMESTAMPADD(DAY, CAST((n + 500) % 4 AS INT), TIMESTAMP '2026-01-01"
                + " 00:00:00') AS DATE) FROM gen;",
            "UPDATE lake.shop.sales SET amount = amount + 1 WHERE region = 'north';",
            "DELETE FROM lake.shop.sales WHERE sale_date = DATE '2026-01-02';",
            "DELETE FROM lake.shop.sales WHERE amount > 1095;",
            "INSERT OVERWRITE lake.shop.sales /*+ OPTIONS('overwrite.filter' ="
                + " 'sale_date >= DATE ''2026-01-04''', 'compression' = 'gzip',"
                + " 'compression-level' = '6') */ VALUES (5000, 'east', 7, DATE '2026-01-04');",
            "INSERT INTO lake.shop.sales /*+ OPTIONS('write-id' = 'daily-2026-11-30') */"
                + " VALUES (6000, 'west', 1, DATE '2026-01-01');",
            "INSERT INTO lake.shop.sales /*+ OPTIONS('write-id' = 'daily-2026-11-30') */"
                + " VALUES (6000, 'west', 1, DATE '2026-01-01');",
            "SELECT COUNT(*) AS rows_now FROM lake.shop.sales;",
            "SELECT operation, summary['iceberg-cdc.statement'] AS stmt"
                + " FROM lake.shop.`sales$snapshots`;",
            "SELECT `partition`, record_count FROM lake.shop.`sales$partitions`;",
            "SELECT COUNT(*) AS manifests FROM lake.shop.`sales$manifests`;",
            "CREATE TABLE lake.shop.scratch (id BIGINT);",
            "INSERT INTO lake.shop.scratch VALUES (1), (2);",
            "TRUNCATE TABLE lake.shop.scratch;",
            ""),
        StandardCharsets.UTF_8);

    LocalFlinkCluster.Result result =
        cluster.sqlClient(CLI_TIMEOUT, statements, JAR.toAbsolutePath());
    assertThat(result.exitCode()).as(result.output()).isZero();
    assertThat(result.output())
        .as(result.output())
        .doesNotContain("[ERROR]")
        .contains("rows_now")
        .contains("manifests")
        .doesNotContain("Exception in thread");

    // The model of the statements above.
    java.util.Map<String, String> model = new java.util.TreeMap<>();
    java.time.LocalDate first = java.time.LocalDate.parse("2026-01-01");
    for (long n = 1; n <= 1500; n++) {
      long amount = n <= 500 ? n % 100 + 1 : n % 100 + 1000;
      String region = n % 2 == 0 ? "north" : "south";
      if (region.equals("north")) {
        amount++;
      }
      java.time.LocalDate day = first.plusDays(n % 4);
      if (day.equals(first.plusDays(1)) || amount > 1095 || !day.isBefore(first.plusDays(3))) {
        continue;
      }
      model.put(n + "," + day, region + "," + amount);
    }
    model.put("5000,2026-01-04", "east,7");
    model.put("6000,2026-01-01", "west,1");

    Table sales = catalog.loadTable(TableIdentifier.of("shop", "sales"));
    java.util.Map<String, String> rows = new java.util.TreeMap<>();
    try (var records = org.apache.iceberg.data.IcebergGenerics.read(sales).build()) {
      records.forEach(
          r ->
              rows.put(
                  r.getField("id") + "," + r.getField("sale_date"),
                  r.getField("region") + "," + r.getField("amount")));
    }
    assertThat(rows).isEqualTo(model);
    assertThat(result.output()).contains(Integer.toString(model.size()));

    List<String> statementsDone = new ArrayList<>();
    for (org.apache.iceberg.Snapshot snapshot : sales.snapshots()) {
      statementsDone.add(
          snapshot.operation()
              + ":"
              + snapshot.summary().getOrDefault(SnapshotSummaryKeys.STATEMENT, "-")
              + ":"
              + snapshot.summary().getOrDefault(SnapshotSummaryKeys.WRITE_ID, "-"));
    }
    assertThat(statementsDone)
        .containsExactly(
            "append:-:-",
            "overwrite:-:-",
            "overwrite:UPDATE:-",
            "delete:DELETE:-",
            "delete:DELETE:-",
            "overwrite:-:-",
            "append:-:daily-2026-11-30");
    for (org.apache.iceberg.FileScanTask task : sales.newScan().planFiles()) {
      assertThat(task.deletes())
          .allMatch(d -> d.content() == org.apache.iceberg.FileContent.POSITION_DELETES);
    }
    Table scratch = catalog.loadTable(TableIdentifier.of("shop", "scratch"));
    assertThat(scratch.currentSnapshot().summary())
        .containsEntry(SnapshotSummaryKeys.TRUNCATE, "true");
  }

  /**
   * An atomic {@code CREATE TABLE ... AS SELECT} on a standalone cluster: refused before anything
   * is created where the jar is given with the job (Flink's JobManager reads the statement's hooks
   * without it), run where the jar is in Flink's {@code lib/}: the table appears at the job's end
   * with every row, and its staging table is gone.
   */
  @Test
  void anAtomicCreateTableAsSelectRunsWithTheJarInFlinksLib() throws Exception {
    String warehouse = dir.resolve("atomic-warehouse").toString();
    Path statements = dir.resolve("atomic.sql");
    Files.writeString(
        statements,
        String.join(
            "\n",
            "SET 'table.dml-sync' = 'true';",
            "SET 'execution.runtime-mode' = 'batch';",
            "SET 'table.rtas-ctas.atomicity-enabled' = 'true';",
            "CREATE CATALOG lake WITH ('type' = 'iceberg-cdc', 'warehouse' = '" + warehouse + "');",
            "CREATE DATABASE IF NOT EXISTS lake.shop;",
            "CREATE TABLE lake.shop.squares (PRIMARY KEY (n) NOT ENFORCED)"
                + " WITH ('partition-spec' = 'bucket(2, n)') AS SELECT CAST(n AS BIGINT) AS n,"
                + " CAST(n * n AS BIGINT) AS square FROM (VALUES (1), (2), (3)) AS t(n);",
            ""),
        StandardCharsets.UTF_8);
    Catalog catalog = catalog(warehouse);
    org.apache.iceberg.catalog.Namespace shop = org.apache.iceberg.catalog.Namespace.of("shop");

    LocalFlinkCluster.Result refused =
        cluster.sqlClient(CLI_TIMEOUT, statements, JAR.toAbsolutePath());
    assertThat(refused.output())
        .as(refused.output())
        .contains("needs this connector's jar in Flink's lib/ directory");
    assertThat(catalog.listTables(shop)).isEmpty();

    Path home = Files.createDirectories(dir.resolve("cluster-with-the-jar"));
    try (LocalFlinkCluster withTheJar =
        LocalFlinkCluster.start(home, 1, 2, clusterProperties(), List.of(JAR.toAbsolutePath()))) {
      LocalFlinkCluster.Result result = withTheJar.sqlClient(CLI_TIMEOUT, statements);
      assertThat(result.exitCode()).as(result.output()).isZero();
      assertThat(result.output()).as(result.output()).doesNotContain("[ERROR]");
    }
    Table squares = catalog.loadTable(TableIdentifier.of(shop, "squares"));
    List<String> rows = new ArrayList<>();
    try (var records = org.apache.iceberg.data.IcebergGenerics.read(squares).build()) {
      records.forEach(r -> rows.add(r.getField("n") + "," + r.getField("square")));
    }
    assertThat(rows).containsExactlyInAnyOrder("1,1", "2,4", "3,9");
    assertThat(squares.snapshots()).hasSize(1);
    assertThat(squares.currentSnapshot().summary()).containsKey(SnapshotSummaryKeys.CREATED_FROM);
    assertThat(catalog.listTables(shop))
        .extracting(TableIdentifier::name)
        .containsExactly("squares");
  }

  @Test
  void theGuidesStatementsRunInTheSqlClientOnAHadoopCatalog() throws Exception {
    String warehouse = dir.resolve("guides-warehouse").toString();
    runTheGuidesStatements(
        "CREATE CATALOG lake WITH ('type' = 'iceberg-cdc', 'warehouse' = '" + warehouse + "')",
        catalog(warehouse),
        dir);
  }

  @Test
  void theGuidesStatementsRunInTheSqlClientOnARestCatalogOnS3() throws Exception {
    try (LakeServers lake = LakeServers.start("sql-client-lake")) {
      String properties =
          lake.s3Properties().entrySet().stream()
              .map(e -> ", 'catalog." + e.getKey() + "' = '" + e.getValue() + "'")
              .collect(java.util.stream.Collectors.joining());
      runTheGuidesStatements(
          "CREATE CATALOG lake WITH ('type' = 'iceberg-cdc', 'catalog-type' = 'rest', 'uri' = '"
              + lake.rest.uri()
              + "'"
              + properties
              + ")",
          lake.restCatalog().connect(),
          dir);
    }
  }
}
