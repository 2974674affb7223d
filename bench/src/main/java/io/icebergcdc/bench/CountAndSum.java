package io.icebergcdc.bench;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;

/**
 * The row count and the sum of column {@code n} of a table: what the capture benchmarks compare
 * between a source table and its Iceberg table, since every update they write changes {@code n}.
 */
record CountAndSum(long rows, long sum) {

  /** Of the source table {@code table} ({@code schema.name}). */
  static CountAndSum of(Connection connection, String table) throws SQLException {
    try (Statement statement = connection.createStatement();
        ResultSet result = statement.executeQuery("SELECT count(*), sum(n) FROM " + table)) {
      result.next();
      return new CountAndSum(result.getLong(1), result.getLong(2));
    }
  }

  /** Of the Iceberg table, read whole. */
  static CountAndSum of(Table table) throws java.io.IOException {
    long rows = 0;
    long sum = 0;
    try (CloseableIterable<Record> records = IcebergGenerics.read(table).build()) {
      for (Record record : records) {
        rows++;
        sum += (Long) record.getField("n");
      }
    }
    return new CountAndSum(rows, sum);
  }
}
