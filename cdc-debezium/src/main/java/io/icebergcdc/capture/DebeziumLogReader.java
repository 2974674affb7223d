package io.icebergcdc.capture;

import io.debezium.embedded.Connect;
import io.debezium.engine.DebeziumEngine;
import io.debezium.engine.RecordChangeEvent;
import io.debezium.engine.format.ChangeEventFormat;
import io.debezium.engine.spi.OffsetCommitPolicy;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Properties;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.apache.flink.api.connector.source.ReaderOutput;
import org.apache.flink.connector.base.source.reader.synchronization.FutureCompletingBlockingQueue;
import org.apache.flink.util.FlinkRuntimeException;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.json.JsonConverter;
import org.apache.kafka.connect.json.JsonConverterConfig;
import org.apache.kafka.connect.source.SourceRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The log part of a {@link CaptureSourceReader}: runs the Debezium embedded engine in a thread of
 * its own and hands its records to Flink through a bounded queue, so that a slow pipeline holds the
 * engine back instead of buffering without end.
 *
 * <p>A checkpoint stores the offsets of the last record emitted before the barrier; the engine is
 * told that a record was processed (which, for PostgreSQL, lets the replication slot release the
 * log before it) only once a checkpoint that contains it has completed. Records that Debezium sends
 * besides data changes (heartbeats, schema-change and transaction events) move the position but are
 * not emitted.
 */
final class DebeziumLogReader implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(DebeziumLogReader.class);

  /** The engine's name when the connector's properties name none. */
  static final String DEFAULT_ENGINE_NAME = "iceberg-cdc";

  private final Map<String, String> connectorProperties;
  private final FutureCompletingBlockingQueue<RecordChangeEvent<SourceRecord>> queue;
  private final RecordConversion conversion;
  private final JsonConverter offsetKeyConverter = new JsonConverter();
  private final JsonConverter offsetValueConverter = new JsonConverter();
  private final NavigableMap<Long, RecordChangeEvent<SourceRecord>> uncommitted = new TreeMap<>();
  private final String historyId = UUID.randomUUID().toString();
  private final String engineName;

  /** The {@code database.table} names of the tables the job was built with. */
  private final List<String> capturedTables;

  private volatile Throwable failure;
  private volatile boolean closing;
  private volatile DebeziumEngine.RecordCommitter<RecordChangeEvent<SourceRecord>> committer;

  private ExecutorService engineThread;
  private DebeziumEngine<RecordChangeEvent<SourceRecord>> engine;
  private DebeziumSplit split;
  private RecordChangeEvent<SourceRecord> lastEmitted;

  DebeziumLogReader(
      Map<String, String> connectorProperties,
      CaptureRoutes routes,
      FutureCompletingBlockingQueue<RecordChangeEvent<SourceRecord>> queue,
      KeyChangeFill keyChanges) {
    this.connectorProperties = connectorProperties;
    this.conversion = new RecordConversion(routes, keyChanges);
    List<String> captured = new java.util.ArrayList<>();
    for (int i = 0; i < routes.size(); i++) {
      captured.add(routes.route(i).tableName());
    }
    this.capturedTables = List.copyOf(captured);
    this.queue = queue;
    this.engineName = connectorProperties.getOrDefault("name", DEFAULT_ENGINE_NAME);
    Map<String, String> internal = Map.of(JsonConverterConfig.SCHEMAS_ENABLE_CONFIG, "false");
    offsetKeyConverter.configure(internal, true);
    offsetValueConverter.configure(internal, false);
  }

  /** Starts the connector at the split's position. */
  void start(DebeziumSplit log) {
    if (split != null) {
      throw new IllegalStateException(
          "a Debezium source reader runs one connector; it runs "
              + split
              + " and was given "
              + log);
    }
    split = log;
    if (!split.offsets().isEmpty()) {
      PostgresSlotCheck.verifyRestorable(connectorProperties, split.offsets().values());
    }
    startEngine();
  }

  private void startEngine() {
    Properties properties = new Properties();
    properties.putAll(connectorProperties);
    properties.setProperty("name", engineName);
    if (!split.connectorSnapshots()) {
      // The source reads the snapshot in chunks; the connector streams from the split's position.
      // A MySQL/MariaDB connector without schema history yet (the job's first start) records the
      // tables' current schemas first ("recovery"), then streams from the position.
      boolean withoutHistory =
          !PostgresSlotCheck.POSTGRES_CONNECTOR.equals(connectorProperties.get("connector.class"))
              && split.schemaHistory().isEmpty();
      properties.setProperty("snapshot.mode", withoutHistory ? "recovery" : "no_data");
    }
    properties.setProperty("offset.storage", StateOffsetBackingStore.class.getName());
    properties.setProperty(
        StateOffsetBackingStore.RESTORED_OFFSETS, StateOffsetBackingStore.encode(split.offsets()));
    properties.setProperty("offset.flush.interval.ms", "0");
    if (!PostgresSlotCheck.POSTGRES_CONNECTOR.equals(connectorProperties.get("connector.class"))) {
      List<String> unknown = SchemaHistoryTables.unknown(split.schemaHistory(), capturedTables);
      if (!unknown.isEmpty()) {
        // Usual for a table created since the checkpoint, whose CREATE TABLE the connector reads.
        LOG.info(
            "The connector's schema history does not know tables {}: read only if created after"
                + " the restored binlog position, else Debezium fails at their first change (a"
                + " state written by an earlier build, which recorded the captured tables only:"
                + " start without state, or capture them with a job of their own)",
            unknown);
      }
    }
    properties.setProperty("schema.history.internal", StateSchemaHistory.class.getName());
    properties.setProperty(StateSchemaHistory.ID, historyId);
    StateSchemaHistory.register(historyId, split.schemaHistory());

    engine =
        DebeziumEngine.create(ChangeEventFormat.of(Connect.class))
            .using(properties)
            .using(OffsetCommitPolicy.always())
            .using(this::engineStopped)
            .notifying(this::handleBatch)
            .build();
    engineThread =
        Executors.newSingleThreadExecutor(
            runnable -> {
              Thread thread = new Thread(runnable, "debezium-engine-" + engineName);
              thread.setDaemon(true);
              return thread;
            });
    engineThread.execute(engine);
    LOG.info("Started the Debezium engine {} from {}", engineName, split);
  }

  private void handleBatch(
      List<RecordChangeEvent<SourceRecord>> records,
      DebeziumEngine.RecordCommitter<RecordChangeEvent<SourceRecord>> committer)
      throws InterruptedException {
    this.committer = committer;
    for (RecordChangeEvent<SourceRecord> record : records) {
      while (!queue.put(0, record)) {
        if (closing) {
          throw new InterruptedException("the Debezium source is closing");
        }
      }
    }
  }

  private void engineStopped(boolean success, String message, Throwable error) {
    if (!closing) {
      failure =
          error != null
              ? error
              : new IllegalStateException("the Debezium engine stopped: " + message);
      LOG.error("The Debezium engine {} stopped: {}", engineName, message, error);
    }
    queue.notifyAvailable();
  }

  /** Whether the reader runs the connector. */
  boolean running() {
    return split != null;
  }

  /** Emits the changes of the connector's next record; false if it has none ready. */
  boolean pollNext(ReaderOutput<CapturedChange> output) {
    checkEngine();
    RecordChangeEvent<SourceRecord> event = queue.poll();
    if (event == null) {
      return false;
    }
    SourceRecord record = event.record();
    lastEmitted = event;
    if (isDataChange(record)) {
      conversion.convert(record, output::collect);
    }
    return true;
  }

  private static boolean isDataChange(SourceRecord record) {
    return record.value() instanceof Struct
        && record.valueSchema() != null
        && record.valueSchema().name() != null
        && record.valueSchema().name().endsWith(".Envelope");
  }

  private void checkEngine() {
    Throwable error = failure;
    if (error != null) {
      throw new FlinkRuntimeException(
          "the Debezium connector " + engineName + " failed: " + error.getMessage(), error);
    }
  }

  /**
   * How long a checkpoint waits for a MySQL/MariaDB connector started without schema history to
   * record the tables' schemas.
   */
  static final long HISTORY_WAIT_MILLIS = 60_000;

  /** The split at the last record emitted, for a checkpoint; null if the reader has none. */
  DebeziumSplit snapshotState(long checkpointId) {
    if (split == null) {
      return null;
    }
    awaitSchemaHistory();
    Map<String, String> offsets = split.offsets();
    if (lastEmitted != null) {
      // Folded into the split once; a checkpoint without new records keeps the split's offsets.
      SourceRecord record = lastEmitted.record();
      offsets = new LinkedHashMap<>(offsets);
      offsets.put(
          json(
              offsetKeyConverter.fromConnectData(
                  engineName, null, Arrays.asList(engineName, record.sourcePartition()))),
          json(offsetValueConverter.fromConnectData(engineName, null, record.sourceOffset())));
      uncommitted.put(checkpointId, lastEmitted);
      lastEmitted = null;
    }
    split = split.at(offsets, StateSchemaHistory.recordsForCheckpoint(historyId));
    return split;
  }

  /**
   * A MySQL/MariaDB connector started without schema history (the job's first start) records the
   * tables' schemas at the split's position ("recovery") before it streams. A checkpoint taken
   * before that holds no history, and a restore from it would record the schemas again, as they are
   * by then, at the same old position: after a schema change in between, the binlog's rows before
   * the change would be read with the schema after it (seen with MariaDB: "internal schema size 5,
   * but row size 6"). So the checkpoint waits until the schemas are recorded, up to {@link
   * #HISTORY_WAIT_MILLIS}, or until the engine fails.
   */
  private void awaitSchemaHistory() {
    if (split.connectorSnapshots()
        || PostgresSlotCheck.POSTGRES_CONNECTOR.equals(connectorProperties.get("connector.class"))
        || !split.schemaHistory().isEmpty()
        || !StateSchemaHistory.records(historyId).isEmpty()) {
      return;
    }
    long deadline = System.nanoTime() + HISTORY_WAIT_MILLIS * 1_000_000L;
    while (StateSchemaHistory.records(historyId).isEmpty()
        && failure == null
        && System.nanoTime() < deadline) {
      try {
        Thread.sleep(20);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
    if (StateSchemaHistory.records(historyId).isEmpty()) {
      LOG.warn(
          "The Debezium engine {} has not recorded the tables' schemas yet; the checkpoint holds"
              + " no schema history, and a restore from it records them as they are then",
          engineName);
    }
  }

  private static String json(byte[] bytes) {
    return new String(bytes, StandardCharsets.UTF_8);
  }

  /**
   * Tells Debezium that everything up to the checkpoint's last record is processed: from then on,
   * the connector may let the database release that part of its log.
   */
  void notifyCheckpointComplete(long checkpointId) throws Exception {
    Map.Entry<Long, RecordChangeEvent<SourceRecord>> completed =
        uncommitted.floorEntry(checkpointId);
    if (completed == null) {
      return;
    }
    uncommitted.headMap(checkpointId, true).clear();
    DebeziumEngine.RecordCommitter<RecordChangeEvent<SourceRecord>> current = committer;
    if (current == null) {
      return;
    }
    current.markProcessed(completed.getValue());
    current.markBatchFinished();
  }

  @Override
  public void close() throws Exception {
    closing = true;
    queue.wakeUpPuttingThread(0);
    try {
      if (engine != null && failure == null) {
        engine.close();
      }
    } catch (IllegalStateException e) {
      // The engine was already stopping, or had not finished starting.
      LOG.warn("Closing the Debezium engine {}: {}", engineName, e.getMessage());
    } finally {
      if (engineThread != null) {
        engineThread.shutdownNow();
      }
      StateSchemaHistory.unregister(historyId);
    }
  }
}
