package io.icebergcdc.capture;

import io.icebergcdc.cdc.BadRecordPolicy;
import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.ChangeSchema;
import io.icebergcdc.cdc.ColumnMask;
import io.icebergcdc.cdc.DeadLetter;
import io.icebergcdc.cdc.MalformedChangeException;
import io.icebergcdc.cdc.Operation;
import io.icebergcdc.cdc.SchemaEvolution;
import io.icebergcdc.cdc.SourceSequence;
import io.icebergcdc.cdc.TableRoute;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.util.FlinkRuntimeException;

/**
 * Reads the rows of one {@link SnapshotChunk} at a time over one JDBC connection, in key order,
 * into snapshot reads positioned before the log ({@link SourceSequence#beforeLog}), and remembers
 * the last key it emitted so that a checkpoint can resume the chunk after it.
 */
final class ChunkReader implements AutoCloseable {

  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(ChunkReader.class);

  private final SourceDatabase database;
  private final ChunkedSnapshot snapshot;
  private final CaptureRoutes routes;
  private final SourceSequence position;
  private final Map<String, ChunkQueries> queries = new HashMap<>();

  /** The id of the rows each table's queries read ({@link ChangeEvent#rowSchemaId()}), by topic. */
  private final Map<String, Integer> rowSchemaIds = new HashMap<>();

  /**
   * The source's columns and their types, by topic, when the queries of the table last matched the
   * Iceberg table's schema ({@link #followSchema}).
   */
  private final Map<String, Map<String, ChunkQueries.SourceColumn>> followedColumns =
      new HashMap<>();

  private Connection connection;
  private SnapshotChunk chunk;
  private int route;
  private ChunkQueries table;
  private PreparedStatement statement;
  private ResultSet result;
  private GenericRowData last;
  private int batchRows;
  private long rows;

  ChunkReader(SourceDatabase database, ChunkedSnapshot snapshot, CaptureRoutes routes) {
    this.database = database;
    this.snapshot = snapshot;
    this.routes = routes;
    this.position =
        SourceSequence.beforeLog(
            database.dialect() == SourceDatabase.Dialect.POSTGRES
                ? SourceSequence.Kind.POSTGRES_LSN
                : SourceSequence.Kind.MYSQL_BINLOG);
  }

  /** Whether a chunk is being read. */
  boolean reading() {
    return chunk != null;
  }

  /**
   * Starts reading {@code next}; the chunk before must be done. False, reading nothing, for a chunk
   * of a table the job does not capture (any longer).
   */
  boolean open(SnapshotChunk next) {
    if (chunk != null) {
      throw new IllegalStateException("chunk " + chunk + " is still being read");
    }
    // A chunk of a table that appeared while the job runs is handed out only once it is taken.
    route = routes.take(next.topic());
    if (route < 0) {
      // Restored from a job that captured the table, or a table that appeared and is gone.
      LOG.warn(
          "Skipped {}: the job no longer captures its table, or the table no longer exists", next);
      return false;
    }
    table =
        queries.computeIfAbsent(
            next.topic(), topic -> ChunkQueries.of(database, snapshot, routes, topic));
    chunk = table.bounded() ? next : next.readUpTo(List.of());
    last = null;
    try {
      if (connection != null && !connection.isValid(5)) {
        // Closed by the server while idle (MySQL's wait_timeout): chunks may come hours apart.
        close();
        connection = null;
      }
      if (connection == null) {
        connect();
      }
      followSchema(next.topic());
      query();
    } catch (SQLException e) {
      if (droppedSince(e)) {
        return false;
      }
      throw failure(e);
    }
    return true;
  }

  /**
   * Reads the table in the columns it has now where the job follows its schema changes ({@link
   * CaptureRoutes#evolutionOf}): when the queries no longer read the source's columns as they are
   * ({@link ChunkQueries#read}: a column added, dropped or widened), the queries read the Iceberg
   * table's current schema (which the source's reader of the log evolved), of the columns the
   * source still has, a widened column wide. A column widened before any change of the log showed
   * it is widened in the Iceberg table by this reader (the log's reader then finds it so). A column
   * added in the source before any change showed it to the log's reader is not in the table yet:
   * the table is looked at again at each chunk, and the column read once it is.
   */
  private void followSchema(String topic) throws SQLException {
    SchemaEvolution evolution = routes.evolutionOf(route);
    if (evolution == null) {
      return;
    }
    Map<String, ChunkQueries.SourceColumn> source = table.sourceColumns(connection);
    if (source.equals(followedColumns.get(topic))) {
      return;
    }
    if (table.read(source)) {
      // What later chunks compare the source with: the Iceberg table is looked at only when the
      // source is no longer read as it is.
      followedColumns.put(topic, source);
      return;
    }
    String sourceTable = routes.route(route).tableName();
    List<String> columns = new java.util.ArrayList<>(source.keySet());
    ChangeSchema current = evolution.current(sourceTable);
    ChunkQueries followed = table.inSchema(current, columns);
    Map<String, org.apache.iceberg.types.Type> widened = followed.widened(source);
    java.util.Set<String> relaxed = followed.relaxed(source);
    if (!widened.isEmpty() || !relaxed.isEmpty()) {
      // Widened, or let be null, in the source before the log's reader met a change that shows it:
      // the chunks hold such values already, so the table follows now (the log's reader then
      // finds it so).
      List<String> changes = new java.util.ArrayList<>();
      widened.forEach((column, type) -> changes.add("column '" + column + "' widened to " + type));
      relaxed.forEach(column -> changes.add("column '" + column + "' allows nulls"));
      current = evolution.evolve(sourceTable, followed.widen(widened, relaxed), changes);
      followed = table.inSchema(current, columns);
    }
    if (followed.read(source)) {
      // Read as it is: later chunks look again only when the source changes again. Otherwise (a
      // column added that no change has shown the log's reader yet) each chunk looks again.
      followedColumns.put(topic, source);
    }
    if (current.equals(table.schema()) && followed.selected().equals(table.selected())) {
      return;
    }
    table = followed;
    queries.put(topic, table);
    rowSchemaIds.put(
        topic,
        current.equals(routes.route(route).schema()) && !routes.appeared(route)
            ? ChangeEvent.JOB_SCHEMA
            : current.schema().schemaId());
  }

  /** Reads the chunk's next batch, or the whole table: its rows from after the last key read. */
  private void query() throws SQLException {
    execute();
    batchRows = 0;
    if (routes.evolutionOf(route) == null) {
      return;
    }
    Map<String, ChunkQueries.SourceColumn> given = ChunkQueries.columnsOf(result);
    if (table.widened(given).isEmpty() && table.relaxed(given).isEmpty()) {
      return;
    }
    // Widened, or let be null, in the source after the chunk looked at its columns (between two of
    // its batches): read in the narrower type, a wider value would be refused as a bad row or
    // rounded, and a null would not fit. The chunk is read again from where it is, in the schema
    // the table follows to.
    LOG.info("{} of {}: a column changed in the source while it was read", chunk, table.name());
    reconnect();
    followSchema(chunk.topic());
    execute();
  }

  private void execute() throws SQLException {
    // Batches are queries of their own; a table read whole is one cursor, which PostgreSQL
    // fetches in parts only inside a transaction.
    if (connection.getAutoCommit() != table.bounded()) {
      connection.setAutoCommit(table.bounded());
    }
    statement = table.rows(connection, chunk, snapshot.fetchRows());
    result = statement.executeQuery();
  }

  private void connect() throws SQLException {
    connection = database.connect();
    connection.setReadOnly(true);
  }

  /**
   * Ends the connection and opens another, dropping the result being read (which MySQL's driver
   * would otherwise read to its end first).
   */
  private void reconnect() throws SQLException {
    connection.abort(Runnable::run);
    result = null;
    statement = null;
    connect();
  }

  /**
   * The chunk's next row, or null when the chunk is done (then nothing is being read). A row that
   * does not fit the table fails the job, naming the table and the row's key, or becomes a dead
   * letter.
   */
  CapturedChange next() {
    try {
      while (!result.next()) {
        result.close();
        statement.close();
        if (!table.bounded() || batchRows < snapshot.fetchRows()) {
          finish();
          return null;
        }
        // A full batch: the chunk may go on after its last key.
        chunk = progress();
        query();
      }
      batchRows++;
      String refusal = routes.refusalOf(route);
      if (refusal != null) {
        // A table of its name created again since this reader took the dropped one.
        throw new io.icebergcdc.cdc.RefusedSourceException(chunk + ": " + refusal);
      }
      GenericRowData row;
      try {
        row = table.row(result);
      } catch (RuntimeException e) {
        // The chunk goes on after this row, whether it fails the job or becomes a dead letter.
        last = table.keyRow(result);
        return badRow(e);
      }
      last = row;
      rows++;
      ChangeSchema schema = table.schema();
      ChangeEvent read =
          new ChangeEvent(
              routes.route(route).tableName(),
              Operation.SNAPSHOT_READ,
              schema.keyOf(row),
              null,
              row,
              position,
              System.currentTimeMillis());
      int rowSchemaId =
          rowSchemaIds.getOrDefault(
              chunk.topic(),
              // The rows of a table that appeared describe themselves from the start: the job's
              // serializers do not know its schema.
              routes.appeared(route) ? schema.schema().schemaId() : ChangeEvent.JOB_SCHEMA);
      if (rowSchemaId != ChangeEvent.JOB_SCHEMA) {
        read = read.inSchema(rowSchemaId, null, row, ColumnMask.EMPTY, ColumnMask.EMPTY);
      }
      return routes.appeared(route)
          ? CapturedChange.appeared(read.withTable(routes.mainOutputName(route)))
          : CapturedChange.of(route, read);
    } catch (SQLException e) {
      if (droppedSince(e)) {
        return null;
      }
      throw failure(e);
    }
  }

  /**
   * Whether the chunk failed because its table, one that appeared while the job runs, was dropped
   * since the job took it: then the chunk is done, with nothing more to read, and the connection,
   * whose transaction the failure may have ended, is closed.
   */
  private boolean droppedSince(SQLException e) {
    if (!routes.appeared(route) || routes.appearing().exists(chunk.topic())) {
      return false;
    }
    LOG.warn("Skipped the rest of {}: its table no longer exists ({})", chunk, e.getMessage());
    try {
      if (connection != null) {
        connection.close();
      }
    } catch (SQLException closing) {
      LOG.debug("Closing the connection of a dropped table's chunk", closing);
    }
    connection = null;
    result = null;
    statement = null;
    chunk = null;
    last = null;
    return true;
  }

  private CapturedChange badRow(RuntimeException e) throws SQLException {
    StringBuilder key = new StringBuilder();
    for (int i = 1; i <= result.getMetaData().getColumnCount(); i++) {
      String name = result.getMetaData().getColumnName(i);
      if (table.schema().keyColumns().contains(name)) {
        key.append(key.length() == 0 ? "" : ", ")
            .append(name)
            .append('=')
            .append(result.getString(i));
      }
    }
    MalformedChangeException error =
        new MalformedChangeException(
            routes.origin()
                + ", snapshot of "
                + table.name()
                + ", key "
                + key
                + ": "
                + e.getMessage(),
            e);
    if (routes.badRecordPolicy() == BadRecordPolicy.FAIL) {
      throw TableRoute.withRecord(error, key.toString());
    }
    return CapturedChange.deadLetter(
        new DeadLetter(
                routes.route(route).tableName(),
                routes.origin(),
                error.getMessage(),
                key.toString())
            .writtenAs(routes.mainOutputName(route)));
  }

  /** The chunk being read, read up to the last row emitted; null if none is being read. */
  SnapshotChunk progress() {
    if (chunk == null) {
      return null;
    }
    return last == null || !table.bounded() ? chunk : chunk.readUpTo(table.keyOf(last));
  }

  /** Rows emitted since the reader started. */
  long rows() {
    return rows;
  }

  private void finish() throws SQLException {
    if (!connection.getAutoCommit()) {
      connection.commit();
    }
    result = null;
    statement = null;
    chunk = null;
    last = null;
  }

  private FlinkRuntimeException failure(SQLException e) {
    return new FlinkRuntimeException(
        "cannot read " + chunk + " from " + database + ": " + e.getMessage(), e);
  }

  @Override
  public void close() throws SQLException {
    if (connection == null) {
      return;
    }
    if (result != null && database.dialect() == SourceDatabase.Dialect.MYSQL) {
      // Closing a streaming result reads the rest of it first: end the connection instead.
      connection.abort(Runnable::run);
      return;
    }
    try {
      if (statement != null) {
        statement.close();
      }
    } finally {
      connection.close();
    }
  }
}
