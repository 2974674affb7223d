package io.icebergcdc.capture;

import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.ChangeSchema;
import io.icebergcdc.cdc.ColumnMask;
import io.icebergcdc.cdc.Operation;
import io.icebergcdc.cdc.SchemaEvolution;
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
 * writer keeps it until then. The row is read in the schema of the change: the job's, that of a
 * table taken while the job runs, or the one the table took since (where the change is of an older
 * schema than the table's current one, it is passed on unfilled). Reads run on the source reader's
 * thread over a connection of their own; they are as rare as changes of key in tables with
 * out-of-line values.
 *
 * <p>Not thread-safe: the source reader's thread only.
 */
final class KeyChangeFill implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(KeyChangeFill.class);

  private final SourceDatabase database;
  private final ChunkedSnapshot snapshot;
  private final CaptureRoutes routes;

  /** The queries of each table by route, in the schema of its latest change filled. */
  private final Map<Integer, ChunkQueries> queries = new HashMap<>();

  /** The row schema id ({@link ChangeEvent#rowSchemaId()}) of each route's queries. */
  private final Map<Integer, Integer> queriedSchemaIds = new HashMap<>();

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
    if (event.operation() != Operation.INSERT || event.missingColumns().isEmpty()) {
      return event;
    }
    int schemaId = event.rowSchemaId();
    ChunkQueries table = queries.get(route);
    try {
      if (connection == null) {
        connection = database.connect();
        connection.setReadOnly(true);
      }
      if (table == null || queriedSchemaIds.get(route) != schemaId) {
        ChangeSchema schema = schemaOf(route, schemaId);
        if (schema == null) {
          LOG.debug(
              "A change of key of {} is of an older schema than its table's (id {}): it waits for"
                  + " a later change of its key",
              routes.route(route).tableName(),
              schemaId);
          return event;
        }
        table = queriesOf(route, schema, schemaId);
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
          table = queriesOf(route, table.schema(), schemaId);
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
              + (table == null ? routes.route(route).schema() : table.schema())
                  .describeKey(event.after())
              + " of "
              + routes.route(route).tableName(),
          e);
    }
  }

  /**
   * The schema of the rows of the table of {@code route} whose id is {@code schemaId}: the job's
   * ({@link ChangeEvent#JOB_SCHEMA}), that of a table taken while the job runs, or the table's
   * current one; null if it is none of them (a schema the table left since).
   */
  private ChangeSchema schemaOf(int route, int schemaId) {
    ChangeSchema taken = routes.route(route).schema();
    if (schemaId == ChangeEvent.JOB_SCHEMA || schemaId == taken.schema().schemaId()) {
      return taken;
    }
    SchemaEvolution evolution = routes.evolutionOf(route);
    if (evolution == null) {
      return null;
    }
    ChangeSchema current = evolution.current(routes.route(route).tableName());
    return current.schema().schemaId() == schemaId ? current : null;
  }

  /**
   * The queries of the table of {@code route} reading the columns the source has now into rows of
   * {@code schema}, whose id the changes carry as {@code schemaId}.
   */
  private ChunkQueries queriesOf(int route, ChangeSchema schema, int schemaId) throws SQLException {
    ChunkQueries job = ChunkQueries.of(database, snapshot, routes, routes.topic(route));
    ChunkQueries table =
        job.inSchema(schema, new java.util.ArrayList<>(job.sourceColumns(connection).keySet()));
    queries.put(route, table);
    queriedSchemaIds.put(route, schemaId);
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
