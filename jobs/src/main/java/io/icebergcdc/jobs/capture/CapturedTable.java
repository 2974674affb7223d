package io.icebergcdc.jobs.capture;

import io.icebergcdc.capture.ChunkedSnapshot;
import java.util.List;
import org.apache.iceberg.Schema;
import org.apache.iceberg.types.Types;

/**
 * A source table the job captures, with the Iceberg schema its rows map to.
 *
 * @param namespace the PostgreSQL schema or the MySQL database
 * @param name the table's name
 * @param schema the Iceberg schema, with the primary key as identifier fields
 * @param primaryKey the primary key's columns, in key order
 * @param keyBoundsChunks whether the database compares the key's values as it orders them, so that
 *     they can bound snapshot chunks: not for MySQL's {@code enum} and {@code set}, ordered by
 *     member number but compared with text as text
 */
public record CapturedTable(
    String namespace,
    String name,
    Schema schema,
    List<String> primaryKey,
    boolean keyBoundsChunks) {

  public CapturedTable(String namespace, String name, Schema schema, List<String> primaryKey) {
    this(namespace, name, schema, primaryKey, true);
  }

  /** Debezium's topic for the table's changes. */
  public String topic(String prefix) {
    return prefix + "." + namespace + "." + name;
  }

  public String qualifiedName() {
    return namespace + "." + name;
  }

  /** The table as the chunked snapshot reads it, its changes on Debezium's {@code topic}. */
  public ChunkedSnapshot.Table chunkedSnapshotTable(String topic) {
    return new ChunkedSnapshot.Table(
        topic,
        namespace,
        name,
        primaryKey,
        schema.columns().stream().map(Types.NestedField::name).toList(),
        keyBoundsChunks);
  }
}
