package io.icebergcdc.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.types.Types;

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
   * note} column follows. Where {@code keyWidened}, the key {@code id} is an int32 too, and an
   * int64 in the evolved schema. Where {@code nameDropped} (evolved only), the source dropped
   * {@code name}: the schema and the row lack it.
   */
  private static String event(
      boolean keyWidened,
      boolean evolved,
      boolean nameDropped,
      String op,
      long id,
      String name,
      long qty,
      String note,
      long lsn) {
    ObjectNode envelope = MAPPER.createObjectNode();
    ObjectNode schema = envelope.putObject("schema");
    schema.put("type", "struct").put("name", "evolve.public.items.Envelope");
    com.fasterxml.jackson.databind.node.ArrayNode fields = schema.putArray("fields");
    for (String field : List.of("before", "after")) {
      ObjectNode struct = fields.addObject();
      struct.put("type", "struct").put("optional", true).put("field", field);
      struct.put("name", "evolve.public.items.Value");
      com.fasterxml.jackson.databind.node.ArrayNode columns = struct.putArray("fields");
      columns
          .addObject()
          .put("type", keyWidened && !evolved ? "int32" : "int64")
          .put("optional", false)
          .put("field", "id");
      if (!nameDropped) {
        columns.addObject().put("type", "string").put("optional", true).put("field", "name");
      }
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
    if (!nameDropped) {
      row.put("name", name);
    }
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

  /**
   * Events of the table with the rows they leave, numbered by an LSN of their own: the model is
   * what {@link #rows} reads from a table that applied them, {@code name qty note} by id.
   */
  static final class Changelog {
    private final Map<Long, String> model = new TreeMap<>();
    private final boolean keyWidened;
    private long lsn;

    Changelog(long firstLsn) {
      this(firstLsn, false);
    }

    /**
     * @param keyWidened whether the key column is an int32 in the first schema, widened to an int64
     */
    Changelog(long firstLsn, boolean keyWidened) {
      this.lsn = firstLsn;
      this.keyWidened = keyWidened;
    }

    /** The event of a change, in the new schema or the old, its row left in the model. */
    String event(boolean evolved, String op, long id, String name, long qty, String note) {
      if (op.equals("d")) {
        model.remove(id);
      } else {
        model.put(id, name + " " + qty + " " + note);
      }
      if (keyWidened && !evolved && id != (int) id) {
        throw new IllegalArgumentException("key " + id + " is not an int32");
      }
      return EvolvingEvents.event(keyWidened, evolved, false, op, id, name, qty, note, ++lsn);
    }

    /**
     * The event of a change in the evolved schema after the source dropped {@code name}: the row it
     * leaves has no name (the Iceberg column stays, null in the rows changed since).
     */
    Map.Entry<String, String> keyedWithoutName(String op, long id, long qty, String note) {
      if (op.equals("d")) {
        model.remove(id);
      } else {
        model.put(id, null + " " + qty + " " + note);
      }
      return Map.entry(
          "{\"id\":" + id + "}",
          EvolvingEvents.event(keyWidened, true, true, op, id, null, qty, note, ++lsn));
    }

    /** The event of a truncate of the table, in the old schema: the model is emptied. */
    String truncate() {
      model.clear();
      ObjectNode envelope;
      try {
        envelope =
            (ObjectNode)
                MAPPER.readTree(
                    EvolvingEvents.event(keyWidened, false, false, "c", 0, null, 0, null, ++lsn));
      } catch (java.io.IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
      ObjectNode payload = (ObjectNode) envelope.get("payload");
      payload.putNull("before");
      payload.putNull("after");
      payload.put("op", "t");
      return envelope.toString();
    }

    /** {@link #event} with its Kafka key. */
    Map.Entry<String, String> keyed(
        boolean evolved, String op, long id, String name, long qty, String note) {
      return Map.entry("{\"id\":" + id + "}", event(evolved, op, id, name, qty, note));
    }

    /** The rows the events so far leave, by id. */
    Map<Long, String> model() {
      return model;
    }
  }

  /**
   * The table's rows as {@code name qty note} by id; a null note while it has no such column.
   *
   * @throws AssertionError if two rows have one id (a delete that did not mask its row)
   */
  static Map<Long, String> rows(Table table) throws IOException {
    Map<Long, String> rows = new TreeMap<>();
    boolean hasNote = table.schema().findField("note") != null;
    try (CloseableIterable<Record> records = IcebergGenerics.read(table).build()) {
      for (Record record : records) {
        long id = ((Number) record.getField("id")).longValue();
        if (rows.containsKey(id)) {
          throw new AssertionError("table " + table.name() + " has two rows of id " + id);
        }
        rows.put(
            id,
            record.getField("name")
                + " "
                + record.getField("qty")
                + " "
                + (hasNote ? record.getField("note") : null));
      }
    }
    return rows;
  }

  /**
   * Checks that the table took the evolved schema (a string {@code note}, a long {@code qty}), that
   * the failure after its first evolved commit happened, and that one job committed every
   * checkpoint of the table once: the job was never ended for the change.
   */
  static void assertEvolvedByOneJob(Table table) {
    assertThat(table.schema().findField("note").type()).isEqualTo(Types.StringType.get());
    assertThat(table.schema().findField("qty").type()).isEqualTo(Types.LongType.get());
    assertThat(FailAfterFirstEvolvedCommit.FAILED).isTrue();
    assertThat(Commits.jobsThatCommittedEachCheckpointOnce(table))
        .as("one job, never ended for the schema change")
        .hasSize(1);
  }
}
