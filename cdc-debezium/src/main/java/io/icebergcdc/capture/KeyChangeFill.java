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
import java.util.List;
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
 * table taken while the job runs, or one the table took since, looked up in the catalog once per
 * schema (where the catalog cannot be read, the change is passed on unfilled, and waits). Reads run
 * on the source reader's thread over a connection of their own; they are as rare as changes of key
 * in tables with out-of-line values.
 *
 * <p>Not thread-safe: the source reader's thread only.
 */
final class KeyChangeFill implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(KeyChangeFill.class);

  private final SourceDatabase database;
  private final List<ChunkedSnapshot.Table> tables;
  private final CaptureRoutes routes;

  /** The queries of each table by route, in the schema of its latest change filled. */
  private final Map<Integer, ChunkQueries> queries = new HashMap<>();

  /** The row schema id ({@link ChangeEvent#rowSchemaId()}) of each route's queries. */
  private final Map<Integer, Integer> queriedSchemaIds = new HashMap<>();

  /**
   * The schemas the catalog was asked for, by route and row schema id: null for an id the table has
   * no schema of (which it never gets later: ids are not used again).
   */
  private final Map<Long, ChangeSchema> looked = new HashMap<>();

  /** When the catalog last failed to give a schema, by route and row schema id. */
  private final Map<Long, Long> lookupFailedAt = new HashMap<>();

  /** How long a schema the catalog failed to give is not asked for again. */
  private static final long LOOKUP_RETRY_NANOS = java.util.concurrent.TimeUnit.MINUTES.toNanos(1);

  private Connection connection;

  /**
   * @param tables the job's tables as the database has them (their keys and columns), the tables
   *     that appear while the job runs coming with their routes
   */
  KeyChangeFill(SourceDatabase database, List<ChunkedSnapshot.Table> tables, CaptureRoutes routes) {
    this.database = database;
    this.tables = List.copyOf(tables);
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
      boolean ofItsSchema = table != null && queriedSchemaIds.get(route) == schemaId;
      throw new FlinkRuntimeException(
          "cannot read the values that a change of key left out, "
              + (ofItsSchema ? "of key " + table.schema().describeKey(event.after()) + " " : "")
              + "of "
              + routes.route(route).tableName(),
          e);
    }
  }

  /**
   * The schema of the rows of the table of {@code route} whose id is {@code schemaId}: the job's
   * ({@link ChangeEvent#JOB_SCHEMA}), that of a table taken while the job runs, or any other the
   * Iceberg table has had, looked up in the catalog once; null if the table has none such, or while
   * the catalog cannot be read (asked again at most once a minute).
   */
  private ChangeSchema schemaOf(int route, int schemaId) {
    ChangeSchema taken = routes.route(route).schema();
    if (schemaId == ChangeEvent.JOB_SCHEMA || schemaId == taken.schema().schemaId()) {
      return taken;
    }
    long lookup = ((long) route << 32) | (schemaId & 0xffffffffL);
    if (looked.containsKey(lookup)) {
      return looked.get(lookup);
    }
    Long failed = lookupFailedAt.get(lookup);
    long now = System.nanoTime();
    if (failed != null && now - failed < LOOKUP_RETRY_NANOS) {
      return null;
    }
    SchemaEvolution evolution = routes.evolutionOf(route);
    String tableName = routes.route(route).tableName();
    ChangeSchema schema;
    try {
      schema = evolution == null ? null : evolution.schema(tableName, schemaId);
    } catch (RuntimeException e) {
      lookupFailedAt.put(lookup, now);
      LOG.warn(
          "Cannot look up schema {} of the Iceberg table of {}: a change of key of it that lacks"
              + " values waits for a later change of its key ({})",
          schemaId,
          tableName,
          e.toString());
      return null;
    }
    if (schema == null) {
      LOG.warn(
          "The Iceberg table of {} has no schema {}: a change of key of it that lacks values waits"
              + " for a later change of its key",
          tableName,
          schemaId);
    }
    lookupFailedAt.remove(lookup);
    looked.put(lookup, schema);
    return schema;
  }

  /**
   * The queries of the table of {@code route} reading the columns the source has now into rows of
   * {@code schema}, whose id the changes carry as {@code schemaId}.
   */
  private ChunkQueries queriesOf(int route, ChangeSchema schema, int schemaId) throws SQLException {
    ChunkQueries job =
        new ChunkQueries(database, routes.sourceTable(route, tables), routes.route(route).schema());
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
