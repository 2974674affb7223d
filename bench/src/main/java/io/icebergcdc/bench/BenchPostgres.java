package io.icebergcdc.bench;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * The local PostgreSQL of the capture benchmarks: a database of each benchmark's own and its
 * replication slots, made anew at the start and dropped at the end (a slot left behind keeps the
 * server's WAL for as long as the machine runs).
 */
final class BenchPostgres {

  private BenchPostgres() {}

  /** Drops {@code database} and its slots, those of an earlier run too, and creates it again. */
  static void recreate(String database, String... slots) throws SQLException {
    drop(database, slots);
    try (Connection admin = admin();
        Statement statement = admin.createStatement()) {
      statement.execute("CREATE DATABASE " + database);
    }
  }

  /**
   * Drops the replication slots of {@code database} and those named {@code slots} (after ending the
   * connection of a job cancelled just before that may still hold one), and the database.
   */
  static void drop(String database, String... slots) throws SQLException {
    String named = "'" + String.join("', '", slots) + "'";
    try (Connection admin = admin();
        Statement statement = admin.createStatement()) {
      statement.execute(
          "SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots"
              + " WHERE slot_name IN ("
              + named
              + ") AND active_pid IS NOT NULL");
      statement.execute("SELECT pg_sleep(0.5)");
      statement.execute(
          "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots"
              + " WHERE database = '"
              + database
              + "' OR slot_name IN ("
              + named
              + ")");
      statement.execute("DROP DATABASE IF EXISTS " + database + " WITH (FORCE)");
    }
  }

  private static Connection admin() throws SQLException {
    return DriverManager.getConnection("jdbc:postgresql://127.0.0.1:5432/postgres", "postgres", "");
  }
}
