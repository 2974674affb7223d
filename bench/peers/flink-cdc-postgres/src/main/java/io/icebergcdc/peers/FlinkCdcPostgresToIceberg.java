package io.icebergcdc.peers;

import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;

/**
 * Flink CDC's {@code postgres-cdc} source (its incremental, parallel snapshot, then the log) into
 * Iceberg's upsert table, the way a Flink SQL user writes it: the capture benchmark's peer. Runs
 * on a local Flink 1.20 until it is killed.
 *
 * <pre>
 *   --database D --schema S --table T --slot SLOT --warehouse DIR --checkpoints DIR
 *   [--parallelism 2] [--checkpoint-interval-ms 1000]
 * </pre>
 *
 * <p>The Iceberg table is {@code lake.cdc.<table>}, format version 2 with {@code
 * write.upsert.enabled}; the source table must have columns {@code id bigint primary key, v text, n
 * bigint}. The source runs with {@code changelog-mode = upsert}, so that tables with the default
 * replica identity work (updates carry no before row).
 */
public final class FlinkCdcPostgresToIceberg {

  private FlinkCdcPostgresToIceberg() {}

  public static void main(String[] args) throws Exception {
    Map<String, String> options = new LinkedHashMap<>();
    for (int i = 0; i + 1 < args.length; i += 2) {
      options.put(args[i].replaceFirst("^--", ""), args[i + 1]);
    }
    int parallelism = Integer.parseInt(options.getOrDefault("parallelism", "2"));
    long interval = Long.parseLong(options.getOrDefault("checkpoint-interval-ms", "1000"));
    String table = required(options, "table");

    Configuration config = new Configuration();
    config.setString("state.backend.type", "hashmap");
    config.setString("state.checkpoints.dir", "file://" + required(options, "checkpoints"));
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(config);
    env.setParallelism(parallelism);
    env.enableCheckpointing(interval);
    StreamTableEnvironment sql = StreamTableEnvironment.create(env);

    sql.executeSql(
        "CREATE CATALOG lake WITH ('type' = 'iceberg', 'catalog-type' = 'hadoop',"
            + " 'warehouse' = 'file://"
            + required(options, "warehouse")
            + "')");
    sql.executeSql("CREATE DATABASE IF NOT EXISTS lake.cdc");
    sql.executeSql(
        "CREATE TABLE IF NOT EXISTS lake.cdc."
            + table
            + " (id BIGINT, v STRING, n BIGINT, PRIMARY KEY (id) NOT ENFORCED)"
            + " WITH ('format-version' = '2', 'write.upsert.enabled' = 'true')");
    sql.executeSql(
        "CREATE TEMPORARY TABLE source_rows (id BIGINT, v STRING, n BIGINT,"
            + " PRIMARY KEY (id) NOT ENFORCED) WITH ("
            + "'connector' = 'postgres-cdc',"
            + " 'hostname' = '127.0.0.1', 'port' = '5432',"
            + " 'username' = 'postgres', 'password' = '',"
            + " 'database-name' = '"
            + required(options, "database")
            + "', 'schema-name' = '"
            + required(options, "schema")
            + "', 'table-name' = '"
            + table
            + "', 'slot.name' = '"
            + required(options, "slot")
            + "', 'decoding.plugin.name' = 'pgoutput',"
            + " 'debezium.publication.autocreate.mode' = 'filtered',"
            + " 'scan.incremental.snapshot.enabled' = 'true',"
            + " 'changelog-mode' = 'upsert')");
    sql.executeSql("INSERT INTO lake.cdc." + table + " SELECT id, v, n FROM source_rows").await();
  }

  private static String required(Map<String, String> options, String name) {
    String value = options.get(name);
    if (value == null) {
      System.err.println("error: --" + name + " is required");
      System.exit(2);
    }
    return value;
  }
}
