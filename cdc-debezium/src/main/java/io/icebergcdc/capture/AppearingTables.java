package io.icebergcdc.capture;

import io.icebergcdc.cdc.ChangeSchema;
import io.icebergcdc.cdc.SchemaEvolution;
import java.io.Serializable;

/**
 * What makes ready, while a {@link DebeziumSource} runs, the tables of the source that the job's
 * table patterns match but that the job was not built with (tables created since it started), so
 * that the source captures them without ending the job: their changes go on the router's main
 * output, to the one writer of the job's tables, with rows that carry their schema's id.
 *
 * <p>Called by the enumerator when it finds such a table, by the log's reader when the enumerator
 * tells it that it took the table ({@link TablesTaken}), and by a reader given a chunk of the
 * table: each operator instance makes the table ready once, and several may do so at once, so it
 * must be idempotent.
 */
public interface AppearingTables extends Serializable {

  /**
   * Whether the job's table patterns match the table of {@code topic}: a table the job takes when
   * it appears.
   */
  boolean matches(String topic);

  /** The Debezium topic of a source table. */
  String topicOf(String namespace, String name);

  /** Whether the source has the table of {@code topic} (it may have been dropped since). */
  boolean exists(String topic);

  /** The name of the Iceberg table of {@code topic}'s table, as its changes carry it. */
  String nameOf(String topic);

  /**
   * Whether the writer of the tables that appear applies their truncates: the key-indexed writer,
   * which knows every key of a table (not one that deletes by key). Otherwise a truncate of such a
   * table is a bad record, as of the job's own tables.
   */
  boolean appliesTruncates();

  /**
   * Makes the table of {@code topic} ready to be written: its Iceberg table created from the source
   * table's schema, or an existing one checked and evolved to it.
   *
   * @param takenBefore whether the job took the table before (a reader told so, a chunk of it):
   *     then a table the source dropped since is made ready from its Iceberg table, so that its
   *     changes before the drop are still applied, or, where the job cannot write that table, with
   *     a {@link Table#refusal} that ends the job at a change of it
   * @return the table, or null if it no longer exists in the source (dropped, or renamed) and,
   *     {@code takenBefore}, has no Iceberg table either
   * @throws io.icebergcdc.cdc.RefusedSourceException if the job cannot capture the table (no
   *     primary key, a type without a mapping, a table that does not fit the job's definition)
   * @throws io.icebergcdc.cdc.NewSourceTableException if the table cannot be written with the
   *     others: the job is built again with it
   */
  Table tableOf(String topic, boolean takenBefore);

  /**
   * A table that appeared, ready.
   *
   * @param name the name its changes carry on the router's main output (its Iceberg table's)
   * @param sourceName its source table's qualified name, for messages and its schema's evolution
   * @param schema its Iceberg table's schema when it was made ready
   * @param evolution what evolves its Iceberg table when the source table's schema changes
   * @param snapshot how its chunks are read
   * @param refusal null for a table the job writes; for one it cannot (a table the source dropped,
   *     whose Iceberg table the job cannot write with its others), the message that ends the job at
   *     a change of it: its route stays, since the job's state names it long after its last change
   */
  record Table(
      String name,
      String sourceName,
      ChangeSchema schema,
      SchemaEvolution evolution,
      ChunkedSnapshot.Table snapshot,
      String refusal)
      implements Serializable {

    /** A table the job writes. */
    public Table(
        String name,
        String sourceName,
        ChangeSchema schema,
        SchemaEvolution evolution,
        ChunkedSnapshot.Table snapshot) {
      this(name, sourceName, schema, evolution, snapshot, null);
    }
  }
}
