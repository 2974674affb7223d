package io.icebergcdc.capture;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
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

  private static final com.fasterxml.jackson.databind.ObjectMapper JSON =
      new com.fasterxml.jackson.databind.ObjectMapper();

  private static final Logger LOG = LoggerFactory.getLogger(MySqlLogStart.class);

  private MySqlLogStart() {}

  /**
   * Where the connector starts: its offset entry, and the schemas of the database's tables at that
   * position as schema history records.
   */
  record Start(Map<String, String> offset, List<String> schemaHistory) {}

  /**
   * The connector's starting offset entry at the server's current binlog position, and the
   * database's tables' {@code CREATE TABLE} statements read at that position (under the same lock),
   * as the connector's schema history. Without them the connector would record the tables' schemas
   * itself when it starts, seconds later, as they are then: a table changed in between would have
   * its earlier binlog rows read with its later schema.
   */
  static Start prepare(SourceDatabase database, Map<String, String> properties) {
    try (Connection connection = database.connect();
        Statement statement = connection.createStatement()) {
      String file;
      long position;
      String gtids = null;
      Map<String, String> tables;
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
        tables = createStatements(statement, properties);
      } finally {
        if (locked) {
          statement.execute("UNLOCK TABLES");
        }
      }
      LOG.info(
          "The binlog is read from {}:{} (GTIDs {}), with the schemas of {} tables there",
          file,
          position,
          gtids,
          tables.size());
      Map<String, String> offset =
          StateOffsetBackingStore.mysqlStart(properties, file, position, gtids);
      return new Start(offset, history(offset, tables));
    } catch (SQLException e) {
      throw new IllegalStateException(
          "cannot read the binlog position at " + database + ": " + e.getMessage(), e);
    }
  }

  /** The {@code CREATE TABLE} statement of each table of the captured databases, by database. */
  private static Map<String, String> createStatements(
      Statement statement, Map<String, String> properties) throws SQLException {
    Map<String, String> statements = new java.util.LinkedHashMap<>();
    String include = properties.get("database.include.list");
    if (include == null || include.isBlank()) {
      return statements;
    }
    // Split as Debezium splits its lists: a comma of a name is escaped (DatabaseSource#listItem).
    for (java.util.regex.Pattern pattern : io.debezium.util.Strings.setOfRegex(include)) {
      String database = pattern.pattern().trim().replace("\\Q", "").replace("\\E", "");
      List<String> names = new ArrayList<>();
      try (ResultSet tables =
          statement.executeQuery(
              "SHOW FULL TABLES FROM `"
                  + database.replace("`", "``")
                  + "` WHERE Table_type = 'BASE TABLE'")) {
        while (tables.next()) {
          names.add(tables.getString(1));
        }
      }
      for (String name : names) {
        try (ResultSet create =
            statement.executeQuery(
                "SHOW CREATE TABLE `"
                    + database.replace("`", "``")
                    + "`.`"
                    + name.replace("`", "``")
                    + "`")) {
          if (create.next()) {
            statements.put(database + "\u0000" + name, create.getString(2));
          }
        }
      }
    }
    return statements;
  }

  /**
   * Schema history records of {@code tables} at {@code offset}, as the connector's own history
   * writes them: its source partition, the position, the database and the DDL, which the connector
   * parses when it recovers its schemas.
   */
  @SuppressWarnings("unchecked")
  private static List<String> history(Map<String, String> offset, Map<String, String> tables) {
    List<String> records = new ArrayList<>();
    try {
      Map.Entry<String, String> entry = offset.entrySet().iterator().next();
      List<?> key = JSON.readValue(entry.getKey(), List.class);
      Map<String, ?> source = (Map<String, ?>) key.get(1);
      Map<String, ?> position = JSON.readValue(entry.getValue(), Map.class);
      java.time.Instant now = java.time.Instant.now();
      for (Map.Entry<String, String> table : tables.entrySet()) {
        String database = table.getKey().substring(0, table.getKey().indexOf('\u0000'));
        io.debezium.relational.history.HistoryRecord record =
            new io.debezium.relational.history.HistoryRecord(
                source, position, database, null, table.getValue(), null, now);
        records.add(io.debezium.document.DocumentWriter.defaultWriter().write(record.document()));
      }
    } catch (java.io.IOException e) {
      throw new IllegalStateException("cannot write the tables' schemas as schema history", e);
    }
    return records;
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
