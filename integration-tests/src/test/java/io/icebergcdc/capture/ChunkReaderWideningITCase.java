package io.icebergcdc.capture;

import static org.assertj.core.api.Assertions.assertThat;

import io.icebergcdc.cdc.BadRecordPolicy;
import io.icebergcdc.cdc.ChangeSchema;
import io.icebergcdc.cdc.SchemaEvolution;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.apache.flink.table.data.RowData;
import org.apache.iceberg.Schema;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A column widened in the source between two batches of the chunk being read, on the machine's
 * PostgreSQL and MariaDB: the batches after it read the wider values, in the schema the reader
 * widens the table to, not as bad rows of the narrower type.
 */
class ChunkReaderWideningITCase {

  private static final String DATABASE = "icebergcdc_widening";
  private static final int ROWS = 30;
  private static final int FETCH_ROWS = 10;

  enum Product {
    POSTGRES,
    MARIADB
  }

  @ParameterizedTest
  @EnumSource(Product.class)
  void aColumnWidenedBetweenTwoBatchesIsReadWideFromTheNextBatchOn(Product product)
      throws Exception {
    String table = table(product);
    RecordingEvolution evolution = evolution();
    Map<Long, Long> read =
        readAcross(
            product,
            evolution,
            product == Product.POSTGRES
                ? "ALTER TABLE " + table + " ALTER COLUMN grp TYPE bigint"
                : "ALTER TABLE " + table + " MODIFY COLUMN grp BIGINT NOT NULL",
            "UPDATE " + table + " SET grp = 5000000000 + id WHERE id > 20");
    assertThat(read).hasSize(ROWS);
    for (long id = 1; id <= ROWS; id++) {
      assertThat(read.get(id))
          .as("grp of %d", id)
          .isEqualTo(id > 20 ? 5_000_000_000L + id : id % 7);
    }
    // The reader widened the table before it passed on a row of the wider type.
    assertThat(evolution.changes).containsExactly("column 'grp' widened to long");
  }

  /** As above, for a NOT NULL dropped: the rows after it hold nulls, which the table then takes. */
  @ParameterizedTest
  @EnumSource(Product.class)
  void aNotNullDroppedBetweenTwoBatchesIsFollowedFromTheNextBatchOn(Product product)
      throws Exception {
    String table = table(product);
    RecordingEvolution evolution = evolution();
    Map<Long, Long> read =
        readAcross(
            product,
            evolution,
            product == Product.POSTGRES
                ? "ALTER TABLE " + table + " ALTER COLUMN grp DROP NOT NULL"
                : "ALTER TABLE " + table + " MODIFY COLUMN grp INT NULL",
            "UPDATE " + table + " SET grp = NULL WHERE id > 20");
    assertThat(read).hasSize(ROWS);
    for (long id = 1; id <= ROWS; id++) {
      assertThat(read.get(id)).as("grp of %d", id).isEqualTo(id > 20 ? null : id % 7);
    }
    assertThat(evolution.changes).containsExactly("column 'grp' allows nulls");
    assertThat(evolution.schema.schema().findField("grp").isOptional()).isTrue();
  }

  private static String table(Product product) {
    return product == Product.POSTGRES ? "public.items" : DATABASE + ".items";
  }

  /** The table's schema as the job took it, (id bigint key, grp int NOT NULL). */
  private static RecordingEvolution evolution() {
    return new RecordingEvolution(
        new ChangeSchema(
            new Schema(
                List.of(
                    Types.NestedField.required(1, "id", Types.LongType.get()),
                    Types.NestedField.required(2, "grp", Types.IntegerType.get())),
                Set.of(1))));
  }

  /**
   * Reads the table of {@link #ROWS} rows as one chunk, in batches of {@link #FETCH_ROWS}, with
   * {@code change} and {@code then} run after the first batch; the rows read, grp by id.
   */
  private static Map<Long, Long> readAcross(
      Product product, RecordingEvolution evolution, String change, String then) throws Exception {
    String table = table(product);
    try (Connection admin = createDatabase(product);
        Statement statement = admin.createStatement()) {
      statement.execute("CREATE TABLE " + table + " (id bigint PRIMARY KEY, grp int NOT NULL)");
      for (int id = 1; id <= ROWS; id++) {
        statement.execute("INSERT INTO " + table + " VALUES (" + id + ", " + id % 7 + ")");
      }
      String namespace = product == Product.POSTGRES ? "public" : DATABASE;
      String topic = "db." + namespace + ".items";
      CaptureRoutes routes =
          new CaptureRoutes(
              Map.of(topic, evolution.schema),
              Map.of(topic, namespace + ".items"),
              Map.of(),
              "db",
              BadRecordPolicy.FAIL,
              evolution,
              Set.of(topic),
              Set.of());
      ChunkedSnapshot snapshot =
          new ChunkedSnapshot(
              List.of(
                  new ChunkedSnapshot.Table(
                      topic, namespace, "items", List.of("id"), List.of("id", "grp"), true)),
              1_000,
              FETCH_ROWS);
      Map<Long, Long> read = new TreeMap<>();
      try (ChunkReader reader = new ChunkReader(source(product), snapshot, routes)) {
        assertThat(reader.open(new SnapshotChunk(topic, 0, List.of(), List.of(), List.of())))
            .isTrue();
        for (int i = 0; i < FETCH_ROWS; i++) {
          put(read, reader.next());
        }
        // The first batch is read; the next is a query of its own, after the change.
        statement.execute(change);
        statement.execute(then);
        for (CapturedChange next = reader.next(); next != null; next = reader.next()) {
          put(read, next);
        }
      }
      return read;
    }
  }

  private static void put(Map<Long, Long> read, CapturedChange change) {
    assertThat(change).isNotNull();
    assertThat(change.deadLetter()).isNull();
    RowData row = change.event().after();
    Object grp = ((org.apache.flink.table.data.GenericRowData) row).getField(1);
    read.put(row.getLong(0), grp == null ? null : ((Number) grp).longValue());
  }

  private static Connection createDatabase(Product product) throws SQLException {
    if (product == Product.POSTGRES) {
      try (Connection postgres =
              DriverManager.getConnection(
                  "jdbc:postgresql://127.0.0.1:5432/postgres", "postgres", "");
          Statement statement = postgres.createStatement()) {
        statement.execute("DROP DATABASE IF EXISTS " + DATABASE + " WITH (FORCE)");
        statement.execute("CREATE DATABASE " + DATABASE);
      }
      return DriverManager.getConnection(
          "jdbc:postgresql://127.0.0.1:5432/" + DATABASE, "postgres", "");
    }
    Connection maria =
        DriverManager.getConnection("jdbc:mysql://127.0.0.1:3306/?tinyInt1isBit=false", "root", "");
    try (Statement statement = maria.createStatement()) {
      statement.execute("DROP DATABASE IF EXISTS " + DATABASE);
      statement.execute("CREATE DATABASE " + DATABASE);
    }
    return maria;
  }

  private static SourceDatabase source(Product product) {
    return product == Product.POSTGRES
        ? SourceDatabase.of(
            Map.of(
                "connector.class",
                PostgresSlotCheck.POSTGRES_CONNECTOR,
                "database.hostname",
                "127.0.0.1",
                "database.dbname",
                DATABASE))
        : SourceDatabase.of(
            Map.of(
                "connector.class",
                "io.debezium.connector.mysql.MySqlConnector",
                "database.hostname",
                "127.0.0.1"));
  }

  /** Keeps the table's schema, widening it as it is asked, and what it was asked. */
  private static final class RecordingEvolution implements SchemaEvolution {
    private ChangeSchema schema;
    private final List<String> changes = new ArrayList<>();

    RecordingEvolution(ChangeSchema schema) {
      this.schema = schema;
    }

    @Override
    public ChangeSchema evolve(String table, Schema sourceSchema, List<String> changes) {
      this.changes.addAll(changes);
      schema = new ChangeSchema(sourceSchema);
      return schema;
    }

    @Override
    public ChangeSchema current(String table) {
      return schema;
    }
  }
}
