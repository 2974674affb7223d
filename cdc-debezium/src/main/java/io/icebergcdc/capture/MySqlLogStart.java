package io.icebergcdc.capture;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Fixes where a MySQL or MariaDB binlog is read from before any chunk of a snapshot is: the
 * server's current binlog position, read under a global read lock (held only for that read, as
 * Debezium's own snapshot does) so that no transaction is between writing its binlog events and
 * committing. Every change after the position is streamed from it; every change before it is
 * visible to the chunks' reads, which all start later.
 */
final class MySqlLogStart {

  private static final Logger LOG = LoggerFactory.getLogger(MySqlLogStart.class);

  private MySqlLogStart() {}

  /** The connector's starting offset entry at the server's current binlog position. */
  static Map<String, String> prepare(SourceDatabase database, Map<String, String> properties) {
    try (Connection connection = database.connect();
        Statement statement = connection.createStatement()) {
      String file;
      long position;
      String gtids = null;
      boolean locked = lock(statement, database);
      try (ResultSet result = status(statement)) {
        if (!result.next()) {
          throw new IllegalStateException(
              "the server at " + database + " writes no binlog; the capture reads the binlog");
        }
        file = result.getString(1);
        position = result.getLong(2);
        if (properties.getOrDefault("connector.class", "").contains("MariaDb")) {
          // MariaDB's connector resumes by GTID position as well as by file and position.
          try (ResultSet gtid = statement.executeQuery("SELECT @@gtid_binlog_pos")) {
            gtid.next();
            gtids = gtid.getString(1);
          }
        }
      } finally {
        if (locked) {
          statement.execute("UNLOCK TABLES");
        }
      }
      LOG.info("The binlog is read from {}:{} (GTIDs {})", file, position, gtids);
      return StateOffsetBackingStore.mysqlStart(properties, file, position, gtids);
    } catch (SQLException e) {
      throw new IllegalStateException(
          "cannot read the binlog position at " + database + ": " + e.getMessage(), e);
    }
  }

  private static boolean lock(Statement statement, SourceDatabase database) {
    try {
      // Not behind a long query for long: without the lock after 10 s, as without the privilege.
      statement.execute("SET SESSION lock_wait_timeout = 10");
      statement.execute("FLUSH TABLES WITH READ LOCK");
      return true;
    } catch (SQLException e) {
      // Without the RELOAD privilege: a transaction that commits at this very moment may be
      // neither in the position's past nor in the chunks' reads.
      LOG.warn(
          "Cannot take a global read lock at {} to read the binlog position ({}); reading it"
              + " without, grant RELOAD to close that window",
          database,
          e.getMessage());
      return false;
    }
  }

  private static ResultSet status(Statement statement) throws SQLException {
    try {
      return statement.executeQuery("SHOW MASTER STATUS");
    } catch (SQLException e) {
      // MySQL 8.4 and later name it so.
      return statement.executeQuery("SHOW BINARY LOG STATUS");
    }
  }
}
