package io.icebergcdc.capture;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

class SchemaHistoryTablesTest {

  /** A schema history record as Debezium's MySQL and MariaDB connectors write it (shortened). */
  private static String record(String... tables) {
    StringBuilder changes = new StringBuilder();
    for (String table : tables) {
      if (changes.length() > 0) {
        changes.append(',');
      }
      String[] parts = table.split("\\.");
      changes
          .append("{\"type\":\"CREATE\",\"id\":\"\\\"")
          .append(parts[0])
          .append("\\\".\\\"")
          .append(parts[1])
          .append("\\\"\",\"table\":{\"primaryKeyColumnNames\":[\"id\"]}}");
    }
    return "{\"source\":{\"server\":\"maria\"},\"position\":{\"file\":\"mysql-bin.000003\"},"
        + "\"databaseName\":\"shop\",\"ddl\":\"CREATE TABLE ...\",\"tableChanges\":["
        + changes
        + "]}";
  }

  private static String includeList(String... tables) {
    StringBuilder list = new StringBuilder();
    for (String table : tables) {
      String[] parts = table.split("\\.");
      if (list.length() > 0) {
        list.append(',');
      }
      list.append(Pattern.quote(parts[0])).append("\\.").append(Pattern.quote(parts[1]));
    }
    return list.toString();
  }

  @Test
  void aHistoryOfEveryTableKnowsATableAddedLater() {
    List<String> history = List.of(record("shop.customers", "shop.orders"), record("shop.returns"));
    assertThat(SchemaHistoryTables.unknown(history, includeList("shop.customers", "shop.returns")))
        .isEmpty();
  }

  @Test
  void theCreateStatementsReadWhereTheLogStartsAreKnownTables() {
    List<String> history =
        List.of(
            "{\"source\":{\"server\":\"maria\"},\"position\":{\"file\":\"mysql-bin.000003\"},"
                + "\"databaseName\":\"shop\",\"ddl\":\"CREATE TABLE `customers` (\\n  `id` int)\"}");
    assertThat(SchemaHistoryTables.unknown(history, includeList("shop.customers", "shop.returns")))
        .containsExactly("shop.returns");
  }

  @Test
  void aHistoryOfTheCapturedTablesOnlyLacksAnAddedTable() {
    List<String> history = List.of(record("shop.customers"));
    assertThat(SchemaHistoryTables.unknown(history, includeList("shop.customers", "shop.returns")))
        .containsExactly("shop.returns");
  }

  @Test
  void aFirstStartHasNoHistoryToLookAt() {
    assertThat(SchemaHistoryTables.unknown(List.of(), includeList("shop.returns"))).isEmpty();
  }
}
