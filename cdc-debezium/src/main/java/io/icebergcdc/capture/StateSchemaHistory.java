package io.icebergcdc.capture;

import io.debezium.config.Configuration;
import io.debezium.document.Array;
import io.debezium.document.ArrayReader;
import io.debezium.document.Document;
import io.debezium.document.DocumentReader;
import io.debezium.document.DocumentWriter;
import io.debezium.relational.history.AbstractSchemaHistory;
import io.debezium.relational.history.HistoryRecord;
import io.debezium.relational.history.HistoryRecordComparator;
import io.debezium.relational.history.SchemaHistoryException;
import io.debezium.relational.history.SchemaHistoryListener;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Debezium's schema history (the DDL that MySQL and MariaDB connectors replay to read the binlog)
 * kept in Flink's checkpoints instead of a file or a Kafka topic. The reader registers the restored
 * records under an id it puts into the engine's configuration; the connector's history instance,
 * which Debezium creates by class name, finds them there and appends to the same list, which the
 * reader copies into each checkpoint.
 */
public final class StateSchemaHistory extends AbstractSchemaHistory {

  /** Engine property: the id under which the reader registered the history records. */
  public static final String ID = "schema.history.internal.iceberg-cdc.id";

  /** A checkpoint compacts the history only once more records than this came since the last. */
  static final int COMPACTION_FLOOR = 64;

  private static final Logger LOG = LoggerFactory.getLogger(StateSchemaHistory.class);

  private static final Map<String, Registered> REGISTRY = new ConcurrentHashMap<>();

  /**
   * A reader's history: its records; once the connector has configured its history, the connector's
   * order of positions; once the engine has configured its offset store, the offsets it holds.
   * Compaction needs both.
   */
  private static final class Registered {
    final List<String> records;
    SchemaHistoryCompaction compaction;

    /** The offsets the engine's store holds (offset key to value, as JSON). */
    Supplier<Map<String, String>> storedOffsets = Map::of;

    /** How many of the first records were at or before the position last compacted at. */
    int settled;

    /** The offsets last compacted at: nothing more folds until they move. */
    Map<String, String> compactedAt = Map.of();

    Registered(List<String> records) {
      this.records = new ArrayList<>(records);
    }
  }

  private Registered registered;

  static void register(String id, List<String> records) {
    REGISTRY.put(id, new Registered(records));
  }

  /** Where the engine's offset store ({@link StateOffsetBackingStore}) tells what it holds. */
  static void offsetsFrom(String id, Supplier<Map<String, String>> storedOffsets) {
    Registered history = REGISTRY.get(id);
    if (history != null) {
      synchronized (history) {
        history.storedOffsets = storedOffsets;
      }
    }
  }

  static List<String> records(String id) {
    Registered history = REGISTRY.get(id);
    if (history == null) {
      return List.of();
    }
    synchronized (history) {
      return List.copyOf(history.records);
    }
  }

  /**
   * The records for a checkpoint, compacted first ({@link SchemaHistoryCompaction}) when the
   * records since the last compaction outnumber both the floor and those before it: the connector's
   * history grows with every DDL of the database, and each checkpoint holds all of it.
   *
   * <p>Compacted at the offsets the engine's offset store holds, not at the checkpoint's: those are
   * the offsets of the last completed checkpoint (or the restored ones), from which the connector
   * recovers this same history when Debezium restarts it within the engine (a retriable error, such
   * as a lost connection), and which every later checkpoint's offsets follow.
   */
  static List<String> recordsForCheckpoint(String id) {
    Registered history = REGISTRY.get(id);
    if (history == null) {
      return List.of();
    }
    SchemaHistoryCompaction compaction;
    List<String> records;
    Map<String, String> stored;
    synchronized (history) {
      records = List.copyOf(history.records);
      int since = records.size() - history.settled;
      if (history.compaction == null || since <= Math.max(COMPACTION_FLOOR, history.settled)) {
        return records;
      }
      compaction = history.compaction;
      stored = history.storedOffsets.get();
      if (stored.size() != 1 || stored.equals(history.compactedAt)) {
        return records;
      }
      history.compactedAt = stored;
    }
    // Outside the lock: the engine's thread appends records meanwhile, after these.
    SchemaHistoryCompaction.Compacted compacted;
    try {
      Map.Entry<String, String> offset = stored.entrySet().iterator().next();
      Array key = ArrayReader.defaultReader().readArray(offset.getKey());
      Document position = DocumentReader.defaultReader().read(offset.getValue());
      compacted = compaction.compact(records, key.get(1).asDocument(), position);
    } catch (IOException | RuntimeException e) {
      synchronized (history) {
        // Kept whole: the history is right, only larger. Tried again once it has doubled.
        history.settled = records.size();
      }
      LOG.warn("Could not compact the connector's schema history; kept whole", e);
      return records;
    }
    synchronized (history) {
      List<String> appended =
          new ArrayList<>(history.records.subList(records.size(), history.records.size()));
      history.records.clear();
      history.records.addAll(compacted.records());
      history.records.addAll(appended);
      history.settled = compacted.settled();
      LOG.info(
          "Compacted the connector's schema history from {} to {} records",
          records.size() + appended.size(),
          history.records.size());
      return List.copyOf(history.records);
    }
  }

  static void unregister(String id) {
    REGISTRY.remove(id);
  }

  @Override
  public void configure(
      Configuration config,
      HistoryRecordComparator comparator,
      SchemaHistoryListener listener,
      boolean useCatalogBeforeSchema) {
    super.configure(config, comparator, listener, useCatalogBeforeSchema);
    String id = config.getString(ID);
    registered = id == null ? null : REGISTRY.get(id);
    if (registered == null) {
      throw new SchemaHistoryException(
          "no schema history registered under '" + id + "'; this history is for DebeziumSource");
    }
    synchronized (registered) {
      // A history recovered from DDL rather than from table changes is not compacted.
      registered.compaction =
          comparator == null || config.getBoolean(INTERNAL_PREFER_DDL)
              ? null
              : new SchemaHistoryCompaction(comparator, useCatalogBeforeSchema);
    }
  }

  @Override
  protected void storeRecord(HistoryRecord record) throws SchemaHistoryException {
    try {
      String json = DocumentWriter.defaultWriter().write(record.document());
      synchronized (registered) {
        registered.records.add(json);
      }
    } catch (IOException e) {
      throw new SchemaHistoryException("cannot write schema history record " + record, e);
    }
  }

  @Override
  protected void recoverRecords(Consumer<HistoryRecord> consumer) {
    for (String json : copy()) {
      try {
        consumer.accept(new HistoryRecord(DocumentReader.defaultReader().read(json)));
      } catch (IOException e) {
        throw new SchemaHistoryException("cannot read schema history record " + json, e);
      }
    }
  }

  private List<String> copy() {
    synchronized (registered) {
      return new ArrayList<>(registered.records);
    }
  }

  @Override
  public boolean exists() {
    synchronized (registered) {
      return !registered.records.isEmpty();
    }
  }

  @Override
  public boolean storageExists() {
    return true;
  }

  @Override
  public String toString() {
    return "Flink state";
  }
}
