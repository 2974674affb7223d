package io.icebergcdc.it;

import io.icebergcdc.sink.CatalogDefinition;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.Properties;

/**
 * Iceberg JDBC catalogs on the machine's PostgreSQL (127.0.0.1:5432, trust authentication), each in
 * a database of its own, created when missing and emptied of an earlier run's tables.
 */
final class JdbcCatalogs {

  private JdbcCatalogs() {}

  /** A JDBC catalog in a fresh database {@code database}, with tables under {@code warehouse}. */
  static CatalogDefinition fresh(String database, String warehouse) throws Exception {
    Properties user = new Properties();
    user.setProperty("user", "postgres");
    try (Connection connection =
            new org.postgresql.Driver().connect("jdbc:postgresql://127.0.0.1:5432/postgres", user);
        Statement statement = connection.createStatement()) {
      try (ResultSet exists =
          statement.executeQuery("SELECT 1 FROM pg_database WHERE datname = '" + database + "'")) {
        if (exists.next()) {
          statement.execute("DROP DATABASE " + database + " WITH (FORCE)");
        }
      }
      statement.execute("CREATE DATABASE " + database);
    }
    return CatalogDefinition.builder()
        .type("jdbc")
        .uri("jdbc:postgresql://127.0.0.1:5432/" + database)
        .warehouse(warehouse)
        .property("jdbc.user", "postgres")
        .build();
  }
}
