package io.icebergcdc.it;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.Snapshot;

/**
 * Debezium JSON events of one table whose schema changes (a column added, an int widened), for the
 * tests of schema changes followed while a job runs, and a failure injected after the first commit
 * in the evolved schema.
 */
final class EvolvingEvents {

  private static final ObjectMapper MAPPER = new ObjectMapper();

  private EvolvingEvents() {}

  /**
   * A Debezium JSON event of {@code evolve.public.items} with its Connect schema: {@code id},
   * {@code name} and an int32 {@code qty}; in the evolved schema, {@code qty} is int64 and a {@code
   * note} column follows.
   */
  static String event(
      boolean evolved, String op, long id, String name, long qty, String note, long lsn) {
    ObjectNode envelope = MAPPER.createObjectNode();
    ObjectNode schema = envelope.putObject("schema");
    schema.put("type", "struct").put("name", "evolve.public.items.Envelope");
    com.fasterxml.jackson.databind.node.ArrayNode fields = schema.putArray("fields");
    for (String field : List.of("before", "after")) {
      ObjectNode struct = fields.addObject();
      struct.put("type", "struct").put("optional", true).put("field", field);
      struct.put("name", "evolve.public.items.Value");
      com.fasterxml.jackson.databind.node.ArrayNode columns = struct.putArray("fields");
      columns.addObject().put("type", "int64").put("optional", false).put("field", "id");
      columns.addObject().put("type", "string").put("optional", true).put("field", "name");
      columns
          .addObject()
          .put("type", evolved ? "int64" : "int32")
          .put("optional", true)
          .put("field", "qty");
      if (evolved) {
        columns.addObject().put("type", "string").put("optional", true).put("field", "note");
      }
    }
    fields.addObject().put("type", "struct").put("field", "source").put("optional", false);
    fields.addObject().put("type", "string").put("field", "op").put("optional", false);
    ObjectNode payload = envelope.putObject("payload");
    ObjectNode row = MAPPER.createObjectNode();
    row.put("id", id);
    row.put("name", name);
    row.put("qty", qty);
    if (evolved) {
      row.put("note", note);
    }
    payload.set("before", op.equals("d") ? row : null);
    payload.set("after", op.equals("d") ? null : row);
    ObjectNode source = payload.putObject("source");
    source.put("schema", "public").put("table", "items").put("lsn", lsn);
    payload.put("op", op);
    return envelope.toString();
  }

  /** {@link #event} with its Kafka key. */
  static Map.Entry<String, String> keyed(
      boolean evolved, String op, long id, String name, long qty, String note, long lsn) {
    return Map.entry("{\"id\":" + id + "}", event(evolved, op, id, name, qty, note, lsn));
  }

  /** Fails the job once, just after the first commit of a snapshot in an evolved schema. */
  static final class FailAfterFirstEvolvedCommit implements io.icebergcdc.commit.CommitListener {
    private static final long serialVersionUID = 1L;
    static final java.util.concurrent.atomic.AtomicBoolean FAILED =
        new java.util.concurrent.atomic.AtomicBoolean();

    @Override
    public void afterCommit(long checkpointId, Snapshot snapshot) {
      if (snapshot.schemaId() != null
          && snapshot.schemaId() > 0
          && FAILED.compareAndSet(false, true)) {
        throw new IllegalStateException("injected failure after committing " + checkpointId);
      }
    }
  }
}
