package io.icebergcdc.capture;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Fixes where PostgreSQL's log is read from before any chunk of a snapshot is: the publication
 * holds the captured tables (created, or the missing tables added) and then the replication slot
 * exists (created if missing). Every transaction that commits after the slot's position is then
 * decoded from it, and every one before is visible to the chunks' reads, which all start later.
 */
final class PostgresLogStart {

  private static final Logger LOG = LoggerFactory.getLogger(PostgresLogStart.class);

  private PostgresLogStart() {}

  /** Publishes the tables and returns the LSN the slot streams from, creating the slot first. */
  static long prepare(
      SourceDatabase database, Map<String, String> properties, List<ChunkedSnapshot.Table> tables) {
    String slot = properties.getOrDefault("slot.name", "debezium");
    try (Connection connection = database.connect()) {
      publish(connection, database, properties, tables, false);
      try (PreparedStatement existing =
          connection.prepareStatement(
              "SELECT confirmed_flush_lsn::text, database FROM pg_replication_slots"
                  + " WHERE slot_name = ?")) {
        existing.setString(1, slot);
        try (ResultSet result = existing.executeQuery()) {
          if (result.next()) {
            String lsn = result.getString(1);
            if (lsn == null) {
              throw new IllegalStateException(
                  "replication slot '"
                      + slot
                      + "' is not a logical slot of database "
                      + result.getString(2)
                      + "; name another with slot.name");
            }
            LOG.info("Replication slot {} exists; the log is read from {}", slot, lsn);
            return io.icebergcdc.cdc.SourceSequence.parseLsn(lsn);
          }
        }
      }
      try (PreparedStatement create =
          connection.prepareStatement(
              "SELECT lsn::text FROM pg_create_logical_replication_slot(?, 'pgoutput')")) {
        create.setString(1, slot);
        try (ResultSet result = create.executeQuery()) {
          result.next();
          String lsn = result.getString(1);
          LOG.info("Created replication slot {} at {}", slot, lsn);
          return io.icebergcdc.cdc.SourceSequence.parseLsn(lsn);
        }
      }
    } catch (SQLException e) {
      throw new IllegalStateException(
          "cannot prepare replication slot '" + slot + "' at " + database + ": " + e.getMessage(),
          e);
    }
  }

  /**
   * Adds tables the publication lacks, before their chunks are read (tables added later).
   *
   * @return the tables added, as {@code schema.table}
   */
  static List<String> publish(
      SourceDatabase database, Map<String, String> properties, List<ChunkedSnapshot.Table> tables) {
    return publish(database, properties, tables, false);
  }

  /**
   * Adds tables the publication lacks, before their chunks are read, and with {@code awaitRunning}
   * waits for the transactions running then even if it lacked none: a table created while the job
   * runs may have been published by the connector's start meanwhile (its table list follows the
   * job's patterns), before transactions that changed it had ended.
   */
  static List<String> publish(
      SourceDatabase database,
      Map<String, String> properties,
      List<ChunkedSnapshot.Table> tables,
      boolean awaitRunning) {
    try (Connection connection = database.connect()) {
      return publish(connection, database, properties, tables, awaitRunning);
    } catch (SQLException e) {
      throw new IllegalStateException(
          "cannot add tables to publication '"
              + properties.getOrDefault("publication.name", "dbz_publication")
              + "' at "
              + database
              + ": "
              + e.getMessage(),
          e);
    }
  }

  /**
   * PostgreSQL releases before those of May 2025 (17.5, 16.9, 15.13, 14.18, 13.21) have a bug
   * (fixed upstream as "Fix data loss in logical replication"): a transaction that writes a table
   * and is open while the table is added to a publication can leave the decoder treating the table
   * as unpublished, so that its later changes are not sent, until some other catalog change.
   */
  private static void warnIfAddedTablesMayLoseChanges(
      Connection connection, SourceDatabase database) {
    try (Statement statement = connection.createStatement();
        ResultSet result = statement.executeQuery("SHOW server_version_num")) {
      result.next();
      int version = Integer.parseInt(result.getString(1));
      int major = version / 10_000;
      int fixedMinor =
          switch (major) {
            case 13 -> 21;
            case 14 -> 18;
            case 15 -> 13;
            case 16 -> 9;
            case 17 -> 5;
            default -> major > 17 ? 0 : Integer.MAX_VALUE;
          };
      if (version % 10_000 < fixedMinor) {
        LOG.warn(
            "{} runs PostgreSQL {}, whose logical decoding may miss the changes of a table added to"
                + " a publication while transactions write it (fixed in the releases of May 2025:"
                + " 17.5, 16.9, 15.13, 14.18, 13.21): upgrade to a later minor release",
            database,
            version);
      }
    } catch (SQLException | RuntimeException e) {
      LOG.debug("Cannot read the server's version", e);
    }
  }

  /**
   * Waits until every transaction that is running now has ended: one that changed a newly published
   * table before the publication held it and commits after is decoded without those changes, and a
   * chunk read before its commit does not see them either; chunks read after it ends do.
   */
  static void awaitTransactionsRunningNow(Statement statement) throws SQLException {
    long xmax;
    try (ResultSet result =
        statement.executeQuery("SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint")) {
      result.next();
      xmax = result.getLong(1);
    }
    long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.MINUTES.toNanos(10);
    while (true) {
      try (ResultSet result =
          statement.executeQuery("SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint")) {
        result.next();
        if (result.getLong(1) >= xmax) {
          return;
        }
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(
            "transactions that were running when the tables were published have not ended in 10"
                + " minutes; the snapshot of those tables waits for them");
      }
      try {
        Thread.sleep(100);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException(e);
      }
    }
  }

  private static List<String> publish(
      Connection connection,
      SourceDatabase database,
      Map<String, String> properties,
      List<ChunkedSnapshot.Table> tables,
      boolean awaitRunning)
      throws SQLException {
    List<ChunkedSnapshot.Table> missing = unpublished(connection, properties, tables);
    if (missing.isEmpty()) {
      if (awaitRunning) {
        try (Statement statement = connection.createStatement()) {
          awaitTransactionsRunningNow(statement);
        }
      }
      return List.of();
    }
    return add(connection, database, properties, missing, true);
  }

  /**
   * Of {@code tables}, those the job's publication does not hold: all of them if it is missing,
   * none if it publishes every table.
   */
  static List<ChunkedSnapshot.Table> unpublished(
      SourceDatabase database, Map<String, String> properties, List<ChunkedSnapshot.Table> tables) {
    try (Connection connection = database.connect()) {
      return unpublished(connection, properties, tables);
    } catch (SQLException e) {
      throw new IllegalStateException(
          "cannot read publication '" + publication(properties) + "' at " + database + ": " + e, e);
    }
  }

  /**
   * Adds {@code missing}, which the job's publication lacks ({@link #unpublished}), to it again,
   * without waiting for running transactions: captured tables dropped and created again, whose
   * chunks are not read again.
   *
   * @return the tables added, as {@code schema.table}
   */
  static List<String> republish(
      SourceDatabase database,
      Map<String, String> properties,
      List<ChunkedSnapshot.Table> missing) {
    if (missing.isEmpty()) {
      return List.of();
    }
    try (Connection connection = database.connect()) {
      return add(connection, database, properties, missing, false);
    } catch (SQLException e) {
      throw new IllegalStateException(
          "cannot add tables to publication '"
              + publication(properties)
              + "' at "
              + database
              + ": "
              + e.getMessage(),
          e);
    }
  }

  private static String publication(Map<String, String> properties) {
    return properties.getOrDefault("publication.name", "dbz_publication");
  }

  /** Whether the publication publishes every table; null if it does not exist. */
  private static Boolean publishesAllTables(Connection connection, String publication)
      throws SQLException {
    return publicationFlag(connection, publication, "puballtables");
  }

  /** A boolean column of the publication's row of {@code pg_publication}; null if it has none. */
  private static Boolean publicationFlag(Connection connection, String publication, String column)
      throws SQLException {
    try (PreparedStatement query =
        connection.prepareStatement(
            "SELECT " + column + " FROM pg_publication WHERE pubname = ?")) {
      query.setString(1, publication);
      try (ResultSet result = query.executeQuery()) {
        return result.next() ? result.getBoolean(1) : null;
      }
    }
  }

  private static List<ChunkedSnapshot.Table> unpublished(
      Connection connection, Map<String, String> properties, List<ChunkedSnapshot.Table> tables)
      throws SQLException {
    String publication = publication(properties);
    Boolean allTables = publishesAllTables(connection, publication);
    if (Boolean.TRUE.equals(allTables)) {
      return List.of();
    }
    Set<String> published = new HashSet<>();
    if (allTables != null) {
      // The tables the publication publishes, and those it holds by name: a partitioned table
      // (published through its partitions, unless publish_via_partition_root) is one of the latter.
      try (PreparedStatement query =
          connection.prepareStatement(
              "SELECT schemaname, tablename FROM pg_publication_tables WHERE pubname = ?"
                  + " UNION SELECT n.nspname, c.relname FROM pg_publication_rel r"
                  + " JOIN pg_publication p ON p.oid = r.prpubid"
                  + " JOIN pg_class c ON c.oid = r.prrelid"
                  + " JOIN pg_namespace n ON n.oid = c.relnamespace WHERE p.pubname = ?")) {
        query.setString(1, publication);
        query.setString(2, publication);
        try (ResultSet result = query.executeQuery()) {
          while (result.next()) {
            published.add(result.getString(1) + "." + result.getString(2));
          }
        }
      }
    }
    List<ChunkedSnapshot.Table> missing = new ArrayList<>();
    for (ChunkedSnapshot.Table table : tables) {
      if (!published.contains(table.namespace() + "." + table.name())) {
        missing.add(table);
      }
    }
    return missing;
  }

  /**
   * A partitioned table's changes published as its own, not as its partitions' (which the job does
   * not capture apart from it): PostgreSQL 13 and later.
   */
  private static final String VIA_PARTITION_ROOT = " WITH (publish_via_partition_root = true)";

  /**
   * Refuses to capture a partitioned table of {@code tables} through an existing publication
   * without {@code publish_via_partition_root}: PostgreSQL would send its changes as its
   * partitions', which the job does not capture apart from it, and its Iceberg table would keep its
   * snapshot. A publication the job or Debezium creates has the option; an existing one is not the
   * job's to change (other subscribers would receive the changes as the partitioned table's too).
   *
   * @throws io.icebergcdc.cdc.RefusedSourceException naming the tables and the way out
   */
  static void checkPartitionedTables(
      SourceDatabase database, Map<String, String> properties, List<TableListing.Name> tables) {
    String publication = publication(properties);
    List<String> partitioned = new ArrayList<>();
    try (Connection connection = database.connect()) {
      try (PreparedStatement statement =
          connection.prepareStatement(
              "SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
                  + " WHERE n.nspname = ? AND c.relname = ? AND c.relkind = 'p'")) {
        for (TableListing.Name table : tables) {
          statement.setString(1, table.namespace());
          statement.setString(2, table.name());
          try (ResultSet rows = statement.executeQuery()) {
            if (rows.next()) {
              partitioned.add(table.qualified());
            }
          }
        }
      }
      // Read only where there are partitioned tables: servers before 13 have no pubviaroot.
      if (partitioned.isEmpty()
          || publishesAllTables(connection, publication) == null
          || publishesViaPartitionRoot(connection, publication)) {
        return;
      }
    } catch (SQLException e) {
      throw new IllegalStateException(
          "cannot read publication '" + publication + "' at " + database + ": " + e, e);
    }
    throw new io.icebergcdc.cdc.RefusedSourceException(
        "partitioned tables "
            + partitioned
            + " of "
            + database
            + " would be captured through publication '"
            + publication
            + "', which sends their changes as their partitions' (it lacks"
            + " publish_via_partition_root); set it with ALTER PUBLICATION "
            + database.quote(publication)
            + " SET (publish_via_partition_root = true) (its other subscribers then receive"
            + " them as the partitioned tables' too), or leave the tables out of --tables. A job"
            + " whose state captured their partitions as tables of their own (an earlier build)"
            + " starts without state then, its partitioned tables' Iceberg tables emptied");
  }

  /** Whether the publication sends a partitioned table's changes as its own. */
  private static boolean publishesViaPartitionRoot(Connection connection, String publication)
      throws SQLException {
    return Boolean.TRUE.equals(publicationFlag(connection, publication, "pubviaroot"));
  }

  /**
   * Adds {@code missing} to the publication, created with them if it does not exist; with {@code
   * await}, then waits for the transactions running at that moment, before chunks of them are read.
   */
  private static List<String> add(
      Connection connection,
      SourceDatabase database,
      Map<String, String> properties,
      List<ChunkedSnapshot.Table> missing,
      boolean await)
      throws SQLException {
    String publication = publication(properties);
    boolean exists = publishesAllTables(connection, publication) != null;
    if (exists) {
      // Added while the job runs, or at a restart, the tables may be written meanwhile.
      warnIfAddedTablesMayLoseChanges(connection, database);
    }
    List<String> names = new ArrayList<>();
    List<String> added = new ArrayList<>();
    for (ChunkedSnapshot.Table table : missing) {
      names.add(database.table(table.namespace(), table.name()));
      added.add(table.namespace() + "." + table.name());
    }
    String sql =
        (exists ? "ALTER PUBLICATION " : "CREATE PUBLICATION ")
            + database.quote(publication)
            + (exists ? " ADD TABLE " : " FOR TABLE ")
            + String.join(", ", names)
            + (exists ? "" : VIA_PARTITION_ROOT);
    try (Statement statement = connection.createStatement()) {
      statement.execute(sql);
      if (await) {
        awaitTransactionsRunningNow(statement);
      }
    }
    LOG.info("Publication {} now holds {}", publication, names);
    return added;
  }
}
