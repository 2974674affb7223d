package io.icebergcdc.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.icebergcdc.commit.SnapshotSummaryKeys;
import io.icebergcdc.sink.CatalogDefinition;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.apache.flink.api.common.RuntimeExecutionMode;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.Schema;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.table.connector.ChangelogMode;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.types.Row;
import org.apache.flink.types.RowKind;
import org.apache.iceberg.DataOperations;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The {@code iceberg-cdc} SQL connector on Iceberg's REST catalog server with its tables on S3Proxy
 * (each a process of its own), configured by the connector's {@code catalog-type}, {@code uri} and
 * {@code catalog.*} options: a streaming changelog ordered by a sequence field, and a batch {@code
 * INSERT OVERWRITE} of the partitions in its input.
 */
class SqlRestCatalogITCase {

  @RegisterExtension
  static final MiniClusterExtension FLINK =
      new MiniClusterExtension(
          new MiniClusterResourceConfiguration.Builder()
              .setNumberTaskManagers(1)
              .setNumberSlotsPerTaskManager(8)
              .build());

  static LakeServers lake;

  @BeforeAll
  static void startServers() throws Exception {
    lake = LakeServers.start("sql-lake");
  }

  @AfterAll
  static void stopServers() throws Exception {
    if (lake != null) {
      lake.close();
    }
  }

  /**
   * The WITH clause, with more options, of a connector table in the REST catalog, namespace {@code
   * sql_db}.
   */
  private static String with(String extra) {
    Map<String, String> properties = lake.s3Properties();
    String catalog =
        properties.entrySet().stream()
            .map(e -> ", 'catalog." + e.getKey() + "' = '" + e.getValue() + "'")
            .collect(Collectors.joining());
    return " WITH ('connector' = 'iceberg-cdc', 'catalog-type' = 'rest', 'uri' = '"
        + lake.rest.uri()
        + "', 'database-name' = 'sql_db'"
        + catalog
        + extra
        + ")";
  }

  private static Table table(String name) {
    Catalog catalog = lake.restCatalog().connect();
    try {
      return catalog.loadTable(TableIdentifier.of("sql_db", name));
    } finally {
      CatalogDefinition.close(catalog);
    }
  }

  @Test
  void aStreamingChangelogIsOrderedByItsSequenceField() throws Exception {
    Random random = new Random(5);
    List<Row> source = new ArrayList<>();
    Map<Long, String> model = new TreeMap<>();
    for (long seq = 1; seq <= 2000; seq++) {
      long id = random.nextInt(150);
      if (model.containsKey(id) && random.nextInt(5) == 0) {
        source.add(Row.ofKind(RowKind.DELETE, id, "deleted", seq));
        model.remove(id);
      } else {
        RowKind kind = model.containsKey(id) ? RowKind.UPDATE_AFTER : RowKind.INSERT;
        source.add(Row.ofKind(kind, id, "v" + seq, seq));
        model.put(id, id + ",v" + seq + "," + seq);
      }
    }
    List<Row> delivered = new ArrayList<>(source);
    Collections.shuffle(delivered, random);

    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
    env.setParallelism(2);
    env.enableCheckpointing(200);
    StreamTableEnvironment sql = StreamTableEnvironment.create(env);
    sql.createTemporaryView(
        "changes",
        sql.fromChangelogStream(
            env.fromData(delivered)
                .returns(
                    Types.ROW_NAMED(
                        new String[] {"id", "name", "seq"}, Types.LONG, Types.STRING, Types.LONG))
                .setParallelism(1),
            Schema.newBuilder()
                .column("id", "BIGINT NOT NULL")
                .column("name", "STRING")
                .column("seq", "BIGINT")
                .primaryKey("id")
                .build(),
            ChangelogMode.all()));
    sql.executeSql(
        "CREATE TABLE items (id BIGINT NOT NULL, name STRING, seq BIGINT,"
            + " PRIMARY KEY (id) NOT ENFORCED)"
            + with(", 'sequence.field' = 'seq'"));
    sql.executeSql("INSERT INTO items SELECT * FROM changes").await();

    Table table = table("items");
    assertThat(table.location()).startsWith(lake.warehouse());
    List<String> rows = new ArrayList<>();
    try (CloseableIterable<Record> records = IcebergGenerics.read(table).build()) {
      for (Record r : records) {
        rows.add(r.getField("id") + "," + r.getField("name") + "," + r.getField("seq"));
      }
    }
    rows.sort(java.util.Comparator.comparingLong(r -> Long.parseLong(r.split(",")[0])));
    assertThat(rows).containsExactlyElementsOf(model.values());
    Commits.jobsThatCommittedEachCheckpointOnce(table);
  }

  @Test
  void aBatchOverwriteReplacesThePartitionsInItsInput() throws Exception {
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
    env.setRuntimeMode(RuntimeExecutionMode.BATCH);
    env.setParallelism(2);
    StreamTableEnvironment sql = StreamTableEnvironment.create(env);
    sql.executeSql(
        "CREATE TABLE events (id BIGINT, v STRING, `day` STRING) PARTITIONED BY (`day`)"
            + with(""));
    sql.executeSql("INSERT INTO events VALUES (1, 'a', 'mon'), (2, 'b', 'tue'), (3, 'c', 'tue')")
        .await();
    sql.executeSql("INSERT OVERWRITE events VALUES (5, 'e', 'tue'), (6, 'f', 'wed')").await();

    Table table = table("events");
    List<String> rows = new ArrayList<>();
    try (CloseableIterable<Record> records = IcebergGenerics.read(table).build()) {
      for (Record r : records) {
        rows.add(r.getField("id") + "," + r.getField("v") + "," + r.getField("day"));
      }
    }
    rows.sort(null);
    assertThat(rows).containsExactly("1,a,mon", "5,e,tue", "6,f,wed");
    Snapshot overwrite = table.currentSnapshot();
    assertThat(overwrite.operation()).isEqualTo(DataOperations.OVERWRITE);
    assertThat(overwrite.summary())
        .containsEntry(SnapshotSummaryKeys.OVERWRITE, "the partitions the input has rows in");
  }
}
