package io.icebergcdc.bench;

import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.TableEnvironment;

/**
 * A peer of {@code apply} on Debezium JSON, as a Flink SQL user writes it: the events of {@code
 * bench/scripts/debezium_json_events.py} read by Flink's {@code filesystem} or Kafka source with
 * the {@code debezium-json} format (schemas included), inserted into Iceberg's upsert table or a
 * Paimon primary-key table, at parallelism 2 with checkpoints every 2 s, in this JVM. The input is
 * bounded (a file, or a topic up to its latest offsets), so the job ends once all is committed.
 *
 * <pre>
 *   bash bench/java.sh DebeziumJsonSqlPeer --sink iceberg|paimon --warehouse DIR
 *       (--file FILE | --bootstrap-servers HOST:PORT --topic TOPIC)
 * </pre>
 *
 * <p>Flink's JSON format reads a decimal from a JSON number and a timestamp from text, while
 * Debezium writes a Connect decimal as base64 bytes and a {@code MicroTimestamp} as a number: the
 * peers declare those two columns as {@code BYTES} and {@code BIGINT}, which our applier converts.
 */
public final class DebeziumJsonSqlPeer {

  private static final String COLUMNS =
      "id BIGINT, name STRING, email STRING, qty INT, price BYTES, updated_at BIGINT,"
          + " active BOOLEAN, note STRING, PRIMARY KEY (id) NOT ENFORCED";

  private DebeziumJsonSqlPeer() {}

  /**
   * Reads table {@code table} of the warehouse in batch and prints its rows and the sum of {@code
   * qty}, which the benchmark compares with what the events leave.
   */
  private static void check(String sink, String warehouse, String table) throws Exception {
    TableEnvironment tables = TableEnvironment.create(EnvironmentSettings.inBatchMode());
    tables.executeSql(
        sink.equals("paimon")
            ? "CREATE CATALOG lake WITH ('type' = 'paimon', 'warehouse' = 'file://"
                + warehouse
                + "')"
            : "CREATE CATALOG lake WITH ('type' = 'iceberg', 'catalog-type' = 'hadoop',"
                + " 'warehouse' = 'file://"
                + warehouse
                + "')");
    try (var rows =
        tables
            .executeSql("SELECT count(*), sum(CAST(qty AS BIGINT)) FROM lake." + table)
            .collect()) {
      org.apache.flink.types.Row row = rows.next();
      System.out.printf(Locale.ROOT, "rows=%s qty=%s%n", row.getField(0), row.getField(1));
    }
  }

  public static void main(String[] args) throws Exception {
    Map<String, String> options = new HashMap<>();
    for (int i = 0; i + 1 < args.length; i += 2) {
      options.put(args[i].replaceFirst("^--", ""), args[i + 1]);
    }
    String sink = options.getOrDefault("sink", "iceberg");
    String warehouse = options.get("warehouse");
    if (options.containsKey("check")) {
      check(sink, warehouse, options.get("check"));
      return;
    }
    Configuration configuration = new Configuration();
    configuration.setString("parallelism.default", options.getOrDefault("parallelism", "2"));
    configuration.setString("execution.checkpointing.interval", "2s");
    // A failure ends the run instead of being retried without end.
    configuration.setString("restart-strategy.type", "none");
    TableEnvironment tables =
        TableEnvironment.create(
            EnvironmentSettings.newInstance()
                .inStreamingMode()
                .withConfiguration(configuration)
                .build());
    String source =
        options.containsKey("file")
            ? "'connector' = 'filesystem', 'path' = 'file://"
                + java.nio.file.Paths.get(options.get("file")).toAbsolutePath()
                + "'"
            : "'connector' = 'kafka', 'topic' = '"
                + options.get("topic")
                + "', 'properties.bootstrap.servers' = '"
                + options.get("bootstrap-servers")
                + "', 'properties.group.id' = 'sql-peer', 'scan.startup.mode' = 'earliest-offset',"
                + " 'scan.bounded.mode' = 'latest-offset'";
    tables.executeSql(
        "CREATE TABLE events ("
            + COLUMNS
            + ") WITH ("
            + source
            + ", 'format' = 'debezium-json', 'debezium-json.schema-include' = 'true')");
    if (sink.equals("paimon")) {
      tables.executeSql(
          "CREATE CATALOG lake WITH ('type' = 'paimon', 'warehouse' = 'file://" + warehouse + "')");
      tables.executeSql("CREATE DATABASE lake.bench");
      tables.executeSql(
          "CREATE TABLE lake.bench.customers (" + COLUMNS + ") WITH ('bucket' = '2')");
    } else {
      tables.executeSql(
          "CREATE CATALOG lake WITH ('type' = 'iceberg', 'catalog-type' = 'hadoop',"
              + " 'warehouse' = 'file://"
              + warehouse
              + "')");
      tables.executeSql("CREATE DATABASE lake.bench");
      tables.executeSql(
          "CREATE TABLE lake.bench.customers ("
              + COLUMNS
              + ") WITH ('format-version' = '2', 'write.upsert.enabled' = 'true')");
    }
    long start = System.nanoTime();
    tables.executeSql("INSERT INTO lake.bench.customers SELECT * FROM events").await();
    System.out.printf(
        Locale.ROOT, "%s: the job ran %.1f s%n", sink, (System.nanoTime() - start) / 1e9);
  }
}
