package io.icebergcdc.capture;

import java.io.Serializable;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * What the capture source's enumerator looks for while the job runs: tables of the source that the
 * job's table patterns match but that the job does not capture, as tables created after it started
 * are. The enumerator takes each in flight where the routes take such tables ({@link
 * AppearingTables}), and snapshots it in chunks beside the log; otherwise it ends the job at the
 * first ({@link io.icebergcdc.cdc.NewSourceTableException}), and the apply command builds it again
 * with the table, whose chunked snapshot the source then reads without reading the others again.
 */
public final class NewTableWatch implements Serializable {

  private static final long serialVersionUID = 1L;

  /** Compiled once: {@link Pattern} is serializable, and the enumerator looks every interval. */
  private final List<Pattern> patterns;

  private final Set<String> captured;
  private final Duration interval;

  /** Whether the source is PostgreSQL (tables by schema), else MySQL or MariaDB (by database). */
  private final boolean postgres;

  /** The MySQL or MariaDB database whose tables are listed; null for PostgreSQL. */
  private final String database;

  /**
   * A watch of a PostgreSQL source.
   *
   * @param patterns the job's table patterns, over {@code schema.table}
   * @param captured the qualified names of the tables the job captures
   * @param interval how often to look
   */
  public NewTableWatch(List<String> patterns, Set<String> captured, Duration interval) {
    this(patterns, captured, interval, true, null);
  }

  /**
   * A watch of a PostgreSQL source, or of the tables of a MySQL or MariaDB {@code database}.
   *
   * @param patterns the job's table patterns, over {@code schema.table} or {@code database.table}
   */
  public NewTableWatch(
      List<String> patterns,
      Set<String> captured,
      Duration interval,
      boolean postgres,
      String database) {
    if (interval.isNegative() || interval.isZero()) {
      throw new IllegalArgumentException("a table watch needs a positive interval: " + interval);
    }
    this.patterns = patterns.stream().map(Pattern::compile).toList();
    this.captured = Set.copyOf(captured);
    this.interval = interval;
    this.postgres = postgres;
    this.database = database;
  }

  Duration interval() {
    return interval;
  }

  /** The matching tables the job does not capture, in name order. */
  List<String> newTables(SourceDatabase database) throws SQLException {
    return newTableNames(database).stream().map(TableListing.Name::qualified).toList();
  }

  /** The matching tables the job was not built with, in name order. */
  List<TableListing.Name> newTableNames(SourceDatabase database) throws SQLException {
    return newTableNames(matchingTableNames(database));
  }

  /** Of the {@code matching} tables, those the job was not built with. */
  List<TableListing.Name> newTableNames(List<TableListing.Name> matching) {
    List<TableListing.Name> found = new ArrayList<>();
    for (TableListing.Name table : matching) {
      if (!captured.contains(table.qualified())) {
        found.add(table);
      }
    }
    return found;
  }

  /** The tables the job's patterns match, captured or not, in name order. */
  List<TableListing.Name> matchingTableNames(SourceDatabase database) throws SQLException {
    try (Connection connection = database.connect()) {
      return TableListing.matching(connection.getMetaData(), postgres, this.database, patterns);
    }
  }

  @Override
  public String toString() {
    return "NewTableWatch[" + patterns + " every " + interval + "]";
  }
}
