package io.icebergcdc.capture;

import static org.assertj.core.api.Assertions.assertThat;

import io.icebergcdc.cdc.ChangeSchema;
import java.lang.reflect.Proxy;
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import org.apache.flink.table.data.DecimalData;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.TimestampData;
import org.apache.iceberg.Schema;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;

/** The SQL of chunks and the key values that bound them, as the database is given them. */
class ChunkQueriesTest {

  private static final SourceDatabase POSTGRES =
      SourceDatabase.of(
          Map.of(
              "connector.class", PostgresSlotCheck.POSTGRES_CONNECTOR, "database.dbname", "shop"));
  private static final SourceDatabase MYSQL =
      SourceDatabase.of(Map.of("connector.class", "io.debezium.connector.mysql.MySqlConnector"));

  private static final Schema LINES =
      new Schema(
          List.of(
              Types.NestedField.required(1, "order", Types.IntegerType.get()),
              Types.NestedField.required(2, "code", Types.StringType.get()),
              Types.NestedField.optional(3, "qty", Types.LongType.get())),
          java.util.Set.of(1, 2));

  /** What a statement was prepared with and given, through a connection that records it. */
  private final List<String> sql = new ArrayList<>();

  private final Map<Integer, Object> parameters = new TreeMap<>();

  private Connection recording() {
    PreparedStatement statement = recordingStatement();
    return (Connection)
        Proxy.newProxyInstance(
            getClass().getClassLoader(),
            new Class<?>[] {Connection.class},
            (proxy, method, args) -> {
              if (method.getName().equals("prepareStatement")) {
                sql.add((String) args[0]);
                return statement;
              }
              return null;
            });
  }

  /** A statement that records the values bound to it in {@link #parameters}. */
  private PreparedStatement recordingStatement() {
    return (PreparedStatement)
        Proxy.newProxyInstance(
            getClass().getClassLoader(),
            new Class<?>[] {PreparedStatement.class},
            (proxy, method, args) -> {
              if (method.getName().startsWith("set") && args.length == 2) {
                parameters.put((Integer) args[0], args[1]);
              }
              return null;
            });
  }

  @Test
  void aCompositeKeyBoundsChunksByRowValueAndResumesAfterTheLastKey() throws Exception {
    ChunkQueries queries =
        linesQueries(POSTGRES, "pg.s.lines", List.of("order", "code", "qty"), true);
    assertThat(queries.bounded()).isTrue();
    queries.rows(
        recording(),
        new SnapshotChunk("pg.s.lines", 2, List.of("7", "a"), List.of("9", "b"), List.of()),
        100);
    assertThat(sql.get(0))
        .isEqualTo(
            "SELECT \"order\", \"code\", \"qty\" FROM \"s\".\"lines\""
                + " WHERE \"order\" >= ? AND (\"order\", \"code\") >= (?, ?)"
                + " AND \"order\" <= ? AND (\"order\", \"code\") < (?, ?)"
                + " ORDER BY \"order\", \"code\" LIMIT 100");
    // The int key binds as a long: the source may have widened it since the job took its schema.
    assertThat(parameters)
        .containsExactly(
            Map.entry(1, 7L),
            Map.entry(2, 7L),
            Map.entry(3, "a"),
            Map.entry(4, 9L),
            Map.entry(5, 9L),
            Map.entry(6, "b"));

    parameters.clear();
    queries.rows(
        recording(),
        new SnapshotChunk("pg.s.lines", 2, List.of("7", "a"), List.of(), List.of("8", "x")),
        100);
    assertThat(sql.get(1))
        .isEqualTo(
            "SELECT \"order\", \"code\", \"qty\" FROM \"s\".\"lines\""
                + " WHERE \"order\" >= ? AND (\"order\", \"code\") > (?, ?)"
                + " ORDER BY \"order\", \"code\" LIMIT 100");
    assertThat(parameters).containsExactly(Map.entry(1, 8L), Map.entry(2, 8L), Map.entry(3, "x"));

    GenericRowData row = GenericRowData.of(8, StringData.fromString("x y"), 3L);
    assertThat(queries.keyOf(row)).containsExactly("8", "x y");

    // The current row of one key, for the values a change of key left out.
    parameters.clear();
    queries.current(recording(), GenericRowData.of(8, StringData.fromString("x y"), null));
    assertThat(sql.get(2))
        .isEqualTo(
            "SELECT \"order\", \"code\", \"qty\" FROM \"s\".\"lines\""
                + " WHERE (\"order\", \"code\") = (?, ?)");
    assertThat(parameters).containsExactly(Map.entry(1, 8L), Map.entry(2, "x y"));

    // A boundary past the int range, once the source widened the key, binds too.
    parameters.clear();
    queries.rows(
        recording(),
        new SnapshotChunk("pg.s.lines", 3, List.of("3000000000", "a"), List.of(), List.of()),
        100);
    assertThat(parameters)
        .containsExactly(
            Map.entry(1, 3_000_000_000L), Map.entry(2, 3_000_000_000L), Map.entry(3, "a"));
  }

  @Test
  void aSingleColumnKeyComparesAsItselfAndTheNextBoundaryIsAnOffsetInKeyOrder() throws Exception {
    Schema items =
        new Schema(
            List.of(
                Types.NestedField.required(1, "id", Types.LongType.get()),
                Types.NestedField.optional(2, "v", Types.StringType.get())),
            java.util.Set.of(1));
    ChunkQueries queries =
        new ChunkQueries(
            MYSQL,
            new ChunkedSnapshot.Table(
                "m.db.items", "db", "items", List.of("id"), List.of("id", "v"), true),
            new ChangeSchema(items));
    try {
      queries.boundaryAfter(recording(), List.of("500"), 1000);
    } catch (NullPointerException e) {
      // The recording statement has no result set; the SQL is what this test reads.
    }
    assertThat(sql.get(0))
        .isEqualTo(
            "SELECT `id` FROM `db`.`items` WHERE `id` >= ? ORDER BY `id` LIMIT 1 OFFSET 1000");
    assertThat(parameters).containsExactly(Map.entry(1, 500L));
  }

  /**
   * The Iceberg table keeps a column the source dropped: chunks read the source's, leave it null.
   */
  @Test
  void chunksReadTheSourcesColumnsOnly() throws Exception {
    ChunkQueries queries = linesQueries(POSTGRES, "pg.s.lines", List.of("code", "order"), true);
    queries.rows(
        recording(), new SnapshotChunk("pg.s.lines", 0, List.of(), List.of(), List.of()), 10);
    assertThat(sql.get(0))
        .isEqualTo(
            "SELECT \"code\", \"order\" FROM \"s\".\"lines\" ORDER BY \"order\", \"code\" LIMIT 10");
    java.sql.ResultSet result =
        (java.sql.ResultSet)
            Proxy.newProxyInstance(
                getClass().getClassLoader(),
                new Class<?>[] {java.sql.ResultSet.class},
                (proxy, method, args) -> {
                  switch (method.getName()) {
                    case "getString":
                      return "x";
                    case "getInt":
                      return 8;
                    case "wasNull":
                      return false;
                    default:
                      return null;
                  }
                });
    GenericRowData row = queries.row(result);
    assertThat(row.getInt(0)).isEqualTo(8);
    assertThat(row.getString(1).toString()).isEqualTo("x");
    assertThat(row.isNullAt(2)).isTrue();
  }

  /**
   * The queries of table {@code lines} of {@link #LINES}, keyed by (order, code), captured into
   * {@code topic} (its second part the table's namespace), reading {@code columns}.
   */
  private static ChunkQueries linesQueries(
      SourceDatabase database, String topic, List<String> columns, boolean bounded) {
    return new ChunkQueries(
        database,
        new ChunkedSnapshot.Table(
            topic, topic.split("\\.")[1], "lines", List.of("order", "code"), columns, bounded),
        new ChangeSchema(LINES));
  }

  /** MySQL's enum keys are ordered by member number and compared as text: one chunk. */
  @Test
  void aKeyTheDatabaseComparesOtherwiseThanItOrdersDoesNotBoundChunks() {
    ChunkQueries queries = linesQueries(MYSQL, "m.db.lines", List.of("order", "code"), false);
    assertThat(queries.bounded()).isFalse();
  }

  /**
   * A value the driver refuses to give as its column's type is a bad row naming the column, which
   * the chunk goes on after; a failure to reach the database stays a failure.
   */
  @Test
  void aValueTheDriverRefusesIsABadRowNamingItsColumn() throws Exception {
    ChunkQueries queries =
        linesQueries(MYSQL, "my.shop.lines", List.of("order", "code", "qty"), true);
    java.sql.ResultSet refusing =
        resultRefusingColumn3(new java.sql.SQLException("Illegal hour value '36'", "S1009"));
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> queries.row(refusing))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("column 'qty' of")
        .hasMessageContaining("Illegal hour value '36'");
    java.sql.ResultSet unreachable =
        resultRefusingColumn3(new java.sql.SQLException("Communications link failure", "08S01"));
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> queries.row(unreachable))
        .isInstanceOf(java.sql.SQLException.class);
  }

  /** A result whose third column cannot be read, its others 1 and "a". */
  private java.sql.ResultSet resultRefusingColumn3(java.sql.SQLException refusal) {
    return (java.sql.ResultSet)
        Proxy.newProxyInstance(
            getClass().getClassLoader(),
            new Class<?>[] {java.sql.ResultSet.class},
            (proxy, method, args) -> {
              if (args != null && args.length > 0 && Integer.valueOf(3).equals(args[0])) {
                throw refusal;
              }
              switch (method.getName()) {
                case "getInt":
                  return 1;
                case "getLong":
                  return 1L;
                case "getString":
                  return "a";
                case "wasNull":
                  return false;
                default:
                  return null;
              }
            });
  }

  @Test
  void keysOfFloatingPointOrTimeDoNotBoundChunks() throws Exception {
    Schema timed =
        new Schema(
            List.of(Types.NestedField.required(1, "at", Types.TimeType.get())),
            java.util.Set.of(1));
    ChunkQueries queries =
        new ChunkQueries(
            POSTGRES,
            new ChunkedSnapshot.Table("pg.s.t", "s", "t", List.of("at"), List.of("at"), true),
            new ChangeSchema(timed));
    assertThat(queries.bounded()).isFalse();
    queries.rows(recording(), new SnapshotChunk("pg.s.t", 0, List.of(), List.of(), List.of()), 10);
    assertThat(sql.get(0)).isEqualTo("SELECT \"at\" FROM \"s\".\"t\"");
  }

  /** Each key type's value, as a row holds it, travels as text and binds as the database's. */
  /**
   * A decimal key that the source widened to a greater precision bounds chunks with values past the
   * precision the job took, in the same text as a value of that precision.
   */
  @Test
  void aDecimalKeyWidenedInTheSourceBoundsChunks() throws Exception {
    Type taken = Types.DecimalType.of(6, 2);
    Type bound = SnapshotColumns.boundType(taken);
    java.sql.ResultSet result =
        (java.sql.ResultSet)
            Proxy.newProxyInstance(
                getClass().getClassLoader(),
                new Class<?>[] {java.sql.ResultSet.class},
                (proxy, method, args) ->
                    method.getName().equals("getBigDecimal")
                        ? new BigDecimal("123456789.50")
                        : null);
    String text = SnapshotColumns.encode(bound, SnapshotColumns.reader(bound).read(result, 1));
    assertThat(text).isEqualTo("123456789.50");
    // A value of the type taken travels in the same text either way.
    DecimalData small = DecimalData.fromBigDecimal(new BigDecimal("12.50"), 6, 2);
    assertThat(SnapshotColumns.encode(taken, small)).isEqualTo("12.50");
    parameters.clear();
    SnapshotColumns.bind(recordingStatement(), 1, bound, text);
    assertThat(parameters.get(1)).isEqualTo(new BigDecimal("123456789.50"));
  }

  @Test
  void keyValuesTravelAsTextAndBindAsTheirJdbcValues() throws Exception {
    UUID uuid = UUID.fromString("0f8fad5b-d9cb-469f-a165-70867728950e");
    byte[] uuidBytes =
        java.nio.ByteBuffer.allocate(16)
            .putLong(uuid.getMostSignificantBits())
            .putLong(uuid.getLeastSignificantBits())
            .array();
    LocalDateTime local = LocalDateTime.of(1969, 12, 31, 23, 59, 59, 123_456_000);
    List<Object[]> cases =
        List.of(
            new Object[] {Types.IntegerType.get(), -5, -5},
            new Object[] {Types.LongType.get(), 1L << 40, 1L << 40},
            new Object[] {
              Types.DecimalType.of(12, 2),
              DecimalData.fromBigDecimal(new BigDecimal("-12.50"), 12, 2),
              new BigDecimal("-12.50")
            },
            new Object[] {Types.StringType.get(), StringData.fromString("ä b,c"), "ä b,c"},
            new Object[] {Types.UUIDType.get(), uuidBytes, uuid},
            new Object[] {Types.DateType.get(), -3, LocalDate.ofEpochDay(-3)},
            new Object[] {
              Types.TimestampType.withoutZone(), TimestampData.fromLocalDateTime(local), local
            },
            new Object[] {
              Types.TimestampType.withZone(),
              TimestampData.fromLocalDateTime(local),
              OffsetDateTime.of(local, ZoneOffset.UTC)
            },
            new Object[] {Types.BinaryType.get(), new byte[] {0, 1, -1}, new byte[] {0, 1, -1}});
    for (Object[] c : cases) {
      Type type = (Type) c[0];
      String text = SnapshotColumns.encode(type, c[1]);
      parameters.clear();
      PreparedStatement statement =
          (PreparedStatement)
              Proxy.newProxyInstance(
                  getClass().getClassLoader(),
                  new Class<?>[] {PreparedStatement.class},
                  (proxy, method, args) -> {
                    parameters.put((Integer) args[0], args[1]);
                    return null;
                  });
      SnapshotColumns.bind(statement, 1, type, text);
      assertThat(parameters.get(1)).as("%s as '%s'", type, text).isEqualTo(c[2]);
      assertThat(SnapshotColumns.boundsChunks(type)).isTrue();
    }
    assertThat(SnapshotColumns.boundsChunks(Types.DoubleType.get())).isFalse();
    // Keys are bound as the widest type Iceberg widens them to, in the same text.
    assertThat(SnapshotColumns.boundType(Types.IntegerType.get())).isEqualTo(Types.LongType.get());
    assertThat(SnapshotColumns.boundType(Types.DecimalType.of(12, 2)))
        .isEqualTo(Types.DecimalType.of(38, 2));
    assertThat(SnapshotColumns.encode(Types.LongType.get(), 5_000_000_000L))
        .isEqualTo("5000000000");
  }
}
