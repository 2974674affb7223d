package io.icebergcdc.jobs.capture;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.icebergcdc.jobs.definition.DatabaseSource;
import io.icebergcdc.jobs.definition.TableDefinition;
import java.util.List;
import java.util.regex.Pattern;
import org.apache.iceberg.Schema;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;

class SourceTablesTest {

  @Test
  void mapsPostgresTypes() {
    assertThat(SourceTables.postgresType("int4", 10, 0)).isEqualTo(Types.IntegerType.get());
    assertThat(SourceTables.postgresType("bigserial", 19, 0)).isEqualTo(Types.LongType.get());
    assertThat(SourceTables.postgresType("numeric", 12, 2)).isEqualTo(Types.DecimalType.of(12, 2));
    assertThat(SourceTables.postgresType("timestamptz", 35, 6))
        .isEqualTo(Types.TimestampType.withZone());
    assertThat(SourceTables.postgresType("timestamp", 29, 6))
        .isEqualTo(Types.TimestampType.withoutZone());
    assertThat(SourceTables.postgresType("jsonb", 0, 0)).isEqualTo(Types.StringType.get());
    assertThat(SourceTables.postgresType("uuid", 0, 0)).isEqualTo(Types.UUIDType.get());
    assertThat(SourceTables.postgresType("bytea", 0, 0)).isEqualTo(Types.BinaryType.get());
    // An unconstrained numeric, an interval and an array have no mapping.
    assertThat(SourceTables.postgresType("numeric", 131089, 0)).isNull();
    assertThat(SourceTables.postgresType("interval", 49, 6)).isNull();
    assertThat(SourceTables.postgresType("_int4", 10, 0)).isNull();
  }

  @Test
  void mapsMysqlTypes() {
    assertThat(SourceTables.mysqlType("INT UNSIGNED", 10, 0)).isEqualTo(Types.LongType.get());
    assertThat(SourceTables.mysqlType("BIGINT UNSIGNED", 20, 0))
        .isEqualTo(Types.DecimalType.of(20, 0));
    assertThat(SourceTables.mysqlType("BIT", 1, 0)).isEqualTo(Types.BooleanType.get());
    assertThat(SourceTables.mysqlType("BIT", 8, 0)).isEqualTo(Types.BinaryType.get());
    assertThat(SourceTables.mysqlType("DATETIME", 26, 6))
        .isEqualTo(Types.TimestampType.withoutZone());
    assertThat(SourceTables.mysqlType("TIMESTAMP", 26, 6))
        .isEqualTo(Types.TimestampType.withZone());
    assertThat(SourceTables.mysqlType("GEOMETRY", 0, 0)).isNull();
  }

  @Test
  void namesTargetTablesFromTheTemplate() {
    CapturedTable table =
        new CapturedTable(
            "inventory",
            "customers",
            new Schema(Types.NestedField.required(1, "id", Types.IntegerType.get())),
            List.of("id"));
    TableDefinition tables =
        new TableDefinition("cdc_{database}.{schema}_{table}", List.of(), null, null);
    assertThat(tables.nameOf(table.namespace(), table.name(), "shop"))
        .isEqualTo("cdc_shop.inventory_customers");
    assertThat(table.topic("pg")).isEqualTo("pg.inventory.customers");
  }

  @Test
  void capturesThePublicSchemaByDefaultAndQuotesTableNamesForDebezium() {
    DatabaseSource source = source(List.of());
    assertThat(source.tablePatterns()).extracting(Pattern::pattern).containsExactly("public\\..*");
    CapturedTable table =
        new CapturedTable(
            "public",
            "order.lines",
            new Schema(Types.NestedField.required(1, "id", Types.IntegerType.get())),
            List.of("id"));
    String include = source.debeziumProperties(List.of(table)).get("table.include.list");
    assertThat(Pattern.compile(include).matcher("public.order.lines").matches()).isTrue();
    assertThat(Pattern.compile(include).matcher("public.orderXlines").matches()).isFalse();
  }

  @Test
  void aJobThatTakesTablesInFlightGivesDebeziumItsPatterns() {
    DatabaseSource source = source(List.of("inventory\\..*", "sales\\.orders_[0-9]+"));
    CapturedTable table =
        new CapturedTable(
            "inventory",
            "customers",
            new Schema(Types.NestedField.required(1, "id", Types.IntegerType.get())),
            List.of("id"));
    String include = source.debeziumProperties(List.of(table), true).get("table.include.list");
    // Debezium matches without case, the job's patterns with it.
    assertThat(include).isEqualTo("(?-i:inventory\\..*),(?-i:sales\\.orders_[0-9]+)");
    assertThat(Pattern.compile(include.split(",")[0], Pattern.CASE_INSENSITIVE))
        .matches(p -> !p.matcher("Inventory.customers").matches(), "case-sensitive");
    assertThat(source.debeziumProperties(List.of(table), true))
        .as("no context headers, which the job does not read")
        .containsEntry("extended.headers.enabled", "false");
    // By name otherwise: a table created later is not the connector's until the job is rebuilt.
    assertThat(source.debeziumProperties(List.of(table)).get("table.include.list"))
        .isEqualTo("\\Qinventory\\E\\.\\Qcustomers\\E");
  }

  /**
   * A pattern with a comma (a quantifier, a literal comma, a class), and a table whose name has
   * one, reach Debezium's list with the comma escaped: Debezium's own parsing of its list gives
   * back the job's patterns, each matching what the job's matches.
   */
  @Test
  void debeziumReadsPatternsWithCommasFromItsList() {
    List<String> patterns =
        List.of("sales\\.orders_[0-9]{1,3}", "sales\\.a\\,b", "sales\\.[x,y]z", "other\\..*");
    DatabaseSource source = source(patterns);
    CapturedTable odd =
        new CapturedTable(
            "sales",
            "a,b",
            new Schema(Types.NestedField.required(1, "id", Types.IntegerType.get())),
            List.of("id"));

    java.util.function.Predicate<String> byPatterns =
        io.debezium.function.Predicates.includes(
            source.debeziumProperties(List.of(odd), true).get("table.include.list"));
    java.util.function.Predicate<String> byName =
        io.debezium.function.Predicates.includes(
            source.debeziumProperties(List.of(odd)).get("table.include.list"));

    for (String table :
        List.of(
            "sales.orders_1",
            "sales.orders_123",
            "sales.orders_1234",
            "sales.a,b",
            "sales.ab",
            "sales.,z",
            "sales.yz",
            "sales.Orders_1",
            "other.t")) {
      boolean job = source.tablePatterns().stream().anyMatch(p -> p.matcher(table).matches());
      assertThat(byPatterns.test(table)).as(table).isEqualTo(job);
      assertThat(byName.test(table)).as(table).isEqualTo(table.equals("sales.a,b"));
    }
  }

  @Test
  void aDatabaseThatCannotBeReachedIsNamedOnce() throws Exception {
    int closedPort;
    try (java.net.ServerSocket socket = new java.net.ServerSocket(0)) {
      closedPort = socket.getLocalPort();
    }
    DatabaseSource unreachable =
        new DatabaseSource(
            DatabaseSource.Kind.POSTGRES,
            "127.0.0.1",
            closedPort,
            "reader",
            null,
            "shop",
            List.of(),
            "slot",
            "publication",
            0,
            "pg");
    String origin = "postgres://127.0.0.1:" + closedPort + "/shop";
    assertThatThrownBy(() -> SourceTables.discover(unreachable))
        .hasMessageStartingWith("cannot connect to " + origin + " as reader: ")
        .satisfies(e -> assertThat(e.getMessage().split(Pattern.quote(origin), -1)).hasSize(2));
  }

  @Test
  void refusesAnInvalidTablePattern() {
    assertThatThrownBy(() -> source(List.of("inventory.("))).hasMessageContaining("inventory.(");
  }

  @Test
  void aConnectionRefusedNamesTheDatabaseAndTheUser() {
    DatabaseSource closed =
        new DatabaseSource(
            DatabaseSource.Kind.POSTGRES,
            "127.0.0.1",
            1,
            "reader",
            "secret-password",
            "shop",
            List.of(),
            "slot",
            "publication",
            0,
            "pg");
    assertThatThrownBy(closed::connect)
        .isInstanceOf(java.sql.SQLException.class)
        .hasMessageStartingWith("cannot connect to postgres://127.0.0.1:1/shop as reader: ")
        .hasMessageNotContaining("secret-password");
  }

  private static DatabaseSource source(List<String> tables) {
    return new DatabaseSource(
        DatabaseSource.Kind.POSTGRES,
        "localhost",
        5432,
        "postgres",
        null,
        "shop",
        tables,
        "slot",
        "publication",
        0,
        "pg");
  }
}
