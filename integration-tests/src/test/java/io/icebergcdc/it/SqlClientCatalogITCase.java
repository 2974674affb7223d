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
    cluster =
        LocalFlinkCluster.start(clusterHome, 1, 2, StandaloneClusterITCase.dockerFlinkProperties());
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
}
