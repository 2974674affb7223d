package io.icebergcdc.capture;

import java.util.List;
import java.util.Map;
import org.apache.flink.api.connector.source.SourceSplit;

/**
 * The one split of a {@link DebeziumSource}: where the connector is in its database's log, as
 * Debezium's own offsets, and, for connectors that keep one (MySQL, MariaDB), the schema history
 * that interprets the log from there. Both live in Flink's checkpoints, so a restore resumes the
 * connector exactly where the restored checkpoint was.
 *
 * @param offsets Kafka Connect offset entries as the engine's offset store holds them: the key
 *     (engine name and source partition) and the value (the source offset), both as JSON text
 * @param schemaHistory Debezium schema-history records, each a JSON document, oldest first
 */
public record DebeziumSplit(Map<String, String> offsets, List<String> schemaHistory)
    implements SourceSplit {

  static final String ID = "debezium";

  public DebeziumSplit {
    offsets = Map.copyOf(offsets);
    schemaHistory = List.copyOf(schemaHistory);
  }

  /** A split that starts from the beginning: the connector's initial snapshot, then its log. */
  public static DebeziumSplit initial() {
    return new DebeziumSplit(Map.of(), List.of());
  }

  @Override
  public String splitId() {
    return ID;
  }

  @Override
  public String toString() {
    return "DebeziumSplit{offsets="
        + offsets.values()
        + ", schemaHistory="
        + schemaHistory.size()
        + " records}";
  }
}
