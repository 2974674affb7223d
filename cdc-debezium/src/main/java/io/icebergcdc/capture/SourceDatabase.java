package io.icebergcdc.capture;

import java.io.Serializable;
import java.sql.Connection;
import java.sql.Driver;
import java.sql.SQLException;
import java.util.List;
import java.util.Map;
import java.util.Properties;

/**
 * The database a Debezium connector reads, reached over JDBC with the connector's own properties
 * ({@code database.hostname}, {@code database.port}, {@code database.user}, {@code
 * database.password}, {@code database.dbname}): for the checks and the snapshot reads the source
 * makes beside the connector. The password is never shown.
 */
final class SourceDatabase implements Serializable {

  private static final long serialVersionUID = 1L;

  /** The products whose SQL differs here. */
  enum Dialect {
    POSTGRES,
    MYSQL
  }

  private final Dialect dialect;
  private final String url;
  private final String user;
  private final String password;

  private SourceDatabase(Dialect dialect, String url, String user, String password) {
    this.dialect = dialect;
    this.url = url;
    this.user = user;
    this.password = password;
  }

  static SourceDatabase of(Map<String, String> properties) {
    String connector = properties.get("connector.class");
    String host = properties.getOrDefault("database.hostname", "localhost");
    if (PostgresSlotCheck.POSTGRES_CONNECTOR.equals(connector)) {
      return new SourceDatabase(
          Dialect.POSTGRES,
          "jdbc:postgresql://"
              + host
              + ":"
              + properties.getOrDefault("database.port", "5432")
              + "/"
              + properties.get("database.dbname")
              // Each result's columns as they are now (ChunkReader compares them with the schema
              // read): the driver otherwise keeps a column's NOT NULL from before a change.
              + "?databaseMetadataCacheFields=0",
          properties.getOrDefault("database.user", "postgres"),
          properties.get("database.password"));
    }
    return new SourceDatabase(
        Dialect.MYSQL,
        "jdbc:mysql://"
            + host
            + ":"
            + properties.getOrDefault("database.port", "3306")
            // A zero date ('0000-00-00', which MySQL's modes may allow) reads as null, as
            // Debezium's log reader gives it, not as an exception at every restart.
            + "/?tinyInt1isBit=false&connectionTimeZone=UTC&forceConnectionTimeZoneToSession=true"
            + "&zeroDateTimeBehavior=CONVERT_TO_NULL",
        properties.getOrDefault("database.user", "root"),
        properties.get("database.password"));
  }

  Dialect dialect() {
    return dialect;
  }

  /** The JDBC address, without credentials, for messages. */
  String url() {
    return url;
  }

  /**
   * A new connection. The driver is called directly: {@link java.sql.DriverManager} does not see
   * drivers that only Flink's user-code class loader has.
   */
  Connection connect() throws SQLException {
    Properties credentials = new Properties();
    credentials.setProperty("user", user);
    if (password != null) {
      credentials.setProperty("password", password);
    }
    Driver driver =
        dialect == Dialect.POSTGRES ? new org.postgresql.Driver() : new com.mysql.cj.jdbc.Driver();
    Connection connection = driver.connect(url, credentials);
    if (connection == null) {
      throw new SQLException("no JDBC driver accepts " + url);
    }
    return connection;
  }

  /** An identifier quoted for this database's SQL. */
  String quote(String identifier) {
    return dialect == Dialect.POSTGRES
        ? '"' + identifier.replace("\"", "\"\"") + '"'
        : '`' + identifier.replace("`", "``") + '`';
  }

  /** A table's name qualified by its schema (PostgreSQL) or database (MySQL), quoted. */
  String table(String namespace, String name) {
    return quote(namespace) + "." + quote(name);
  }

  /** Columns quoted and joined by commas. */
  String columns(List<String> names) {
    StringBuilder sql = new StringBuilder();
    for (String name : names) {
      sql.append(sql.length() == 0 ? "" : ", ").append(quote(name));
    }
    return sql.toString();
  }

  @Override
  public String toString() {
    return url;
  }
}
