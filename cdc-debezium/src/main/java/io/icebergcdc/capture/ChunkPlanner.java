package io.icebergcdc.capture;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Splits tables into chunks for the enumerator, one chunk at a time as readers ask for work: the
 * next chunk of a table ends at the key {@link ChunkedSnapshot#chunkRows()} rows past its start
 * (one index range query), so a table is never scanned up front and a big one starts at once.
 */
final class ChunkPlanner implements AutoCloseable {

  private final SourceDatabase database;
  private final ChunkedSnapshot snapshot;
  private final CaptureRoutes routes;
  private final Map<String, ChunkQueries> queries = new HashMap<>();
  private Connection connection;

  ChunkPlanner(SourceDatabase database, ChunkedSnapshot snapshot, CaptureRoutes routes) {
    this.database = database;
    this.snapshot = snapshot;
    this.routes = routes;
  }

  /** The next chunk of a table, and the table's progress after it. */
  record Planned(SnapshotChunk chunk, CaptureEnumeratorState.TableProgress progress) {}

  Planned next(CaptureEnumeratorState.TableProgress table) {
    ChunkQueries query = queries(table.topic());
    if (!query.bounded()) {
      return new Planned(
          new SnapshotChunk(table.topic(), table.nextChunk(), List.of(), List.of(), List.of()),
          new CaptureEnumeratorState.TableProgress(
              table.topic(), table.nextChunk() + 1, List.of(), true));
    }
    List<String> upper;
    try {
      if (connection != null && !connection.isValid(5)) {
        // Closed by the server while idle (MySQL's wait_timeout): tables may appear hours apart.
        connection.close();
        connection = null;
      }
      if (connection == null) {
        connection = database.connect();
      }
      upper = query.boundaryAfter(connection, table.nextLower(), snapshot.chunkRows());
    } catch (SQLException e) {
      throw new IllegalStateException(
          "cannot split " + query.name() + " of " + database + " into chunks: " + e.getMessage(),
          e);
    }
    if (!upper.isEmpty() && upper.equals(table.nextLower())) {
      // The database ordered the key one way and compared it another; chunks would not advance.
      throw new IllegalStateException(
          "the chunk of "
              + query.name()
              + " that starts at key "
              + upper
              + " ends there too: the database does not compare its key as it orders it; read"
              + " the table with Debezium's snapshot (--snapshot-chunk-rows 0)");
    }
    return new Planned(
        new SnapshotChunk(table.topic(), table.nextChunk(), table.nextLower(), upper, List.of()),
        new CaptureEnumeratorState.TableProgress(
            table.topic(), table.nextChunk() + 1, upper, upper.isEmpty()));
  }

  private ChunkQueries queries(String topic) {
    return queries.computeIfAbsent(topic, t -> ChunkQueries.of(database, snapshot, routes, t));
  }

  @Override
  public void close() throws SQLException {
    if (connection != null) {
      connection.close();
      connection = null;
    }
  }
}
