package io.icebergcdc.jobs.definition;

import io.icebergcdc.cdc.debezium.DebeziumJsonParser;
import io.icebergcdc.jobs.capture.CapturedTable;
import java.sql.Connection;
import java.sql.Driver;
import java.sql.SQLException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.regex.Pattern;

/**
 * A database captured through Debezium ({@code apply --source postgres|mysql|mariadb}): where it
 * is, which of its tables, and the replication settings. Knows the Debezium properties and the JDBC
 * address that follow from them. Its password is kept for the connector and never printed.
 *
 * @param kind PostgreSQL, MySQL or MariaDB
 * @param database the database (PostgreSQL: the one to connect to; MySQL: the one whose tables are
 *     captured)
 * @param tables regular expressions matched against {@code schema.table} (PostgreSQL) or {@code
 *     database.table} (MySQL), as Debezium's {@code table.include.list}
 * @param slot PostgreSQL's replication slot
 * @param publication PostgreSQL's publication, created for the captured tables if missing
 * @param serverId the MySQL replication client's server id, unique among the server's replicas
 * @param name the connector's name, which prefixes its topics
 * @param snapshotChunkRows the rows of a chunk of the initial snapshot, which the job reads itself,
 *     in parallel, beside the log; 0 for Debezium's own snapshot (one reader, started over after a
 *     failure)
 * @param tableDiscoveryInterval how often a job with a chunked snapshot looks for tables created
 *     while it runs that {@code tables} match, to take them in flight (or, where it cannot, to be
 *     built again with them); zero for never
 */
public record DatabaseSource(
    Kind kind,
    String host,
    int port,
    String user,
    String password,
    String database,
    List<String> tables,
    String slot,
    String publication,
    long serverId,
    String name,
    int snapshotChunkRows,
    Duration tableDiscoveryInterval)
    implements SourceDefinition, java.io.Serializable {

  /** The database products the job captures. */
  public enum Kind {
    POSTGRES("io.debezium.connector.postgresql.PostgresConnector", 5432),
    MYSQL("io.debezium.connector.mysql.MySqlConnector", 3306),
    MARIADB("io.debezium.connector.mariadb.MariaDbConnector", 3306);

    final String connectorClass;
    final int defaultPort;

    Kind(String connectorClass, int defaultPort) {
      this.connectorClass = connectorClass;
      this.defaultPort = defaultPort;
    }

    public int defaultPort() {
      return defaultPort;
    }

    public static Kind of(String name) {
      switch (name.toLowerCase(Locale.ROOT)) {
        case "postgres":
        case "postgresql":
          return POSTGRES;
        case "mysql":
          return MYSQL;
        case "mariadb":
          return MARIADB;
        default:
          throw new IllegalArgumentException(
              "unknown database '" + name + "'; this build captures postgres, mysql and mariadb");
      }
    }
  }

  @Override
  public String toString() {
    return "DatabaseSource[" + origin() + ", user " + user + ", tables " + tables + "]";
  }

  /**
   * A source with the defaults: a snapshot in chunks of {@link #DEFAULT_SNAPSHOT_CHUNK_ROWS} rows,
   * new tables looked for every {@link #DEFAULT_TABLE_DISCOVERY_INTERVAL}; the withers change them.
   */
  public DatabaseSource(
      Kind kind,
      String host,
      int port,
      String user,
      String password,
      String database,
      List<String> tables,
      String slot,
      String publication,
      long serverId,
      String name) {
    this(
        kind,
        host,
        port,
        user,
        password,
        database,
        tables,
        slot,
        publication,
        serverId,
        name,
        DEFAULT_SNAPSHOT_CHUNK_ROWS,
        DEFAULT_TABLE_DISCOVERY_INTERVAL);
  }

  /** This source with snapshot chunks of {@code rows} rows; 0 for Debezium's own snapshot. */
  public DatabaseSource withSnapshotChunkRows(int rows) {
    return new DatabaseSource(
        kind,
        host,
        port,
        user,
        password,
        database,
        tables,
        slot,
        publication,
        serverId,
        name,
        rows,
        tableDiscoveryInterval);
  }

  /**
   * This source without {@code excluded} (tables named as {@code tables} match them: {@code
   * schema.table} or {@code database.table}): each pattern matches what it matched but them.
   */
  public DatabaseSource without(java.util.Collection<String> excluded) {
    if (excluded.isEmpty()) {
      return this;
    }
    String names =
        excluded.stream().map(Pattern::quote).collect(java.util.stream.Collectors.joining("|"));
    List<String> narrowed =
        tablePatterns().stream()
            .map(pattern -> "(?!(?:" + names + ")$)(?:" + pattern.pattern() + ")")
            .toList();
    return new DatabaseSource(
        kind,
        host,
        port,
        user,
        password,
        database,
        narrowed,
        slot,
        publication,
        serverId,
        name,
        snapshotChunkRows,
        tableDiscoveryInterval);
  }

  /**
   * Whether {@code table} ({@code schema.table} or {@code database.table}) is one of its tables.
   */
  public boolean matches(String table) {
    return tablePatterns().stream().anyMatch(pattern -> pattern.matcher(table).matches());
  }

  /** This source looking for new tables every {@code interval}; zero for never. */
  public DatabaseSource withTableDiscoveryInterval(Duration interval) {
    return new DatabaseSource(
        kind,
        host,
        port,
        user,
        password,
        database,
        tables,
        slot,
        publication,
        serverId,
        name,
        snapshotChunkRows,
        interval);
  }

  /** How often a job looks for new tables unless told otherwise. */
  public static final Duration DEFAULT_TABLE_DISCOVERY_INTERVAL = Duration.ofSeconds(30);

  /**
   * How often Debezium's heartbeat writes a logical decoding message into a PostgreSQL log: the
   * position it moves to reaches the slot at the next completed checkpoint.
   */
  public static final Duration HEARTBEAT_INTERVAL = Duration.ofSeconds(10);

  /** The prefix of the heartbeat's logical decoding messages, which the connector skips. */
  public static final String HEARTBEAT_MESSAGE_PREFIX = "iceberg-cdc-heartbeat";

  /** The rows of a snapshot chunk unless the job names another number. */
  public static final int DEFAULT_SNAPSHOT_CHUNK_ROWS = 50_000;

  public DatabaseSource {
    if (snapshotChunkRows < 0) {
      throw new IllegalArgumentException(
          "snapshot chunks of " + snapshotChunkRows + " rows: a chunk cannot have fewer than 0");
    }
    if (tableDiscoveryInterval == null || tableDiscoveryInterval.isNegative()) {
      throw new IllegalArgumentException(
          "the table discovery interval must be zero (never) or positive, not "
              + tableDiscoveryInterval);
    }
    tables = List.copyOf(tables);
    for (String table : tables) {
      Pattern.compile(table);
    }
  }

  /** The table patterns, or by default all tables of the public schema or the database. */
  public List<Pattern> tablePatterns() {
    List<String> given =
        tables.isEmpty()
            ? List.of(kind == Kind.POSTGRES ? "public\\..*" : Pattern.quote(database) + "\\..*")
            : tables;
    return given.stream().map(Pattern::compile).toList();
  }

  public String jdbcUrl() {
    return kind == Kind.POSTGRES
        ? "jdbc:postgresql://" + host + ":" + port + "/" + database
        : "jdbc:mysql://" + host + ":" + port + "/" + database + "?tinyInt1isBit=false";
  }

  /**
   * A JDBC connection to the database. The driver is called directly: {@link
   * java.sql.DriverManager} does not see drivers that only Flink's user-code class loader has. A
   * connection refused fails naming the database and the user (never the password).
   */
  public Connection connect() throws SQLException {
    Properties credentials = new Properties();
    credentials.setProperty("user", user);
    if (password != null) {
      credentials.setProperty("password", password);
    }
    Driver driver =
        kind == Kind.POSTGRES ? new org.postgresql.Driver() : new com.mysql.cj.jdbc.Driver();
    try {
      return driver.connect(jdbcUrl(), credentials);
    } catch (SQLException e) {
      throw new SQLException(
          "cannot connect to "
              + origin()
              + (user == null ? "" : " as " + user)
              + ": "
              + e.getMessage(),
          e.getSQLState(),
          e.getErrorCode(),
          e);
    }
  }

  /** The database, for messages: {@code postgres://host:port/database}. */
  @Override
  public String origin() {
    return kind.name().toLowerCase(Locale.ROOT) + "://" + host + ":" + port + "/" + database;
  }

  /** Debezium's properties for the captured tables. */
  public Map<String, String> debeziumProperties(List<CapturedTable> captured) {
    return debeziumProperties(captured, false);
  }

  /**
   * A pattern as an item of Debezium's comma-separated list of patterns, which reads {@code \,} as
   * a comma of the pattern: each comma escaped so (one escaped already, a literal comma in the
   * regular expression, becomes the same plain comma, which means the same).
   */
  static String listItem(String pattern) {
    StringBuilder item = new StringBuilder(pattern.length() + 8);
    for (int i = 0; i < pattern.length(); i++) {
      char c = pattern.charAt(i);
      if (c == '\\' && i + 1 < pattern.length()) {
        char next = pattern.charAt(++i);
        if (next == ',') {
          item.append("\\,");
        } else {
          item.append(c).append(next);
        }
      } else if (c == ',') {
        item.append("\\,");
      } else {
        item.append(c);
      }
    }
    return item.toString();
  }

  /**
   * Debezium's properties for the captured tables.
   *
   * @param byPatterns whether the connector's table list is the job's table patterns, so that it
   *     captures the tables created while it runs too, which the job takes in flight; else the
   *     captured tables, each by name
   */
  public Map<String, String> debeziumProperties(List<CapturedTable> captured, boolean byPatterns) {
    Map<String, String> properties = new LinkedHashMap<>();
    properties.put("connector.class", kind.connectorClass);
    properties.put("name", name);
    properties.put("topic.prefix", name);
    // The job finds a record's table by its topic: spelt with the table's name as it is.
    properties.put(
        "topic.naming.strategy",
        (kind == Kind.POSTGRES
                ? io.icebergcdc.capture.TableTopicNaming.BySchema.class
                : io.icebergcdc.capture.TableTopicNaming.ByDatabase.class)
            .getName());
    properties.put("database.hostname", host);
    properties.put("database.port", Integer.toString(port));
    properties.put("database.user", user);
    if (password != null) {
      properties.put("database.password", password);
    }
    properties.put(
        "table.include.list",
        String.join(
            ",",
            byPatterns
                // Debezium matches its list without case; the job's patterns match with it.
                ? tablePatterns().stream().map(p -> "(?-i:" + listItem(p.pattern()) + ")").toList()
                : captured.stream()
                    .map(
                        t ->
                            listItem(
                                Pattern.quote(t.namespace()) + "\\." + Pattern.quote(t.name())))
                    .toList()));
    properties.put("snapshot.mode", "initial");
    properties.put("tombstones.on.delete", "false");
    properties.put("provide.transaction.metadata", "false");
    properties.put("decimal.handling.mode", "precise");
    properties.put("binary.handling.mode", "bytes");
    properties.put("unavailable.value.placeholder", DebeziumJsonParser.UNAVAILABLE_VALUE);
    // Debezium skips truncates by default: the job would then keep the truncated rows silently.
    // Sent, a truncate is applied by the key-indexed writer; one that a table's writer cannot apply
    // fails the job or, as asked, becomes a dead letter.
    properties.put("skipped.operations", "none");
    // The connector's context headers, which the job does not read, cost its decoding thread about
    // a twentieth of its time (README, "Where the streaming time goes now").
    properties.put("extended.headers.enabled", "false");
    if (kind == Kind.POSTGRES) {
      properties.put("database.dbname", database);
      properties.put("plugin.name", "pgoutput");
      properties.put("slot.name", slot);
      properties.put("slot.drop.on.stop", "false");
      properties.put("publication.name", publication);
      // By patterns, Debezium's filtered mode would publish every table they match at each start,
      // tables the job refuses too; the job publishes the tables it captures itself then.
      properties.put("publication.autocreate.mode", byPatterns ? "disabled" : "filtered");
      // A partitioned table's changes as its own, not its partitions' (TableListing).
      properties.put("publish.via.partition.root", "true");
      // While the captured tables are idle and others are written, the slot would hold all that
      // WAL until a captured table changed: pgoutput sends nothing of the other tables, and
      // Debezium's heartbeat alone repeats the last change's position. So the heartbeat commits a
      // logical decoding message, which the connector reads (and skips by its prefix) at the log's
      // end; the heartbeat after it carries that commit's position, which a completed checkpoint
      // then confirms to the slot. Transactional: a connector restored from such a position waits
      // for a commit past it, which a message outside a transaction is not. Any role may call the
      // function.
      properties.put("heartbeat.interval.ms", Long.toString(HEARTBEAT_INTERVAL.toMillis()));
      properties.put(
          "heartbeat.action.query",
          // A hot standby (logical decoding reads one from PostgreSQL 16 on) writes no WAL.
          "SELECT CASE WHEN pg_is_in_recovery() THEN NULL ELSE pg_logical_emit_message(true, '"
              + HEARTBEAT_MESSAGE_PREFIX
              + "', '') END");
      properties.put("message.prefix.exclude.list", HEARTBEAT_MESSAGE_PREFIX);
    } else {
      properties.put("database.server.id", Long.toString(serverId));
      properties.put("database.include.list", listItem(Pattern.quote(database)));
      properties.put("include.schema.changes", "false");
      properties.put("bigint.unsigned.handling.mode", "precise");
      properties.put("time.precision.mode", "adaptive_time_microseconds");
      // Every table of the database: a table added to the job's tables later, or created while it
      // runs, is then known to the connector restored from the job's state.
      properties.put("schema.history.internal.store.only.captured.tables.ddl", "false");
      if (kind == Kind.MYSQL) {
        properties.put("database.ssl.mode", "disabled");
      }
    }
    return properties;
  }
}
