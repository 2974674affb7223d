package io.icebergcdc.capture;

import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.ColumnMask;
import io.icebergcdc.cdc.Operation;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.HashMap;
import java.util.Map;
import org.apache.flink.util.FlinkRuntimeException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Fills the values that a change of primary key left out of the row of its new key from the row's
 * current values in the database: PostgreSQL does not send a TOASTed value that an update left
 * unchanged, and where the update changed the key, the values are on the old key's row, which
 * another writer subtask holds. Updates that keep their key are filled by the writers instead.
 *
 * <p>The values read are the row's as it is now, not as it was at the change: a later change of the
 * log that set them carries them itself, and where the row is gone by now (deleted or moved to
 * another key), a later change of the log removes it, so the insert is passed on unfilled and the
 * writer keeps it until then. Reads run on the source reader's thread over a connection of their
 * own; they are as rare as changes of key in tables with out-of-line values.
 *
 * <p>Not thread-safe: the source reader's thread only.
 */
final class KeyChangeFill implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(KeyChangeFill.class);

  private final SourceDatabase database;
  private final ChunkedSnapshot snapshot;
  private final CaptureRoutes routes;
  private final Map<Integer, ChunkQueries> queries = new HashMap<>();
  private Connection connection;

  KeyChangeFill(SourceDatabase database, ChunkedSnapshot snapshot, CaptureRoutes routes) {
    this.database = database;
    this.snapshot = snapshot;
    this.routes = routes;
  }

  /**
   * {@code event} of the table of {@code route}, filled where it is a change of key missing values.
   */
  ChangeEvent fill(int route, ChangeEvent event) {
    if (event.operation() != Operation.INSERT
        || event.missingColumns().isEmpty()
        || event.rowSchemaId() != io.icebergcdc.cdc.ChangeEvent.JOB_SCHEMA) {
      // The queries read the columns of the job's schema; a change of a schema the table took
      // since waits, unfilled, for a later change of its key, as without the chunked snapshot.
      return event;
    }
    ChunkQueries table = queries.get(route);
    try {
      if (connection == null) {
        connection = database.connect();
        connection.setReadOnly(true);
      }
      if (table == null) {
        table = queriesOf(route);
      }
      try {
        return filled(table, event);
      } catch (SQLException e) {
        if (e.getSQLState() == null || !e.getSQLState().startsWith("42")) {
          throw e;
        }
        // A column the source dropped since the queries were made (a nullable one, which the job
        // keeps in its schema): made again, once.
        try {
          table = queriesOf(route);
          return filled(table, event);
        } catch (SQLException again) {
          again.addSuppressed(e);
          throw again;
        }
      }
    } catch (SQLException e) {
      close();
      throw new FlinkRuntimeException(
          "cannot read the values that a change of key left out, of key "
              + routes.route(route).schema().describeKey(event.after())
              + " of "
              + routes.route(route).tableName(),
          e);
    }
  }

  /** The queries of the table of {@code route}, of the columns the source has now. */
  private ChunkQueries queriesOf(int route) throws SQLException {
    ChunkQueries job = ChunkQueries.of(database, snapshot, routes, routes.topic(route));
    ChunkQueries table =
        job.inSchema(
            job.schema(), new java.util.ArrayList<>(job.sourceColumns(connection).keySet()));
    queries.put(route, table);
    return table;
  }

  private ChangeEvent filled(ChunkQueries table, ChangeEvent event) throws SQLException {
    try (PreparedStatement statement = table.current(connection, event.after());
        ResultSet result = statement.executeQuery()) {
      if (!result.next()) {
        LOG.debug(
            "Row of key {} of {} is gone; its change of key waits for the change that removed it",
            table.schema().describeKey(event.after()),
            table.name());
        return event;
      }
      return table.schema().fillMissing(event, table.row(result), ColumnMask.EMPTY);
    }
  }

  @Override
  public void close() {
    if (connection != null) {
      try {
        connection.close();
      } catch (SQLException e) {
        LOG.warn("Cannot close the connection that read values of changed keys", e);
      }
      connection = null;
    }
  }
}
