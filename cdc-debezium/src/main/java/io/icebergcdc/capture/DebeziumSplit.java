package io.icebergcdc.capture;

import java.util.List;
import java.util.Map;

/**
 * The one split of a {@link DebeziumSource}: where the connector is in its database's log, as
 * Debezium's own offsets, and, for connectors that keep one (MySQL, MariaDB), the schema history
 * that interprets the log from there. Both live in Flink's checkpoints, so a restore resumes the
 * connector exactly where the restored checkpoint was.
 *
 * @param offsets Kafka Connect offset entries as the engine's offset store holds them: the key
 *     (engine name and source partition) and the value (the source offset), both as JSON text
 * @param schemaHistory Debezium schema-history records, each a JSON document, oldest first
 * @param connectorSnapshots whether the connector takes the tables' initial snapshot itself
 *     (Debezium's {@code snapshot.mode=initial}, one reader); false when the source reads the
 *     snapshot in chunks beside the log ({@link SnapshotChunk}) and the connector only streams
 */
public record DebeziumSplit(
    Map<String, String> offsets, List<String> schemaHistory, boolean connectorSnapshots)
    implements CaptureSplit {

  static final String ID = "debezium";

  public DebeziumSplit {
    offsets = Map.copyOf(offsets);
    schemaHistory = List.copyOf(schemaHistory);
  }

  /** A split that starts from the beginning: the connector's initial snapshot, then its log. */
  public static DebeziumSplit initial() {
    return new DebeziumSplit(Map.of(), List.of(), true);
  }

  DebeziumSplit withConnectorSnapshots(boolean snapshots) {
    return new DebeziumSplit(offsets, schemaHistory, snapshots);
  }

  /** This split at new offsets and schema history. */
  DebeziumSplit at(Map<String, String> newOffsets, List<String> newSchemaHistory) {
    return new DebeziumSplit(newOffsets, newSchemaHistory, connectorSnapshots);
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
        + " records"
        + (connectorSnapshots ? "" : ", snapshot read in chunks")
        + "}";
  }
}
