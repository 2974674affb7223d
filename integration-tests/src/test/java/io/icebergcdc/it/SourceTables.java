package io.icebergcdc.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.icebergcdc.jobs.capture.CapturedTable;
import io.icebergcdc.jobs.definition.DatabaseSource;
import io.icebergcdc.jobs.pipeline.TableTarget;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.function.Supplier;
import org.apache.flink.core.execution.JobClient;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.types.Types;

/**
 * Compares captured source tables with their Iceberg tables row for row, both sides read into the
 * same text form column by column, by the Iceberg column's type.
 */
final class SourceTables {

  private SourceTables() {}

  /** Waits until every Iceberg table equals its source table, and fails with the difference. */
  static void awaitEqual(
      JobClient job,
      Connection connection,
      Catalog catalog,
      DatabaseSource source,
      List<TableTarget> targets,
      Duration timeout)
      throws Exception {
    awaitEqual(
        () -> {
          if (job.getJobStatus().get().isGloballyTerminalState()) {
            job.getJobExecutionResult().get();
            throw new AssertionError("the job ended: " + job.getJobStatus().get());
          }
          return null;
        },
        connection,
        catalog,
        source,
        () -> targets,
        timeout);
  }

  /**
   * Waits until every Iceberg table equals its source table, comparing the columns the source table
   * has (an Iceberg table keeps columns the source dropped), and fails with the difference.
   *
   * @param checkRunning throws if the job under test has ended
   * @param source the captured database, whose tables are described again each round
   * @param targets the tables of the job as it was last composed, asked again each round
   */
  static void awaitEqual(
      Callable<?> checkRunning,
      Connection connection,
      Catalog catalog,
      DatabaseSource source,
      Supplier<List<TableTarget>> targets,
      Duration timeout)
      throws Exception {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      checkRunning.call();
      boolean equal = true;
      Map<String, CapturedTable> tables = new java.util.HashMap<>();
      for (CapturedTable table : io.icebergcdc.jobs.capture.SourceTables.discover(source)) {
        tables.put(table.qualifiedName(), table);
      }
      for (TableTarget target : targets.get()) {
        CapturedTable captured = tables.get(target.source());
        List<Types.NestedField> columns = captured.schema().columns();
        List<String> rows = sourceRows(connection, captured);
        List<String> iceberg = icebergRows(catalog.loadTable(target.table()), columns);
        if (!rows.equals(iceberg)) {
          equal = false;
          if (System.nanoTime() > deadline) {
            assertThat(iceberg)
                .as("Iceberg table %s against source table %s", target.table(), target.source())
                .containsExactlyElementsOf(rows);
          }
        }
      }
      if (equal) {
        return;
      }
      Thread.sleep(300);
    }
  }

  static List<String> sourceRows(Connection connection, CapturedTable table) throws SQLException {
    List<Types.NestedField> columns = table.schema().columns();
    List<String> rows = new ArrayList<>();
    try (Statement statement = connection.createStatement();
        ResultSet result =
            statement.executeQuery("SELECT * FROM " + table.namespace() + "." + table.name())) {
      while (result.next()) {
        StringBuilder row = new StringBuilder();
        for (Types.NestedField column : columns) {
          row.append(column.name()).append('=').append(sourceValue(result, column)).append(' ');
        }
        rows.add(row.toString());
      }
    }
    rows.sort(null);
    return rows;
  }

  private static String sourceValue(ResultSet result, Types.NestedField column)
      throws SQLException {
    String name = column.name();
    if (result.getObject(name) == null) {
      return "null";
    }
    switch (column.type().typeId()) {
      case BOOLEAN:
        return Boolean.toString(result.getBoolean(name));
      case INTEGER:
        return Integer.toString(result.getInt(name));
      case LONG:
        return Long.toString(result.getLong(name));
      case FLOAT:
        return Float.toString(result.getFloat(name));
      case DOUBLE:
        return Double.toString(result.getDouble(name));
      case DECIMAL:
        return result.getBigDecimal(name).toPlainString();
      case DATE:
        return result.getObject(name, LocalDate.class).toString();
      case TIME:
        return result.getObject(name, LocalTime.class).toString();
      case TIMESTAMP:
        return ((Types.TimestampType) column.type()).shouldAdjustToUTC()
            ? result.getObject(name, OffsetDateTime.class).toInstant().toString()
            : result.getObject(name, LocalDateTime.class).toString();
      case BINARY:
        return HexFormat.of().formatHex(result.getBytes(name));
      default:
        return result.getString(name);
    }
  }

  /** The rows of an Iceberg table, with the given columns. */
  static List<String> icebergRows(Table table, List<Types.NestedField> columns) throws Exception {
    List<String> rows = new ArrayList<>();
    try (CloseableIterable<Record> records = IcebergGenerics.read(table).build()) {
      for (Record record : records) {
        StringBuilder row = new StringBuilder();
        for (Types.NestedField column : columns) {
          row.append(column.name())
              .append('=')
              .append(icebergValue(record.getField(column.name())))
              .append(' ');
        }
        rows.add(row.toString());
      }
    }
    rows.sort(null);
    return rows;
  }

  private static String icebergValue(Object value) {
    if (value == null) {
      return "null";
    }
    if (value instanceof BigDecimal decimal) {
      return decimal.toPlainString();
    }
    if (value instanceof OffsetDateTime time) {
      return time.toInstant().toString();
    }
    if (value instanceof ByteBuffer buffer) {
      byte[] bytes = new byte[buffer.remaining()];
      buffer.duplicate().get(bytes);
      return HexFormat.of().formatHex(bytes);
    }
    return value.toString();
  }
}
