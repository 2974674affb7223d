package io.icebergcdc.it;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/** The machine's PostgreSQL for the capture tests: a database and its slot made anew. */
final class PostgresDatabases {

  private PostgresDatabases() {}

  /**
   * Drops the replication slot and the database, and creates the database again. A job of the
   * previous test may still hold the slot for a moment after its cancellation: that connection is
   * ended, and the slot dropped once it is free.
   */
  static void recreate(String database, String slot) throws SQLException {
    drop(database, slot);
    try (Connection admin =
            DriverManager.getConnection(
                "jdbc:postgresql://127.0.0.1:5432/postgres", "postgres", "");
        Statement statement = admin.createStatement()) {
      statement.execute("CREATE DATABASE " + database);
    }
  }

  /**
   * Drops the replication slot and the database, as a test class ends: a slot left behind keeps the
   * server's WAL from then on, however long the machine runs.
   */
  static void drop(String database, String slot) throws SQLException {
    try (Connection admin =
            DriverManager.getConnection(
                "jdbc:postgresql://127.0.0.1:5432/postgres", "postgres", "");
        Statement statement = admin.createStatement()) {
      statement.execute(
          "SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots"
              + " WHERE slot_name = '"
              + slot
              + "' AND active");
      long deadline = System.nanoTime() + 30_000_000_000L;
      while (System.nanoTime() < deadline) {
        try (ResultSet active =
            statement.executeQuery(
                "SELECT 1 FROM pg_replication_slots WHERE slot_name = '" + slot + "' AND active")) {
          if (!active.next()) {
            break;
          }
        }
        try {
          Thread.sleep(100);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new IllegalStateException(e);
        }
      }
      statement.execute(
          "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots"
              + " WHERE slot_name = '"
              + slot
              + "'");
      statement.execute("DROP DATABASE IF EXISTS " + database + " WITH (FORCE)");
    }
  }
}
