package io.icebergcdc.jobs.demo;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * Generates a PostgreSQL-like Debezium changelog of the demo table, delivered with disorder and
 * duplicates, together with the {@link ReferenceModel} of the rows it must leave.
 *
 * <p>The source history is generated first, in commit order with rising LSNs: inserts, updates,
 * deletes, re-inserts and primary-key changes (a delete of the old key and an insert of the new one
 * at one LSN, as Debezium emits them). Delivery then moves a share of the changes later by up to
 * {@code maxDisplacement} positions and repeats another share. Every hundredth line, the first
 * among them, carries the Connect schema (as with {@code schemas.enable=true}); the others carry
 * the payload alone, with the decimal as a string (as with {@code decimal.handling.mode=string}).
 */
public final class ChangelogGenerator {

  private static final ObjectMapper MAPPER = new ObjectMapper();
  private static final int SCHEMA_EVERY = 100;

  private final int changes;
  private final int keys;
  private final double outOfOrderShare;
  private final double duplicateShare;
  private final int maxDisplacement;
  private final long seed;

  /**
   * @param changes the number of source changes (a key change counts as one)
   * @param keys the size of the key space
   * @param outOfOrderShare the share of changes delivered later than changes that follow them
   * @param duplicateShare the share of changes delivered twice
   * @param seed the random seed: the same seed gives the same changelog
   */
  public ChangelogGenerator(
      int changes, int keys, double outOfOrderShare, double duplicateShare, long seed) {
    this.changes = changes;
    this.keys = keys;
    this.outOfOrderShare = outOfOrderShare;
    this.duplicateShare = duplicateShare;
    this.maxDisplacement = 500;
    this.seed = seed;
  }

  /** A generated changelog: the lines as delivered, and what they must produce. */
  public record Changelog(
      List<String> lines,
      ReferenceModel model,
      int sourceChanges,
      int outOfOrder,
      int duplicates,
      int deletes,
      int keyChanges) {

    public void writeTo(Path file) {
      try (BufferedWriter writer = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
        for (String line : lines) {
          writer.write(line);
          writer.newLine();
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }

    /** The lines as Kafka records, each keyed as Debezium keys it ({@link #kafkaKeyOf}). */
    public List<Map.Entry<String, String>> kafkaRecords() {
      List<Map.Entry<String, String>> records = new ArrayList<>(lines.size());
      for (String line : lines) {
        records.add(Map.entry(kafkaKeyOf(line), line));
      }
      return records;
    }

    public String describe() {
      return String.format(
          "%d source changes (%d deletes, %d key changes) delivered as %d events: %d out of"
              + " order, %d duplicated",
          sourceChanges, deletes, keyChanges, lines.size(), outOfOrder, duplicates);
    }
  }

  private record Change(String op, DemoRow before, DemoRow after, long lsn) {}

  private record Event(Change change, double position) {}

  /** The Kafka key Debezium writes for a line: the primary key of the row the event changes. */
  public static String kafkaKeyOf(String line) {
    try {
      JsonNode root = MAPPER.readTree(line);
      JsonNode payload = root.has("payload") ? root.get("payload") : root;
      JsonNode row = payload.get("after").isNull() ? payload.get("before") : payload.get("after");
      return "{\"id\":" + row.get("id").asLong() + "}";
    } catch (IOException e) {
      throw new UncheckedIOException("not a change event of this generator: " + line, e);
    }
  }

  public Changelog generate() {
    Random random = new Random(seed);
    Map<Long, DemoRow> live = new HashMap<>();
    ReferenceModel model = new ReferenceModel();
    List<Change> history = new ArrayList<>();
    long lsn = 0x1_0000_0000L;
    long micros = 1_700_000_000_000_000L;
    int deletes = 0;
    int keyChanges = 0;
    for (int i = 0; i < changes; i++) {
      lsn += 1 + random.nextInt(64);
      micros += 1 + random.nextInt(1_000_000);
      long id = random.nextInt(keys);
      DemoRow current = live.get(id);
      if (current == null) {
        DemoRow row = randomRow(random, id, micros);
        live.put(id, row);
        model.upsert(row);
        history.add(new Change("c", null, row, lsn));
        continue;
      }
      double dice = random.nextDouble();
      if (dice < 0.70) {
        DemoRow row = randomRow(random, id, micros);
        live.put(id, row);
        model.upsert(row);
        history.add(new Change("u", current, row, lsn));
      } else if (dice < 0.85) {
        live.remove(id);
        model.delete(id);
        deletes++;
        history.add(new Change("d", current, null, lsn));
      } else {
        long newId = random.nextInt(keys);
        if (live.containsKey(newId)) {
          i--;
          continue;
        }
        DemoRow moved = randomRow(random, newId, micros);
        live.remove(id);
        live.put(newId, moved);
        model.delete(id);
        model.upsert(moved);
        keyChanges++;
        history.add(new Change("d", current, null, lsn));
        history.add(new Change("c", null, moved, lsn));
      }
    }

    List<Event> delivery = new ArrayList<>();
    int outOfOrder = 0;
    int duplicates = 0;
    for (int i = 0; i < history.size(); i++) {
      double position = i;
      if (random.nextDouble() < outOfOrderShare) {
        position += 1 + random.nextInt(maxDisplacement) + 0.5;
        outOfOrder++;
      }
      delivery.add(new Event(history.get(i), position));
      if (random.nextDouble() < duplicateShare) {
        delivery.add(new Event(history.get(i), i + random.nextInt(2 * maxDisplacement) + 0.25));
        duplicates++;
      }
    }
    delivery.sort(Comparator.comparingDouble(Event::position));
    List<String> lines = new ArrayList<>(delivery.size());
    for (Event e : delivery) {
      Change c = e.change();
      lines.add(event(c.op(), c.before(), c.after(), c.lsn(), lines.size() % SCHEMA_EVERY == 0));
    }
    return new Changelog(lines, model, changes, outOfOrder, duplicates, deletes, keyChanges);
  }

  private static DemoRow randomRow(Random random, long id, long micros) {
    return new DemoRow(
        id,
        "item-" + id + "-" + Integer.toString(random.nextInt(1 << 20), 36),
        random.nextInt(1000),
        random.nextInt(10_000_000) - 100_000,
        micros);
  }

  private String event(String op, DemoRow before, DemoRow after, long lsn, boolean withSchema) {
    ObjectNode payload = MAPPER.createObjectNode();
    payload.set("before", before == null ? null : row(before, withSchema));
    payload.set("after", after == null ? null : row(after, withSchema));
    ObjectNode source = payload.putObject("source");
    source.put("version", "3.5.0.Final");
    source.put("connector", "postgresql");
    source.put("name", "demo");
    source.put("ts_ms", (after != null ? after : before).updatedAtMicros() / 1000);
    source.put("db", "demo");
    source.put("schema", "public");
    source.put("table", "items");
    source.put("lsn", lsn);
    payload.put("op", op);
    payload.put("ts_ms", (after != null ? after : before).updatedAtMicros() / 1000 + 5);
    try {
      if (!withSchema) {
        return MAPPER.writeValueAsString(payload);
      }
      ObjectNode envelope = MAPPER.createObjectNode();
      envelope.set("schema", envelopeSchema());
      envelope.set("payload", payload);
      return MAPPER.writeValueAsString(envelope);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static ObjectNode row(DemoRow row, boolean withSchema) {
    ObjectNode node = MAPPER.createObjectNode();
    node.put("id", row.id());
    node.put("name", row.name());
    node.put("qty", row.qty());
    if (withSchema) {
      node.put(
          "price",
          Base64.getEncoder().encodeToString(BigInteger.valueOf(row.priceCents()).toByteArray()));
    } else {
      node.put("price", java.math.BigDecimal.valueOf(row.priceCents(), 2).toPlainString());
    }
    node.put("updated_at", row.updatedAtMicros());
    return node;
  }

  private static ObjectNode envelopeSchema() {
    ObjectNode schema = MAPPER.createObjectNode();
    schema.put("type", "struct");
    schema.put("name", "demo.public.items.Envelope");
    ArrayNode fields = schema.putArray("fields");
    fields.add(rowSchema("before"));
    fields.add(rowSchema("after"));
    ObjectNode source = fields.addObject();
    source.put("type", "struct");
    source.put("field", "source");
    source.put("optional", false);
    fields.addObject().put("type", "string").put("field", "op").put("optional", false);
    fields.addObject().put("type", "int64").put("field", "ts_ms").put("optional", true);
    return schema;
  }

  private static ObjectNode rowSchema(String field) {
    ObjectNode struct = MAPPER.createObjectNode();
    struct.put("type", "struct");
    struct.put("optional", true);
    struct.put("name", "demo.public.items.Value");
    struct.put("field", field);
    ArrayNode fields = struct.putArray("fields");
    fields.addObject().put("type", "int64").put("optional", false).put("field", "id");
    fields.addObject().put("type", "string").put("optional", true).put("field", "name");
    fields.addObject().put("type", "int32").put("optional", true).put("field", "qty");
    ObjectNode price = fields.addObject();
    price.put("type", "bytes").put("optional", true).put("field", "price");
    price.put("name", "org.apache.kafka.connect.data.Decimal").put("version", 1);
    price.putObject("parameters").put("scale", "2").put("connect.decimal.precision", "10");
    fields
        .addObject()
        .put("type", "int64")
        .put("optional", true)
        .put("name", "io.debezium.time.MicroTimestamp")
        .put("version", 1)
        .put("field", "updated_at");
    return struct;
  }
}
