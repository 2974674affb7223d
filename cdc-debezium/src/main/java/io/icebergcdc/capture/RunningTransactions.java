package io.icebergcdc.capture;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Waits until the transactions running in the source database at this moment have ended, before the
 * chunks of a table that appeared while the job runs are read: the log's reader skipped the table's
 * changes it read before it knew the table, and a change is read from the log as soon as its commit
 * is written, which may be before other sessions see it (PostgreSQL's synchronous replication,
 * MySQL's semi-synchronous replication wait for a replica's acknowledgement between the two). Once
 * those transactions have ended, a chunk sees every change the reader skipped.
 */
final class RunningTransactions {

  private static final Logger LOG = LoggerFactory.getLogger(RunningTransactions.class);
  private static final long WAIT_MINUTES = 10;
  private static final long RETRY_SECONDS = 5;

  private RunningTransactions() {}

  /**
   * Waits for the transactions running now. False if some still run after {@value #WAIT_MINUTES}
   * minutes, or if the database could not be read (after a pause of {@value #RETRY_SECONDS} s): the
   * caller waits again; true once they have ended, or if the database cannot tell (logged).
   */
  static boolean awaitEnd(SourceDatabase database) {
    try (Connection connection = database.connect();
        Statement statement = connection.createStatement()) {
      if (database.dialect() == SourceDatabase.Dialect.POSTGRES) {
        try {
          PostgresLogStart.awaitTransactionsRunningNow(statement);
        } catch (IllegalStateException timedOut) {
          LOG.warn("{}: {}", database, timedOut.getMessage());
          return false;
        }
        return true;
      }
      return awaitInnoDbWritersRunningNow(statement, database);
    } catch (SQLException e) {
      if (cannotTell(e)) {
        LOG.warn(
            "Cannot tell whether the transactions running in {} have ended ({}); the snapshot of"
                + " the tables that appeared is read now, without waiting for them",
            database,
            e.getMessage());
        return true;
      }
      LOG.warn(
          "Cannot read the transactions running in {} ({}); the snapshot of the tables that"
              + " appeared waits, and they are read again in {} s",
          database,
          e.getMessage(),
          RETRY_SECONDS);
      try {
        Thread.sleep(TimeUnit.SECONDS.toMillis(RETRY_SECONDS));
      } catch (InterruptedException interrupted) {
        Thread.currentThread().interrupt();
      }
      return false;
    }
  }

  /**
   * Whether {@code failure} says the database will not tell which transactions run (a privilege the
   * job's user lacks, a function the server does not have: SQL state class 42), as opposed to a
   * failure to reach it, after which it is asked again.
   */
  static boolean cannotTell(SQLException failure) {
    String state = failure.getSQLState();
    return state != null && state.startsWith("42");
  }

  /**
   * MySQL and MariaDB: InnoDB's transactions that have written rows, by id (the clocks of {@code
   * trx_started} and of the session differ). Reading {@code information_schema.innodb_trx} needs
   * the {@code PROCESS} privilege.
   */
  private static boolean awaitInnoDbWritersRunningNow(Statement statement, SourceDatabase database)
      throws SQLException {
    String writers = "SELECT trx_id FROM information_schema.innodb_trx WHERE trx_rows_modified > 0";
    Set<String> running = ids(statement, writers);
    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(WAIT_MINUTES);
    while (!running.isEmpty()) {
      if (System.nanoTime() > deadline) {
        LOG.warn(
            "{}: transactions {} have not ended in {} minutes; the snapshot of the tables that"
                + " appeared waits for them",
            database,
            running,
            WAIT_MINUTES);
        return false;
      }
      try {
        Thread.sleep(100);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new SQLException("interrupted while waiting for running transactions", e);
      }
      running.retainAll(ids(statement, writers));
    }
    return true;
  }

  private static Set<String> ids(Statement statement, String query) throws SQLException {
    Set<String> ids = new HashSet<>();
    try (ResultSet result = statement.executeQuery(query)) {
      while (result.next()) {
        ids.add(result.getString(1));
      }
    }
    return ids;
  }
}
