package io.icebergcdc.capture;

import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * The tables of a source database whose qualified names ({@code schema.table} in PostgreSQL, {@code
 * database.table} in MySQL) match a job's table patterns, as JDBC's metadata lists them: what a job
 * captures when it starts, and what {@link NewTableWatch} compares with while it runs.
 *
 * <p>A PostgreSQL partition whose partitioned table (at any level above it) matches too is left
 * out: it is captured through that table, which the job publishes with {@code
 * publish_via_partition_root}, so that its partitions' changes come as the partitioned table's.
 */
public final class TableListing {

  private TableListing() {}

  /** A table's schema (PostgreSQL) or database (MySQL), and its name. */
  public record Name(String namespace, String name) {
    public String qualified() {
      return namespace + "." + name;
    }
  }

  /**
   * The matching tables, in order of their qualified names.
   *
   * @param database for MySQL, the database whose tables are listed; unused for PostgreSQL, whose
   *     connection names the database
   */
  public static List<Name> matching(
      DatabaseMetaData meta, boolean postgres, String database, List<Pattern> patterns)
      throws SQLException {
    TreeMap<String, Name> found = new TreeMap<>();
    try (ResultSet tables =
        postgres
            ? meta.getTables(null, null, "%", new String[] {"TABLE", "PARTITIONED TABLE"})
            : meta.getTables(database, null, "%", new String[] {"TABLE"})) {
      while (tables.next()) {
        Name name =
            new Name(
                postgres ? tables.getString("TABLE_SCHEM") : tables.getString("TABLE_CAT"),
                tables.getString("TABLE_NAME"));
        for (Pattern pattern : patterns) {
          if (pattern.matcher(name.qualified()).matches()) {
            found.put(name.qualified(), name);
            break;
          }
        }
      }
    }
    if (postgres && !found.isEmpty()) {
      Map<String, String> parents = partitionParents(meta.getConnection());
      found
          .keySet()
          .removeIf(
              qualified -> {
                for (String up = parents.get(qualified); up != null; up = parents.get(up)) {
                  if (found.containsKey(up)) {
                    return true;
                  }
                }
                return false;
              });
    }
    return new ArrayList<>(found.values());
  }

  /** Every PostgreSQL partition's partitioned table, by their qualified names. */
  private static Map<String, String> partitionParents(Connection connection) throws SQLException {
    Map<String, String> parents = new HashMap<>();
    try (Statement statement = connection.createStatement();
        ResultSet rows =
            statement.executeQuery(
                "SELECT cn.nspname, c.relname, pn.nspname, p.relname FROM pg_inherits i"
                    + " JOIN pg_class c ON c.oid = i.inhrelid"
                    + " JOIN pg_namespace cn ON cn.oid = c.relnamespace"
                    + " JOIN pg_class p ON p.oid = i.inhparent"
                    + " JOIN pg_namespace pn ON pn.oid = p.relnamespace"
                    + " WHERE c.relispartition")) {
      while (rows.next()) {
        parents.put(
            rows.getString(1) + "." + rows.getString(2),
            rows.getString(3) + "." + rows.getString(4));
      }
    }
    return parents;
  }
}
