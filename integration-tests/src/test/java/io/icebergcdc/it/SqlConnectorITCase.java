package io.icebergcdc.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.icebergcdc.commit.SnapshotSummaryKeys;
import io.icebergcdc.sink.CatalogDefinition;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.Schema;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.table.connector.ChangelogMode;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.types.Row;
import org.apache.flink.types.RowKind;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code INSERT INTO} a table of the {@code iceberg-cdc} connector from a Flink SQL changelog: with
 * a sequence field the changes of each key are ordered by it whatever their arrival, without one by
 * arrival, and without a primary key the table is appended to.
 */
class SqlConnectorITCase {

  @RegisterExtension
  static final MiniClusterExtension FLINK =
      new MiniClusterExtension(
          new MiniClusterResourceConfiguration.Builder()
              .setNumberTaskManagers(1)
              .setNumberSlotsPerTaskManager(8)
              .build());

  @TempDir Path dir;

  private StreamTableEnvironment tableEnvironment(List<Row> changes, String view) {
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
    env.setParallelism(2);
    env.enableCheckpointing(200);
    StreamTableEnvironment tEnv = StreamTableEnvironment.create(env);
    DataStream<Row> stream =
        env.fromData(changes)
            .returns(
                Types.ROW_NAMED(
                    new String[] {"id", "name", "seq"}, Types.LONG, Types.STRING, Types.LONG))
            .setParallelism(1);
    tEnv.createTemporaryView(
        view,
        tEnv.fromChangelogStream(
            stream,
            Schema.newBuilder()
                .column("id", "BIGINT NOT NULL")
                .column("name", "STRING")
                .column("seq", "BIGINT")
                .primaryKey("id")
                .build(),
            ChangelogMode.all()));
    return tEnv;
  }

  private String connector(String table, String extra) {
    return "CREATE TABLE "
        + table
        + " (id BIGINT NOT NULL, name STRING, seq BIGINT, PRIMARY KEY (id) NOT ENFORCED) WITH"
        + " ('connector' = 'iceberg-cdc', 'warehouse' = '"
        + dir.resolve("warehouse")
        + "', 'database-name' = 'db'"
        + extra
        + ")";
  }

  /** In either delete mode: by position (the default) and by key ({@code EQUALITY}). */
  @org.junit.jupiter.params.ParameterizedTest
  @org.junit.jupiter.params.provider.ValueSource(strings = {"POSITION", "EQUALITY"})
  void ordersTheChangesOfEachKeyByTheSequenceField(String deleteMode) throws Exception {
    // Changes in source order, then delivered shuffled and partly twice; the model is the
    // source order's end state. A delete carries the row it deletes, as Flink gives it, so its
    // sequence is the one of the change that wrote that row.
    Random random = new Random(3);
    List<Row> source = new ArrayList<>();
    Map<Long, String> model = new TreeMap<>();
    Map<Long, Long> live = new TreeMap<>();
    for (long seq = 1; seq <= 3000; seq++) {
      long id = random.nextInt(200);
      if (live.containsKey(id) && random.nextInt(5) == 0) {
        long written = live.get(id);
        source.add(Row.ofKind(RowKind.DELETE, id, "v" + written, written));
        live.remove(id);
        model.remove(id);
      } else {
        RowKind kind = live.containsKey(id) ? RowKind.UPDATE_AFTER : RowKind.INSERT;
        source.add(Row.ofKind(kind, id, "v" + seq, seq));
        live.put(id, seq);
        model.put(id, id + ",v" + seq + "," + seq);
      }
    }
    List<Row> delivered = new ArrayList<>(source);
    Collections.shuffle(delivered, random);
    for (int i = 0; i < 300; i++) {
      delivered.add(delivered.get(random.nextInt(delivered.size())));
    }

    StreamTableEnvironment tEnv = tableEnvironment(delivered, "changes");
    tEnv.executeSql(
        connector(
            "items", ", 'sequence.field' = 'seq', 'sink.delete-mode' = '" + deleteMode + "'"));
    tEnv.executeSql("INSERT INTO items SELECT * FROM changes").await();

    Table table = table("items");
    assertThat(rows(table)).containsExactlyElementsOf(model.values());
    long duplicates = 0;
    long stale = 0;
    for (Snapshot snapshot : table.snapshots()) {
      duplicates += Long.parseLong(snapshot.summary().get(SnapshotSummaryKeys.DUPLICATES_DROPPED));
      stale += Long.parseLong(snapshot.summary().get(SnapshotSummaryKeys.STALE_DROPPED));
    }
    assertThat(duplicates + stale).as("late and repeated changes were dropped").isPositive();
  }

  @Test
  void withoutASequenceFieldTheLastArrivalWins() throws Exception {
    List<Row> changes =
        List.of(
            Row.ofKind(RowKind.INSERT, 1L, "a", 5L),
            Row.ofKind(RowKind.INSERT, 2L, "b", 5L),
            Row.ofKind(RowKind.UPDATE_BEFORE, 1L, "a", 5L),
            Row.ofKind(RowKind.UPDATE_AFTER, 1L, "a2", 1L),
            Row.ofKind(RowKind.DELETE, 2L, "b", 5L),
            Row.ofKind(RowKind.INSERT, 3L, "c", 9L));
    StreamTableEnvironment tEnv = tableEnvironment(changes, "arrivals");
    tEnv.executeSql(connector("arrivals_table", ""));
    tEnv.executeSql("INSERT INTO arrivals_table SELECT * FROM arrivals").await();

    Table table = table("arrivals_table");
    assertThat(rows(table))
        .as("rows of %s, snapshots %s", table.name(), table.snapshots())
        .containsExactly("1,a2,1", "3,c,9");
  }

  @Test
  void withoutAPrimaryKeyRowsAreAppendedOncePerCheckpoint() throws Exception {
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
    env.setParallelism(2);
    env.enableCheckpointing(100);
    StreamTableEnvironment tEnv = StreamTableEnvironment.create(env);
    tEnv.createTemporaryView(
        "numbers",
        tEnv.fromDataStream(
            env.fromSequence(1, 5000)
                .map(i -> Row.of(i, "n" + i, i))
                .returns(
                    Types.ROW_NAMED(
                        new String[] {"id", "name", "seq"},
                        Types.LONG,
                        Types.STRING,
                        Types.LONG))));
    tEnv.executeSql(
        "CREATE TABLE log (id BIGINT, name STRING, seq BIGINT) WITH ('connector' = 'iceberg-cdc',"
            + " 'warehouse' = '"
            + dir.resolve("warehouse")
            + "', 'database-name' = 'db')");
    tEnv.executeSql("INSERT INTO log SELECT * FROM numbers").await();

    Table table = table("log");
    List<String> expected = new ArrayList<>();
    for (long i = 1; i <= 5000; i++) {
      expected.add(i + ",n" + i + "," + i);
    }
    assertThat(rows(table)).containsExactlyElementsOf(expected);
    long inserted = 0;
    java.util.Set<String> checkpoints = new java.util.HashSet<>();
    for (Snapshot snapshot : table.snapshots()) {
      assertThat(snapshot.operation()).isEqualTo("append");
      assertThat(checkpoints.add(snapshot.summary().get(SnapshotSummaryKeys.CHECKPOINT_ID)))
          .as("each checkpoint committed once")
          .isTrue();
      inserted += Long.parseLong(snapshot.summary().get(SnapshotSummaryKeys.ROWS_INSERTED));
    }
    assertThat(inserted).isEqualTo(5000);
  }

  @Test
  void refusesASequenceFieldTheTableLacksNamingIt() {
    StreamTableEnvironment tEnv = tableEnvironment(List.of(Row.of(1L, "a", 1L)), "few");
    tEnv.executeSql(connector("bad", ", 'sequence.field' = 'version'"));
    assertThatThrownBy(() -> tEnv.executeSql("INSERT INTO bad SELECT * FROM few").await())
        .hasStackTraceContaining("option 'sequence.field' names 'version'");
  }

  @Test
  void aWritesOwnCompressionOverridesTheTablesForThatWriteOnly() throws Exception {
    StreamTableEnvironment tEnv =
        tableEnvironment(
            List.of(
                Row.ofKind(RowKind.INSERT, 1L, "a", 1L), Row.ofKind(RowKind.INSERT, 2L, "b", 2L)),
            "small");
    tEnv.executeSql(connector("gzipped", ", 'compression' = 'gzip'"));
    tEnv.executeSql("INSERT INTO gzipped SELECT * FROM small").await();

    Table table = table("gzipped");
    // The table keeps its own codec (Iceberg writes zstd into new tables); only the write used
    // gzip.
    assertThat(table.properties()).containsEntry("write.parquet.compression-codec", "zstd");
    List<String> codecs = new ArrayList<>();
    for (org.apache.iceberg.FileScanTask task : table.newScan().planFiles()) {
      try (org.apache.parquet.hadoop.ParquetFileReader reader =
          org.apache.parquet.hadoop.ParquetFileReader.open(
              org.apache.parquet.hadoop.util.HadoopInputFile.fromPath(
                  new org.apache.hadoop.fs.Path(task.file().location()),
                  new org.apache.hadoop.conf.Configuration()))) {
        codecs.add(reader.getFooter().getBlocks().get(0).getColumns().get(0).getCodec().name());
      }
    }
    assertThat(codecs).isNotEmpty().containsOnly("GZIP");

    tEnv.executeSql(
        connector("bad_level", ", 'compression' = 'snappy', 'compression-level' = '3'"));
    assertThatThrownBy(() -> tEnv.executeSql("INSERT INTO bad_level SELECT * FROM small").await())
        .hasStackTraceContaining("codec snappy takes no compression level");
  }

  private Table table(String name) {
    return CatalogDefinition.hadoop(dir.resolve("warehouse").toString())
        .loader()
        .loadCatalog()
        .loadTable(TableIdentifier.of("db", name));
  }

  private static List<String> rows(Table table) throws Exception {
    Map<Long, String> rows = new TreeMap<>();
    try (CloseableIterable<Record> records = IcebergGenerics.read(table).build()) {
      for (Record r : records) {
        rows.put(
            (Long) r.getField("id"),
            r.getField("id") + "," + r.getField("name") + "," + r.getField("seq"));
      }
    }
    return new ArrayList<>(rows.values());
  }
}
