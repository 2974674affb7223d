package io.icebergcdc.capture;

import io.icebergcdc.cdc.ChangeSchema;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/**
 * The SQL that splits one table into chunks by primary key and reads a chunk, in key order, with
 * row-value comparisons ({@code (a, b) >= (?, ?)}) that PostgreSQL and MySQL both answer from the
 * primary key's index.
 */
final class ChunkQueries {

  private final SourceDatabase database;
  private final ChunkedSnapshot.Table table;
  private final ChangeSchema schema;
  private final String qualified;
  private final String key;
  private final String keyParameters;
  // A composite key's first column, compared on its own too: MariaDB reads an index range only
  // from comparisons of single columns, not of row values.
  private final String leading;
  private final List<Type> keyTypes = new ArrayList<>();

  /**
   * The types the key's values are read and bound as in the queries ({@link
   * SnapshotColumns#boundType}): a key the source widened after these queries were made still reads
   * and binds.
   */
  private final List<Type> boundTypes = new ArrayList<>();

  private final RowData.FieldGetter[] keyGetters;
  private final boolean bounded;
  private final List<String> selected;
  private final int[] positions;
  private final SnapshotColumns.Read[] reads;

  /** The queries of the snapshot's table of {@code topic}, in the schema of its route. */
  static ChunkQueries of(
      SourceDatabase database, ChunkedSnapshot snapshot, CaptureRoutes routes, String topic) {
    int route = routes.take(topic);
    if (route < 0) {
      throw new IllegalStateException(
          "the job captures no table of topic " + topic + "; it captures " + routes.topics());
    }
    return new ChunkQueries(
        database, routes.snapshotTable(route, snapshot), routes.route(route).schema());
  }

  ChunkQueries(SourceDatabase database, ChunkedSnapshot.Table table, ChangeSchema schema) {
    this.database = database;
    this.table = table;
    this.schema = schema;
    this.qualified = database.table(table.namespace(), table.name());
    // One column compares as itself, which every optimizer reads as an index range.
    boolean single = table.primaryKey().size() == 1;
    this.key =
        single
            ? database.quote(table.primaryKey().get(0))
            : "(" + database.columns(table.primaryKey()) + ")";
    this.keyParameters =
        single
            ? "?"
            : "(" + String.join(", ", table.primaryKey().stream().map(c -> "?").toList()) + ")";
    this.leading = single ? null : database.quote(table.primaryKey().get(0));
    this.keyGetters = new RowData.FieldGetter[table.primaryKey().size()];
    List<Types.NestedField> columns = schema.schema().columns();
    boolean allBound = true;
    for (int k = 0; k < keyGetters.length; k++) {
      String column = table.primaryKey().get(k);
      int position = -1;
      for (int i = 0; i < columns.size(); i++) {
        if (columns.get(i).name().equals(column)) {
          position = i;
        }
      }
      if (position < 0) {
        throw new IllegalArgumentException(
            "key column '" + column + "' of " + name() + " is not in the table's schema");
      }
      keyGetters[k] = RowData.createFieldGetter(schema.rowType().getTypeAt(position), position);
      Type type = columns.get(position).type();
      keyTypes.add(type);
      boundTypes.add(SnapshotColumns.boundType(type));
      allBound &= SnapshotColumns.boundsChunks(type);
    }
    this.bounded = allBound && table.keyBoundsChunks();
    this.selected = table.columns();
    this.positions = new int[selected.size()];
    this.reads = new SnapshotColumns.Read[selected.size()];
    for (int c = 0; c < selected.size(); c++) {
      String column = selected.get(c);
      positions[c] = -1;
      for (int i = 0; i < columns.size(); i++) {
        if (columns.get(i).name().equals(column)) {
          positions[c] = i;
          reads[c] = SnapshotColumns.reader(columns.get(i).type());
        }
      }
      if (positions[c] < 0) {
        throw new IllegalArgumentException(
            "column '" + column + "' of " + name() + " is not in the table's schema " + schema);
      }
    }
  }

  /**
   * The key columns only of the current row of a result of {@link #rows} (the other columns null):
   * where a chunk goes on after a row that could not be read whole.
   */
  GenericRowData keyRow(ResultSet result) throws SQLException {
    GenericRowData row = new GenericRowData(schema.schema().columns().size());
    for (int c = 0; c < reads.length; c++) {
      if (table.primaryKey().contains(selected.get(c))) {
        row.setField(positions[c], reads[c].read(result, c + 1));
      }
    }
    return row;
  }

  /**
   * The current row of a result of {@link #rows}, in the schema's order; a column the source no
   * longer has (kept by the Iceberg table) is null.
   */
  GenericRowData row(ResultSet result) throws SQLException {
    GenericRowData row = new GenericRowData(schema.schema().columns().size());
    for (int c = 0; c < reads.length; c++) {
      try {
        row.setField(positions[c], reads[c].read(result, c + 1));
      } catch (SQLException e) {
        if (!isDataException(e)) {
          throw e;
        }
        // A value the driver cannot give as the column's type (MySQL's TIME '36:00:00', say):
        // a bad row, which fails the job naming it or goes to the dead letters, not a failure
        // that the restart meets again at the same row.
        throw new IllegalArgumentException(
            "column '" + selected.get(c) + "' of " + name() + ": " + e.getMessage(), e);
      }
    }
    return row;
  }

  /**
   * Whether the driver refused a value rather than failed to reach the database: SQL's data
   * exceptions (SQLSTATE class 22) and MySQL Connector/J's illegal argument ({@code S1009}).
   */
  static boolean isDataException(SQLException e) {
    String state = e.getSQLState();
    return state != null && (state.startsWith("22") || state.equals("S1009"));
  }

  /** A column's type in the source, as the driver gives it ({@link java.sql.Types}). */
  record SourceColumn(int jdbcType, int precision, int scale, boolean nullable) {}

  /** The columns the table has in the source now, in its order, with their types. */
  java.util.LinkedHashMap<String, SourceColumn> sourceColumns(java.sql.Connection connection)
      throws SQLException {
    try (java.sql.Statement statement = connection.createStatement();
        ResultSet empty = statement.executeQuery("SELECT * FROM " + qualified + " WHERE 1 = 0")) {
      return columnsOf(empty);
    }
  }

  /** The columns of {@code result} with their types, as the source gave them to the query. */
  static java.util.LinkedHashMap<String, SourceColumn> columnsOf(ResultSet result)
      throws SQLException {
    java.util.LinkedHashMap<String, SourceColumn> columns = new java.util.LinkedHashMap<>();
    java.sql.ResultSetMetaData meta = result.getMetaData();
    for (int i = 1; i <= meta.getColumnCount(); i++) {
      columns.put(
          meta.getColumnName(i),
          new SourceColumn(
              meta.getColumnType(i),
              meta.getPrecision(i),
              meta.getScale(i),
              meta.isNullable(i) == java.sql.ResultSetMetaData.columnNullable));
    }
    return columns;
  }

  /**
   * Whether these queries read {@code source}'s columns as they are: the same columns, none widened
   * past its column in the schema read ({@link #widened}).
   */
  boolean read(Map<String, SourceColumn> source) {
    return new java.util.HashSet<>(source.keySet()).equals(new java.util.HashSet<>(selected))
        && widened(source).isEmpty()
        && relaxed(source).isEmpty();
  }

  /**
   * The columns read whose type in {@code source} is wider than in the schema read, as the type
   * Iceberg widens them to: an int to a long (a source {@code bigint}), a float to a double, a
   * decimal to a greater precision of the same scale.
   */
  Map<String, Type> widened(Map<String, SourceColumn> source) {
    Map<String, Type> widened = new java.util.LinkedHashMap<>();
    for (String column : selected) {
      Type type = schema.schema().findType(column);
      SourceColumn in = source.get(column);
      if (type == null || in == null) {
        continue;
      }
      boolean decimalSource =
          in.jdbcType() == java.sql.Types.NUMERIC || in.jdbcType() == java.sql.Types.DECIMAL;
      switch (type.typeId()) {
        case INTEGER:
          if (in.jdbcType() == java.sql.Types.BIGINT) {
            widened.put(column, Types.LongType.get());
          }
          break;
        case FLOAT:
          if (in.jdbcType() == java.sql.Types.DOUBLE) {
            widened.put(column, Types.DoubleType.get());
          }
          break;
        case DECIMAL:
          Types.DecimalType decimal = (Types.DecimalType) type;
          if (decimalSource
              && in.precision() > decimal.precision()
              && in.scale() == decimal.scale()) {
            widened.put(column, Types.DecimalType.of(in.precision(), in.scale()));
          }
          break;
        default:
          break;
      }
    }
    return widened;
  }

  /**
   * The columns read that the schema read requires (outside the key) and {@code source} lets be
   * null: a {@code NOT NULL} the source dropped, which the Iceberg table follows by making the
   * column optional.
   */
  java.util.Set<String> relaxed(Map<String, SourceColumn> source) {
    java.util.Set<String> relaxed = new java.util.LinkedHashSet<>();
    for (String column : selected) {
      Types.NestedField field = schema.schema().findField(column);
      SourceColumn in = source.get(column);
      if (field != null
          && in != null
          && field.isRequired()
          && in.nullable()
          && !schema.schema().identifierFieldIds().contains(field.fieldId())) {
        relaxed.add(column);
      }
    }
    return relaxed;
  }

  /**
   * The schema read, with {@code widened}'s columns of their wider types and {@code relaxed}'s
   * optional.
   */
  org.apache.iceberg.Schema widen(Map<String, Type> widened, java.util.Set<String> relaxed) {
    List<Types.NestedField> columns = new ArrayList<>();
    for (Types.NestedField column : schema.schema().columns()) {
      Type wider = widened.get(column.name());
      columns.add(
          Types.NestedField.of(
              column.fieldId(),
              column.isOptional() || relaxed.contains(column.name()),
              column.name(),
              wider == null ? column.type() : wider,
              column.doc()));
    }
    return new org.apache.iceberg.Schema(columns, schema.schema().identifierFieldIds());
  }

  /** The columns read. */
  List<String> selected() {
    return selected;
  }

  /**
   * The queries of the same table reading {@code columns} into the rows of {@code newSchema}, a
   * schema the Iceberg table took while the job runs: the columns the source has now, of those the
   * table has.
   */
  ChunkQueries inSchema(ChangeSchema newSchema, List<String> sourceColumns) {
    java.util.Set<String> source = new java.util.HashSet<>(sourceColumns);
    List<String> read = new ArrayList<>();
    for (Types.NestedField column : newSchema.schema().columns()) {
      if (source.contains(column.name())) {
        read.add(column.name());
      }
    }
    return new ChunkQueries(
        database,
        new ChunkedSnapshot.Table(
            table.topic(),
            table.namespace(),
            table.name(),
            table.primaryKey(),
            read,
            table.keyBoundsChunks()),
        newSchema);
  }

  /** The table, for messages. */
  String name() {
    return table.namespace() + "." + table.name();
  }

  ChangeSchema schema() {
    return schema;
  }

  /**
   * Whether the table's key can bound chunks and resume them; a table whose key cannot (a
   * floating-point or time column) is read as one chunk, from its start after a failure.
   */
  boolean bounded() {
    return bounded;
  }

  /**
   * The first key at least {@code rows} rows past {@code lower} (the table's first key if empty):
   * the end of the chunk that starts there; empty if fewer rows are left.
   */
  List<String> boundaryAfter(java.sql.Connection connection, List<String> lower, int rows)
      throws SQLException {
    String sql =
        "SELECT "
            + database.columns(table.primaryKey())
            + " FROM "
            + qualified
            + (lower.isEmpty() ? "" : " WHERE " + compare(">="))
            + " ORDER BY "
            + database.columns(table.primaryKey())
            + " LIMIT 1 OFFSET "
            + rows;
    try (PreparedStatement statement = connection.prepareStatement(sql)) {
      bindKey(statement, 1, lower);
      try (ResultSet result = statement.executeQuery()) {
        if (!result.next()) {
          return List.of();
        }
        List<String> boundary = new ArrayList<>(boundTypes.size());
        for (int k = 0; k < boundTypes.size(); k++) {
          Object value = SnapshotColumns.reader(boundTypes.get(k)).read(result, k + 1);
          boundary.add(SnapshotColumns.encode(boundTypes.get(k), value));
        }
        return boundary;
      }
    }
  }

  /**
   * The statement that reads a chunk's rows, the source's columns: at most {@code fetchRows} of
   * them in key order from the chunk's start or after its last key read, each batch a query of its
   * own (no transaction or cursor stays open while the pipeline takes the rows); all of a table
   * whose key does not bound chunks.
   */
  PreparedStatement rows(java.sql.Connection connection, SnapshotChunk chunk, int fetchRows)
      throws SQLException {
    List<String> conditions = new ArrayList<>();
    List<String> from = chunk.after().isEmpty() ? chunk.lower() : chunk.after();
    if (!from.isEmpty()) {
      conditions.add(compare(chunk.after().isEmpty() ? ">=" : ">"));
    }
    if (!chunk.upper().isEmpty()) {
      conditions.add(compare("<"));
    }
    String sql =
        "SELECT "
            + database.columns(selected)
            + " FROM "
            + qualified
            + (conditions.isEmpty() ? "" : " WHERE " + String.join(" AND ", conditions))
            + (bounded
                ? " ORDER BY " + database.columns(table.primaryKey()) + " LIMIT " + fetchRows
                : "");
    PreparedStatement statement =
        connection.prepareStatement(sql, ResultSet.TYPE_FORWARD_ONLY, ResultSet.CONCUR_READ_ONLY);
    if (!bounded) {
      // One query for the whole table, read as it comes: MySQL's driver streams a result only when
      // asked for Integer.MIN_VALUE rows at a time, PostgreSQL's in a transaction with a fetch
      // size.
      statement.setFetchSize(
          database.dialect() == SourceDatabase.Dialect.MYSQL ? Integer.MIN_VALUE : fetchRows);
    }
    int next = bindKey(statement, 1, from);
    bindKey(statement, next, chunk.upper());
    return statement;
  }

  /** The statement that reads the source's columns of the row of {@code keyRow}'s key. */
  PreparedStatement current(java.sql.Connection connection, RowData keyRow) throws SQLException {
    String sql =
        "SELECT "
            + database.columns(selected)
            + " FROM "
            + qualified
            + " WHERE "
            + key
            + " = "
            + keyParameters;
    PreparedStatement statement = connection.prepareStatement(sql);
    bindValues(statement, 1, keyOf(keyRow));
    return statement;
  }

  /** The key of a row read by {@link #rows}, as a chunk's bound. */
  List<String> keyOf(RowData row) {
    List<String> values = new ArrayList<>(keyGetters.length);
    for (int k = 0; k < keyGetters.length; k++) {
      values.add(SnapshotColumns.encode(keyTypes.get(k), keyGetters[k].getFieldOrNull(row)));
    }
    return values;
  }

  /**
   * The key compared with a key's parameters: {@code key op (?, ...)}, for a composite key with its
   * first column compared first ({@code a >= ? AND (a, b) > (?, ?)}).
   */
  private String compare(String op) {
    String rowValue = key + " " + op + " " + keyParameters;
    return leading == null
        ? rowValue
        : leading + (op.startsWith(">") ? " >= ?" : " <= ?") + " AND " + rowValue;
  }

  /** Binds a key for {@link #compare}; returns the next parameter's index. */
  private int bindKey(PreparedStatement statement, int first, List<String> values)
      throws SQLException {
    if (values.isEmpty()) {
      return first;
    }
    if (leading != null) {
      SnapshotColumns.bind(statement, first++, boundTypes.get(0), values.get(0));
    }
    return bindValues(statement, first, values);
  }

  private int bindValues(PreparedStatement statement, int first, List<String> values)
      throws SQLException {
    for (int k = 0; k < values.size(); k++) {
      SnapshotColumns.bind(statement, first + k, boundTypes.get(k), values.get(k));
    }
    return first + values.size();
  }
}
