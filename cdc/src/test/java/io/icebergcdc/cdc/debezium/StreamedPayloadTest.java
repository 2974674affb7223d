package io.icebergcdc.cdc.debezium;

import static org.assertj.core.api.Assertions.assertThat;

import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.ChangeSchema;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Events whose schema is the one before have their payload read as it streams by, without a tree
 * ({@link StreamedPayload}); every other event, and any payload the stream leaves to the tree, is
 * read as a tree. Both must make the same changes, or fail with the same message, for any payload:
 * here thousands of random ones, valid and not, against the same events read as text (always as a
 * tree).
 */
class StreamedPayloadTest {

  private static final String SCHEMA =
      "{\"type\":\"struct\",\"fields\":["
          + "{\"type\":\"struct\",\"field\":\"before\",\"optional\":true,\"fields\":[]},"
          + "{\"type\":\"struct\",\"field\":\"after\",\"optional\":true,\"fields\":["
          + "{\"type\":\"int64\",\"optional\":false,\"field\":\"id\"},"
          + "{\"type\":\"string\",\"optional\":true,\"field\":\"name\"},"
          + "{\"type\":\"bytes\",\"optional\":true,\"name\":\"org.apache.kafka.connect.data.Decimal\","
          + "\"parameters\":{\"scale\":\"2\",\"connect.decimal.precision\":\"10\"},\"field\":\"price\"},"
          + "{\"type\":\"int32\",\"optional\":true,\"name\":\"io.debezium.time.Date\",\"field\":\"day\"},"
          + "{\"type\":\"int64\",\"optional\":true,\"name\":\"io.debezium.time.MicroTimestamp\","
          + "\"field\":\"ts\"},"
          + "{\"type\":\"string\",\"optional\":true,\"name\":\"io.debezium.time.ZonedTimestamp\","
          + "\"field\":\"tstz\"},"
          + "{\"type\":\"string\",\"optional\":true,\"name\":\"io.debezium.data.Uuid\",\"field\":\"uid\"},"
          + "{\"type\":\"boolean\",\"optional\":true,\"field\":\"flag\"},"
          + "{\"type\":\"int32\",\"optional\":true,\"field\":\"n\"},"
          + "{\"type\":\"double\",\"optional\":true,\"field\":\"d\"},"
          + "{\"type\":\"float\",\"optional\":true,\"field\":\"f\"},"
          + "{\"type\":\"bytes\",\"optional\":true,\"field\":\"blob\"}]},"
          + "{\"type\":\"struct\",\"field\":\"source\",\"fields\":[]},"
          + "{\"type\":\"string\",\"field\":\"op\"}]}";

  private static final ChangeSchema CHANGE_SCHEMA =
      new ChangeSchema(
          DebeziumSchemas.toIcebergSchema(
              DebeziumJsonParser.readTree(SCHEMA, "test"), List.of("id")));

  private static final String[][] VALUES = {
    {"id", "1", "2", "3", "\"4\"", "12345678901234567890", "1.5", "null", "true"},
    {
      "name",
      "\"a\"",
      "\"\"",
      "\"" + DebeziumJsonParser.UNAVAILABLE_VALUE + "\"",
      "12",
      "null",
      "{\"x\":[1,2]}",
      "\"\\u00e9\\n\\\"q\\\"\"",
      "[1]"
    },
    {"price", "\"MDk=\"", "\"AQ==\"", "\"12.34\"", "12.5", "null", "\"!!\"", "1e400", "7"},
    {"day", "19000", "\"2024-01-02\"", "\"bad\"", "1e3", "null", "-1"},
    {"ts", "1700000000123456", "\"2024-01-02T03:04:05\"", "1.7e15", "null", "\"x\""},
    {"tstz", "\"2024-01-02T03:04:05.123456Z\"", "5", "null", "\"2024\""},
    {"uid", "\"123e4567-e89b-12d3-a456-426614174000\"", "\"nope\"", "null", "3"},
    {"flag", "true", "false", "\"true\"", "1", "null"},
    {"n", "5", "3000000000", "-1", "\"12\"", "null", "2.0"},
    {"d", "1.25", "1e308", "-0.0", "3", "\"2.5\"", "null", "12345678901234567890123"},
    {"f", "1.5", "3.4e39", "0.1", "null", "\"x\""},
    {
      "blob",
      "\""
          + Base64.getEncoder()
              .encodeToString(DebeziumJsonParser.UNAVAILABLE_VALUE.getBytes(StandardCharsets.UTF_8))
          + "\"",
      "\"AAEC\"",
      "5",
      "null",
      "\"%%\""
    },
    {"zzz", "1"}
  };

  @Test
  void randomPayloadsReadAsTheyStreamByMakeWhatTheirTreesMake() {
    Random random = new Random(20261204);
    DebeziumJsonParser streamed = new DebeziumJsonParser(CHANGE_SCHEMA, "db.t", null);
    DebeziumJsonParser tree = new DebeziumJsonParser(CHANGE_SCHEMA, "db.t", null);
    int changes = 0;
    int failures = 0;
    int events = 5_000;
    for (int i = 0; i < events; i++) {
      String payload = random.nextInt(200) == 0 ? "null" : payload(random, i);
      String event =
          random.nextInt(100) == 0
              ? "{\"schema\":" + SCHEMA + ",\"payload\":" + payload + ",\"x\":1}"
              : "{\"schema\":" + SCHEMA + ",\"payload\":" + payload + "}";
      String locator = "line " + i;
      Object fromTree = outcome(() -> tree.parse(event, locator));
      Object fromBytes =
          outcome(() -> streamed.parse(event.getBytes(StandardCharsets.UTF_8), locator));
      assertThat(fromBytes).as(event).isEqualTo(fromTree);
      if (fromTree instanceof List<?> list) {
        changes += list.size();
      } else {
        failures++;
      }
    }
    // Both kinds of outcome are many, and most events took the stream.
    assertThat(changes).isGreaterThan(events / 5);
    assertThat(failures).isGreaterThan(events / 5);
    assertThat(streamed.streamedEvents()).isGreaterThan(events / 2);
  }

  /** The changes, or the failure's class and message. */
  private static Object outcome(java.util.function.Supplier<List<ChangeEvent>> parse) {
    try {
      return parse.get();
    } catch (RuntimeException e) {
      return e.getClass().getName() + ": " + e.getMessage();
    }
  }

  private static String payload(Random random, int i) {
    List<String> fields = new ArrayList<>();
    String op =
        random.nextInt(10) > 0
            ? pick(random, "\"c\"", "\"u\"", "\"d\"", "\"r\"")
            : pick(random, "\"x\"", "5", null);
    if (op != null) {
      fields.add("\"op\":" + op);
    }
    String before =
        random.nextInt(2) == 0
            ? row(random)
            : random.nextInt(20) == 0 ? "\"s\"" : pick(random, "null", null);
    if (before != null) {
      fields.add("\"before\":" + before);
    }
    String after =
        random.nextInt(5) > 0
            ? row(random)
            : random.nextInt(10) == 0 ? "[]" : pick(random, "null", null);
    if (after != null) {
      fields.add("\"after\":" + after);
    }
    String source =
        pick(
            random,
            "{\"connector\":\"postgresql\",\"schema\":\"public\",\"table\":\"t\",\"lsn\":"
                + (1000 + i)
                + ",\"sequence\":\"[\\\"10\\\",\\\""
                + (1000 + i)
                + "\\\"]\",\"ts_ms\":1700000000000}",
            "{\"connector\":\"postgresql\",\"table\":\"t\",\"lsn\":\"16/B374D848\"}",
            "{\"connector\":\"mysql\",\"db\":\"shop\",\"table\":\"t\",\"file\":\"bin.000002\","
                + "\"pos\":"
                + i
                + ",\"row\":1}",
            "{\"connector\":\"postgresql\",\"table\":\"t\",\"lsn\":"
                + (1000 + i)
                + ",\"sequence\":\""
                + pick(
                    random,
                    "[null,\\\"7\\\"]",
                    "[5,6]",
                    "[\\\"x\\\",\\\"1\\\"]",
                    "[\\\"1\\\"]",
                    "nope",
                    "[ \\\"1/A\\\" , null ]")
                + "\",\"version\":\"3.5\",\"xmin\":null,\"lsn\":"
                + (3000 + i)
                + "}",
            "{\"connector\":\"postgresql\",\"table\":\"t\",\"lsn\":" + (2000 + i) + "}");
    if (random.nextInt(15) == 0) {
      source = pick(random, "{\"table\":\"t\"}", "null", null);
    }
    if (source != null) {
      fields.add("\"source\":" + source);
    }
    if (random.nextBoolean()) {
      fields.add("\"ts_ms\":" + pick(random, "1700000000999", "\"x\"", "null"));
    }
    if (random.nextInt(4) == 0) {
      fields.add(
          pick(random, "\"transaction\":null", "\"transaction\":{\"id\":\"t1\"}", "\"ts_us\":1"));
    }
    if (random.nextInt(50) == 0 && !fields.isEmpty()) {
      fields.add(fields.get(random.nextInt(fields.size()))); // a field given twice
    }
    Collections.shuffle(fields, random);
    String spaces = random.nextInt(10) == 0 ? " " : "";
    return "{" + spaces + String.join("," + spaces, fields) + spaces + "}";
  }

  private static String row(Random random) {
    List<String> columns = new ArrayList<>();
    for (String[] column : VALUES) {
      boolean rare = column[0].equals("zzz");
      if (rare ? random.nextInt(60) == 0 : random.nextInt(5) > 0 || column[0].equals("id")) {
        // Mostly the first, valid value of a column; now and then another.
        int value = random.nextInt(12) > 0 ? 1 : 1 + random.nextInt(column.length - 1);
        columns.add("\"" + column[0] + "\":" + column[value]);
      }
    }
    if (random.nextInt(60) == 0 && !columns.isEmpty()) {
      columns.add(columns.get(random.nextInt(columns.size()))); // a column given twice
    }
    Collections.shuffle(columns, random);
    return "{" + String.join(",", columns) + "}";
  }

  private static String pick(Random random, String... choices) {
    return choices[random.nextInt(choices.length)];
  }
}
