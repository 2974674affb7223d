package io.icebergcdc.capture;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
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

  private RunningTransactions() {}

  /** Waits for the transactions running now; a failure to look is logged, not thrown. */
  static void awaitEnd(SourceDatabase database) {
    try (Connection connection = database.connect();
        Statement statement = connection.createStatement()) {
      if (database.dialect() == SourceDatabase.Dialect.POSTGRES) {
        PostgresLogStart.awaitTransactionsRunningNow(statement);
      } else {
        awaitInnoDbTransactionsRunningNow(statement);
      }
    } catch (SQLException e) {
      LOG.warn(
          "Cannot tell whether the transactions running in {} have ended ({}); the snapshot of the"
              + " tables that appeared is read now",
          database,
          e.getMessage());
    }
  }

  /** MySQL and MariaDB: InnoDB's transactions started at or before now (needs PROCESS). */
  private static void awaitInnoDbTransactionsRunningNow(Statement statement) throws SQLException {
    Timestamp now;
    try (ResultSet result = statement.executeQuery("SELECT NOW(6)")) {
      result.next();
      now = result.getTimestamp(1);
    }
    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(WAIT_MINUTES);
    String running =
        "SELECT COUNT(*) FROM information_schema.innodb_trx WHERE trx_started <= '" + now + "'";
    while (true) {
      try (ResultSet result = statement.executeQuery(running)) {
        result.next();
        if (result.getLong(1) == 0) {
          return;
        }
      }
      if (System.nanoTime() > deadline) {
        throw new SQLException(
            "transactions running since "
                + now
                + " have not ended in "
                + WAIT_MINUTES
                + " minutes");
      }
      try {
        Thread.sleep(100);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new SQLException("interrupted while waiting for running transactions", e);
      }
    }
  }
}
