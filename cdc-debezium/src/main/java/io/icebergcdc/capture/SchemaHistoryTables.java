package io.icebergcdc.capture;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The tables a MySQL or MariaDB connector's schema history knows: those named by the {@code
 * tableChanges} of its records. A connector restored with a table its history does not know can
 * read that table's binlog events only if the binlog still holds the table's {@code CREATE TABLE}
 * after the restored position (a table created since the checkpoint); else Debezium fails at the
 * table's first change. This build records every table of the database ({@code
 * schema.history.internal.store.only.captured.tables.ddl=false}), but a history written by an
 * earlier build holds only the tables captured then.
 */
final class SchemaHistoryTables {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Pattern CREATE_TABLE =
      Pattern.compile("\\s*CREATE\\s+TABLE\\s+`?([^`\\s(]+)`?", Pattern.CASE_INSENSITIVE);

  private SchemaHistoryTables() {}

  /**
   * The tables of {@code includeList} (Debezium's {@code table.include.list}, one pattern per
   * table) that a non-empty {@code history} does not know, as {@code database.table}.
   */
  static List<String> unknown(List<String> history, String includeList) {
    if (includeList == null || includeList.isBlank()) {
      return new ArrayList<>();
    }
    return unknown(history, java.util.Arrays.stream(includeList.split(",")).map(String::trim));
  }

  /** The tables ({@code database.table}) that a non-empty {@code history} does not know. */
  static List<String> unknown(List<String> history, List<String> tables) {
    return unknown(
        history,
        tables.stream()
            .map(
                table -> {
                  int dot = table.indexOf('.');
                  return Pattern.quote(table.substring(0, dot))
                      + "\\."
                      + Pattern.quote(table.substring(dot + 1));
                }));
  }

  private static List<String> unknown(
      List<String> history, java.util.stream.Stream<String> patterns) {
    List<String> unknown = new ArrayList<>();
    if (history.isEmpty()) {
      return unknown;
    }
    Set<String> known = new HashSet<>();
    for (String record : history) {
      try {
        JsonNode node = JSON.readTree(record);
        for (JsonNode change : node.path("tableChanges")) {
          known.add(change.path("id").asText().replace("\"", "").replace("`", ""));
        }
        // The CREATE TABLE statements read where the log starts (MySqlLogStart), without changes.
        Matcher create = CREATE_TABLE.matcher(node.path("ddl").asText(""));
        if (node.path("tableChanges").isEmpty() && create.lookingAt()) {
          known.add(node.path("databaseName").asText() + "." + create.group(1));
        }
      } catch (java.io.IOException e) {
        throw new IllegalStateException("cannot read schema history record " + record, e);
      }
    }
    for (String table : (Iterable<String>) patterns::iterator) {
      Pattern pattern = Pattern.compile(table);
      if (known.stream().noneMatch(id -> pattern.matcher(id).matches())) {
        unknown.add(table.replace("\\Q", "").replace("\\E", "").replace("\\.", "."));
      }
    }
    return unknown;
  }
}
