package io.icebergcdc.capture;

import java.sql.DatabaseMetaData;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * The tables of a source database whose qualified names ({@code schema.table} in PostgreSQL, {@code
 * database.table} in MySQL) match a job's table patterns, as JDBC's metadata lists them: what a job
 * captures when it starts, and what {@link NewTableWatch} compares with while it runs.
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
    return new ArrayList<>(found.values());
  }
}
