package io.icebergcdc.capture;

import io.debezium.config.Configuration;
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

  private static final Map<String, List<String>> REGISTRY = new ConcurrentHashMap<>();

  private List<String> records;

  static void register(String id, List<String> records) {
    REGISTRY.put(id, new ArrayList<>(records));
  }

  static List<String> records(String id) {
    List<String> records = REGISTRY.get(id);
    if (records == null) {
      return List.of();
    }
    synchronized (records) {
      return List.copyOf(records);
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
    records = id == null ? null : REGISTRY.get(id);
    if (records == null) {
      throw new SchemaHistoryException(
          "no schema history registered under '" + id + "'; this history is for DebeziumSource");
    }
  }

  @Override
  protected void storeRecord(HistoryRecord record) throws SchemaHistoryException {
    try {
      String json = DocumentWriter.defaultWriter().write(record.document());
      synchronized (records) {
        records.add(json);
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
    synchronized (records) {
      return new ArrayList<>(records);
    }
  }

  @Override
  public boolean exists() {
    synchronized (records) {
      return !records.isEmpty();
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
