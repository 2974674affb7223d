package io.icebergcdc.capture;

import java.io.Serializable;
import java.util.List;

/**
 * How a {@link DebeziumSource} reads the initial snapshot itself instead of the connector: each
 * table in chunks of about {@code chunkRows} rows by primary key, read by all of the source's
 * readers in parallel beside the log, each chunk once it is done remembered by the checkpoints.
 *
 * <p>The log is read from a position taken before the first chunk (for PostgreSQL, the replication
 * slot's, created first if missing), and every row a chunk reads carries {@link
 * io.icebergcdc.cdc.SourceSequence#beforeLog}: any change the log has for its key wins over it, so
 * the rows read while the table changes need no lock and no watermark.
 *
 * @param tables the tables to snapshot, with their primary keys
 * @param chunkRows the rows of a chunk
 * @param fetchRows the rows a reader fetches from the database at a time
 */
public record ChunkedSnapshot(List<Table> tables, int chunkRows, int fetchRows)
    implements Serializable {

  public static final int DEFAULT_CHUNK_ROWS = 50_000;
  public static final int DEFAULT_FETCH_ROWS = 5_000;

  public ChunkedSnapshot {
    tables = List.copyOf(tables);
    if (chunkRows < 1 || fetchRows < 1) {
      throw new IllegalArgumentException(
          "a snapshot chunk needs at least one row, and a fetch too: "
              + chunkRows
              + ", "
              + fetchRows);
    }
  }

  /**
   * A table to snapshot.
   *
   * @param topic its Debezium topic, which names its route
   * @param namespace its PostgreSQL schema or MySQL database
   * @param name its name
   * @param primaryKey its primary key's columns, in key order
   * @param columns the columns the source table has, which the chunks read; the route's schema may
   *     have more (columns the source dropped), which the chunks' rows leave null, as the log's do
   * @param keyBoundsChunks whether the database compares key values as it orders them; a table
   *     whose key does not (MySQL's {@code enum}) is read as one chunk
   */
  public record Table(
      String topic,
      String namespace,
      String name,
      List<String> primaryKey,
      List<String> columns,
      boolean keyBoundsChunks)
      implements Serializable {
    public Table {
      primaryKey = List.copyOf(primaryKey);
      columns = List.copyOf(columns);
      if (primaryKey.isEmpty()) {
        throw new IllegalArgumentException("table " + namespace + "." + name + " has no key");
      }
      if (!columns.containsAll(primaryKey)) {
        throw new IllegalArgumentException(
            "table "
                + namespace
                + "."
                + name
                + " has no key columns "
                + primaryKey
                + " among "
                + columns);
      }
    }
  }

  /** The table of {@code tables} whose changes are on Debezium's {@code topic}. */
  static Table table(List<Table> tables, String topic) {
    for (Table table : tables) {
      if (table.topic().equals(topic)) {
        return table;
      }
    }
    throw new IllegalArgumentException("no table of the job has topic " + topic);
  }
}
