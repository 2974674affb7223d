package io.icebergcdc.jobs.capture;

import io.icebergcdc.capture.TableListing;
import io.icebergcdc.jobs.definition.DatabaseSource;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeMap;
import org.apache.iceberg.Schema;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/**
 * Finds the tables a job captures and maps their columns to Iceberg types, through JDBC metadata,
 * before the job starts: a table without a primary key, with a PostgreSQL replica identity that
 * cannot carry updates, or with a column of a type that has no mapping fails the start with a
 * message naming it.
 *
 * <p>The mapping follows what Debezium sends for each type with the properties {@link
 * DatabaseSource#debeziumProperties} sets; the README lists it.
 */
public final class SourceTables {

  private SourceTables() {}

  /** The captured tables, in name order. */
  public static List<CapturedTable> discover(DatabaseSource source) {
    try (Connection connection = connect(source)) {
      DatabaseMetaData meta = connection.getMetaData();
      List<CapturedTable> captured = new ArrayList<>();
      List<String> refused = new ArrayList<>();
      List<TableListing.Name> tables = matching(source, meta);
      for (TableListing.Name table : tables) {
        try {
          captured.add(describe(source, connection, meta, table.namespace(), table.name()));
        } catch (IllegalArgumentException e) {
          // Every table that cannot be captured is named at once, not one per start.
          refused.add(e.getMessage());
        }
      }
      if (refused.size() == 1) {
        throw new IllegalArgumentException(refused.get(0));
      }
      if (!refused.isEmpty()) {
        throw new IllegalArgumentException(
            refused.size()
                + " tables of "
                + source.origin()
                + " cannot be captured:\n  "
                + String.join("\n  ", refused));
      }
      if (tables.isEmpty()) {
        throw new IllegalArgumentException(
            "no table of " + source.origin() + " matches " + source.tablePatterns());
      }
      return captured;
    } catch (SQLException e) {
      throw new IllegalStateException(
          "cannot read the tables of " + source.origin() + ": " + e.getMessage(), e);
    }
  }

  /**
   * The names of the captured tables ({@code schema.table} or {@code database.table}), in order.
   */
  public static List<String> names(DatabaseSource source) {
    try (Connection connection = connect(source)) {
      return matching(source, connection.getMetaData()).stream()
          .map(TableListing.Name::qualified)
          .toList();
    } catch (SQLException e) {
      throw new IllegalStateException(
          "cannot read the tables of " + source.origin() + ": " + e.getMessage(), e);
    }
  }

  /** The source's tables that its patterns match, in name order. */
  private static List<TableListing.Name> matching(DatabaseSource source, DatabaseMetaData meta)
      throws SQLException {
    return TableListing.matching(
        meta,
        source.kind() == DatabaseSource.Kind.POSTGRES,
        source.database(),
        source.tablePatterns());
  }

  /**
   * One table of the source, as {@link #discover} describes each: for a table created while the job
   * runs. A table without a primary key or with a type without a mapping fails with {@link
   * IllegalArgumentException}, naming it.
   *
   * @return the table, or null if the source has no such table (any longer)
   */
  public static CapturedTable describe(DatabaseSource source, String namespace, String name) {
    try (Connection connection = connect(source)) {
      DatabaseMetaData meta = connection.getMetaData();
      return exists(source, meta, namespace, name)
          ? describe(source, connection, meta, namespace, name)
          : null;
    } catch (SQLException e) {
      throw new IllegalStateException(
          "cannot read table "
              + namespace
              + "."
              + name
              + " of "
              + source.origin()
              + ": "
              + e.getMessage(),
          e);
    }
  }

  /** A connection to the source, failing with the driver's message (it names the database). */
  private static Connection connect(DatabaseSource source) {
    try {
      return source.connect();
    } catch (SQLException e) {
      throw new IllegalStateException(e.getMessage(), e);
    }
  }

  /** Whether the source has the table. */
  public static boolean exists(DatabaseSource source, String namespace, String name) {
    try (Connection connection = source.connect()) {
      return exists(source, connection.getMetaData(), namespace, name);
    } catch (SQLException e) {
      throw new IllegalStateException(
          "cannot read the tables of " + source.origin() + ": " + e.getMessage(), e);
    }
  }

  private static boolean exists(
      DatabaseSource source, DatabaseMetaData meta, String namespace, String name)
      throws SQLException {
    boolean postgres = source.kind() == DatabaseSource.Kind.POSTGRES;
    try (ResultSet tables =
        meta.getTables(postgres ? null : namespace, postgres ? namespace : null, name, null)) {
      while (tables.next()) {
        if (isOf(tables, postgres, namespace, name)) {
          return true;
        }
      }
    }
    return false;
  }

  private static CapturedTable describe(
      DatabaseSource source,
      Connection connection,
      DatabaseMetaData meta,
      String namespace,
      String name)
      throws SQLException {
    boolean postgres = source.kind() == DatabaseSource.Kind.POSTGRES;
    String catalog = postgres ? null : namespace;
    String schemaPattern = postgres ? namespace : null;
    String qualified = namespace + "." + name;

    List<String> primaryKey = new ArrayList<>();
    try (ResultSet keys = meta.getPrimaryKeys(catalog, schemaPattern, name)) {
      TreeMap<Integer, String> ordered = new TreeMap<>();
      while (keys.next()) {
        ordered.put(keys.getInt("KEY_SEQ"), keys.getString("COLUMN_NAME"));
      }
      primaryKey.addAll(ordered.values());
    }
    if (primaryKey.isEmpty()) {
      throw new IllegalArgumentException(
          "table "
              + qualified
              + " of "
              + source.origin()
              + " has no primary key; the applier keys every change by the primary key, so"
              + " add one or leave the table out of --tables");
    }
    if (postgres) {
      checkReplicaIdentity(connection, namespace, name, primaryKey);
    }

    List<Types.NestedField> fields = new ArrayList<>();
    Set<Integer> identifiers = new HashSet<>();
    List<String> unsupported = new ArrayList<>();
    boolean keyBoundsChunks = true;
    try (ResultSet columns = meta.getColumns(catalog, schemaPattern, name, "%")) {
      int id = 1;
      while (columns.next()) {
        if (!isOf(columns, postgres, namespace, name)) {
          // The names are patterns: "_" matches any character ("line_notes", "line$notes").
          continue;
        }
        String column = columns.getString("COLUMN_NAME");
        String typeName = columns.getString("TYPE_NAME");
        int size = columns.getInt("COLUMN_SIZE");
        int digits = columns.getInt("DECIMAL_DIGITS");
        Type type =
            postgres ? postgresType(typeName, size, digits) : mysqlType(typeName, size, digits);
        if (type == null) {
          unsupported.add(column + " " + typeName);
          continue;
        }
        boolean key = primaryKey.contains(column);
        String upper = typeName.toUpperCase(Locale.ROOT);
        if (key && !postgres && (upper.startsWith("ENUM") || upper.startsWith("SET"))) {
          keyBoundsChunks = false;
        }
        boolean nullable = columns.getInt("NULLABLE") != DatabaseMetaData.columnNoNulls;
        fields.add(
            key || !nullable
                ? Types.NestedField.required(id, column, type)
                : Types.NestedField.optional(id, column, type));
        if (key) {
          identifiers.add(id);
        }
        id++;
      }
    }
    if (!unsupported.isEmpty()) {
      throw new IllegalArgumentException(
          "table "
              + qualified
              + " of "
              + source.origin()
              + " has columns of types without an Iceberg mapping here: "
              + String.join(", ", unsupported)
              + "; see the README's type mapping, or leave the table out of --tables");
    }
    return new CapturedTable(
        namespace, name, new Schema(fields, identifiers), primaryKey, keyBoundsChunks);
  }

  /**
   * Whether a row of {@link DatabaseMetaData#getTables} or {@link DatabaseMetaData#getColumns},
   * which take names as patterns, is of table {@code namespace.name}.
   */
  private static boolean isOf(ResultSet row, boolean postgres, String namespace, String name)
      throws SQLException {
    String namespaceOfRow = row.getString(postgres ? "TABLE_SCHEM" : "TABLE_CAT");
    return name.equals(row.getString("TABLE_NAME"))
        && (namespaceOfRow == null || namespaceOfRow.equals(namespace));
  }

  /**
   * Refuses a table whose updates and deletes PostgreSQL would send without its primary key: one
   * with {@code REPLICA IDENTITY NOTHING}, or {@code USING INDEX} of an index that does not hold
   * every primary key column (the old row then names the row by another key, and the key columns
   * outside it come as Debezium's stand-ins, 0 or "", which would delete or re-key the wrong row).
   */
  private static void checkReplicaIdentity(
      Connection connection, String schema, String table, List<String> primaryKey)
      throws SQLException {
    try (PreparedStatement query =
        connection.prepareStatement(
            "SELECT c.relreplident, (SELECT array_agg(a.attname::text ORDER BY a.attnum)"
                + " FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid"
                + " AND a.attnum = ANY(i.indkey) WHERE i.indrelid = c.oid AND i.indisreplident)"
                + " FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
                + " WHERE n.nspname = ? AND c.relname = ?")) {
      query.setString(1, schema);
      query.setString(2, table);
      try (ResultSet result = query.executeQuery()) {
        if (!result.next()) {
          return;
        }
        String identity = result.getString(1);
        if ("n".equals(identity)) {
          throw new IllegalArgumentException(
              "table "
                  + schema
                  + "."
                  + table
                  + " has REPLICA IDENTITY NOTHING: PostgreSQL sends no key with its updates and"
                  + " deletes; set REPLICA IDENTITY DEFAULT (the primary key) or FULL");
        }
        java.sql.Array indexColumns = result.getArray(2);
        if ("i".equals(identity)) {
          List<String> columns =
              indexColumns == null ? List.of() : List.of((String[]) indexColumns.getArray());
          if (!columns.containsAll(primaryKey)) {
            throw new IllegalArgumentException(
                "table "
                    + schema
                    + "."
                    + table
                    + " has REPLICA IDENTITY USING INDEX on "
                    + columns
                    + ", which does not hold its primary key "
                    + primaryKey
                    + ": PostgreSQL's updates and deletes would name rows by another key; set"
                    + " REPLICA IDENTITY DEFAULT (the primary key) or FULL");
          }
        }
      }
    }
  }

  /** PostgreSQL type names as the JDBC driver reports them; null where there is no mapping. */
  static Type postgresType(String typeName, int size, int digits) {
    switch (typeName.toLowerCase(Locale.ROOT)) {
      case "bool":
        return Types.BooleanType.get();
      case "int2":
      case "int4":
      case "serial":
      case "smallserial":
        return Types.IntegerType.get();
      case "int8":
      case "bigserial":
        return Types.LongType.get();
      case "float4":
        return Types.FloatType.get();
      case "float8":
        return Types.DoubleType.get();
      case "numeric":
        // An unconstrained numeric has no fixed scale; Debezium sends it with one per value.
        return size > 0 && size <= 38 ? Types.DecimalType.of(size, digits) : null;
      case "varchar":
      case "bpchar":
      case "text":
      case "name":
      case "json":
      case "jsonb":
      case "xml":
        return Types.StringType.get();
      case "uuid":
        return Types.UUIDType.get();
      case "date":
        return Types.DateType.get();
      case "time":
        return Types.TimeType.get();
      case "timestamp":
        return Types.TimestampType.withoutZone();
      case "timestamptz":
        return Types.TimestampType.withZone();
      case "bytea":
        return Types.BinaryType.get();
      default:
        return null;
    }
  }

  /** MySQL and MariaDB type names as Connector/J reports them; null where there is no mapping. */
  static Type mysqlType(String typeName, int size, int digits) {
    switch (typeName.toUpperCase(Locale.ROOT)) {
      case "TINYINT":
      case "TINYINT UNSIGNED":
      case "SMALLINT":
      case "SMALLINT UNSIGNED":
      case "MEDIUMINT":
      case "MEDIUMINT UNSIGNED":
      case "INT":
      case "INTEGER":
      case "YEAR":
        return Types.IntegerType.get();
      case "INT UNSIGNED":
      case "INTEGER UNSIGNED":
      case "BIGINT":
        return Types.LongType.get();
      case "BIGINT UNSIGNED":
        return Types.DecimalType.of(20, 0);
      case "BIT":
        return size <= 1 ? Types.BooleanType.get() : Types.BinaryType.get();
      case "BOOLEAN":
      case "BOOL":
        return Types.BooleanType.get();
      case "FLOAT":
      case "FLOAT UNSIGNED":
        return Types.FloatType.get();
      case "DOUBLE":
      case "DOUBLE UNSIGNED":
      case "REAL":
        return Types.DoubleType.get();
      case "DECIMAL":
      case "DECIMAL UNSIGNED":
      case "NUMERIC":
        return size > 0 && size <= 38 ? Types.DecimalType.of(size, digits) : null;
      case "CHAR":
      case "VARCHAR":
      case "TINYTEXT":
      case "TEXT":
      case "MEDIUMTEXT":
      case "LONGTEXT":
      case "ENUM":
      case "SET":
      case "JSON":
      case "UUID":
        return Types.StringType.get();
      case "DATE":
        return Types.DateType.get();
      case "TIME":
        return Types.TimeType.get();
      case "DATETIME":
        return Types.TimestampType.withoutZone();
      case "TIMESTAMP":
        return Types.TimestampType.withZone();
      case "BINARY":
      case "VARBINARY":
      case "TINYBLOB":
      case "BLOB":
      case "MEDIUMBLOB":
      case "LONGBLOB":
        return Types.BinaryType.get();
      default:
        return null;
    }
  }
}
