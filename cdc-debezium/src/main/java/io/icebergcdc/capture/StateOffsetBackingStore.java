package io.icebergcdc.capture;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.connect.runtime.WorkerConfig;
import org.apache.kafka.connect.storage.MemoryOffsetBackingStore;

/**
 * The Debezium engine's offset store: it starts from the offsets of the restored Flink checkpoint,
 * handed over in the engine's configuration, and keeps what the engine writes in memory only. The
 * offsets that count are those in Flink's checkpoints ({@link DebeziumSplit}); nothing outside
 * Flink remembers a position.
 */
public final class StateOffsetBackingStore extends MemoryOffsetBackingStore {

  /** Engine property: the restored offsets, a JSON object of offset key to offset value. */
  public static final String RESTORED_OFFSETS = "iceberg-cdc.restored-offsets";

  private static final ObjectMapper MAPPER = new ObjectMapper();

  @Override
  public void configure(WorkerConfig config) {
    super.configure(config);
    Object restored = config.originals().get(RESTORED_OFFSETS);
    if (restored != null) {
      for (Map.Entry<String, String> entry : decode(restored.toString()).entrySet()) {
        data.put(bytes(entry.getKey()), bytes(entry.getValue()));
      }
    }
    Object history = config.originals().get(StateSchemaHistory.ID);
    if (history != null) {
      StateSchemaHistory.offsetsFrom(history.toString(), this::stored);
    }
  }

  /**
   * The offsets the store holds now (offset key to value, as JSON), read on the store's own thread;
   * none once the store has stopped.
   */
  Map<String, String> stored() {
    ExecutorService running = executor;
    if (running == null || running.isShutdown()) {
      return Map.of();
    }
    try {
      return running
          .submit(
              () -> {
                Map<String, String> copy = new HashMap<>();
                data.forEach((key, value) -> copy.put(text(key), text(value)));
                return copy;
              })
          .get(10, TimeUnit.SECONDS);
    } catch (RejectedExecutionException | ExecutionException | TimeoutException e) {
      return Map.of();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return Map.of();
    }
  }

  private static String text(ByteBuffer bytes) {
    return StandardCharsets.UTF_8.decode(bytes.duplicate()).toString();
  }

  @Override
  public Set<Map<String, Object>> connectorPartitions(String connectorName) {
    return Set.of();
  }

  /**
   * The offset entry of a PostgreSQL connector that has not read anything yet and starts streaming
   * at {@code lsn}.
   */
  static Map<String, String> postgresStart(Map<String, String> properties, long lsn) {
    return start(properties, Map.of("lsn", lsn, "ts_usec", System.currentTimeMillis() * 1000L));
  }

  /**
   * The offset entry of a MySQL or MariaDB connector that has not read anything yet and starts
   * streaming at a binlog position (and, for MariaDB, a GTID position).
   */
  static Map<String, String> mysqlStart(
      Map<String, String> properties, String file, long position, String gtids) {
    Map<String, Object> offset = new java.util.LinkedHashMap<>();
    offset.put("file", file);
    offset.put("pos", position);
    offset.put("ts_sec", System.currentTimeMillis() / 1000);
    if (gtids != null && !gtids.isEmpty()) {
      offset.put("gtids", gtids);
    }
    return start(properties, offset);
  }

  /**
   * A starting offset entry: the key (engine name and the connector's partition, {@code {"server":
   * prefix}}) and the value, as JSON text, as the engine's own converter writes them.
   */
  private static Map<String, String> start(
      Map<String, String> properties, Map<String, Object> offset) {
    String engine = properties.getOrDefault("name", DebeziumLogReader.DEFAULT_ENGINE_NAME);
    String prefix = properties.getOrDefault("topic.prefix", engine);
    try {
      return Map.of(
          MAPPER.writeValueAsString(java.util.List.of(engine, Map.of("server", prefix))),
          MAPPER.writeValueAsString(offset));
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }

  static String encode(Map<String, String> offsets) {
    try {
      return MAPPER.writeValueAsString(offsets);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }

  static Map<String, String> decode(String json) {
    try {
      return MAPPER.readValue(json, new TypeReference<Map<String, String>>() {});
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException(
          "restored Debezium offsets are not valid JSON: " + json, e);
    }
  }

  private static ByteBuffer bytes(String text) {
    return ByteBuffer.wrap(text.getBytes(StandardCharsets.UTF_8));
  }
}
