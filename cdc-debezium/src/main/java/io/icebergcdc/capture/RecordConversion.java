package io.icebergcdc.capture;

import io.icebergcdc.cdc.BadRecordPolicy;
import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.DeadLetter;
import io.icebergcdc.cdc.MalformedChangeException;
import io.icebergcdc.cdc.TableRoute;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.json.JsonConverter;
import org.apache.kafka.connect.json.JsonConverterConfig;
import org.apache.kafka.connect.source.SourceRecord;

/**
 * Converts the data change records of a Debezium source reader into {@link CapturedChange}s, each
 * by the converter of its topic's table.
 *
 * <p>A value PostgreSQL did not send (an unchanged TOASTed value) leaves its column out of the
 * change ({@link ChangeEvent#missingColumns()}), for the writers to fill from the key's current
 * row, or, in the new row of a change of key, for {@link KeyChangeFill} to read from the database.
 *
 * <p>A record that cannot be applied (an unknown topic, a value that does not fit the table) fails
 * the job with a message naming it and the start of its JSON text, or, under {@link
 * BadRecordPolicy#DEAD_LETTER}, becomes a dead letter that carries that text. A record whose schema
 * shows that its table changed evolves the table and is passed on in the evolved schema, for the
 * tables whose routes follow schema changes ({@link CaptureRoutes#evolutionOf}); for the others it
 * ends the job with {@link io.icebergcdc.cdc.SourceSchemaChangedException}.
 */
final class RecordConversion {

  private final CaptureRoutes routes;
  private final Map<String, Integer> indexes = new HashMap<>();
  private final StructChangeConverter[] converters;

  /** The converters of the tables that appeared while the job runs, by their routes' indexes. */
  private final Map<Integer, StructChangeConverter> appeared = new HashMap<>();

  private final JsonConverter textWriter = new JsonConverter();
  private final KeyChangeFill keyChanges;

  /** The topics whose changes were skipped until their tables are taken, logged once each. */
  private final java.util.Set<String> skipped = new java.util.HashSet<>();

  private static final org.slf4j.Logger LOG =
      org.slf4j.LoggerFactory.getLogger(RecordConversion.class);

  RecordConversion(CaptureRoutes routes) {
    this(routes, null);
  }

  /**
   * @param keyChanges what fills the values a change of key left out of its new row; null to pass
   *     such changes on unfilled, for the writers to keep until a later change of their key
   */
  RecordConversion(CaptureRoutes routes, KeyChangeFill keyChanges) {
    this.routes = routes;
    this.keyChanges = keyChanges;
    this.converters = new StructChangeConverter[routes.size()];
    for (int i = 0; i < routes.size(); i++) {
      TableRoute route = routes.route(i);
      indexes.put(routes.topics().get(i), i);
      converters[i] =
          new StructChangeConverter(route.schema(), route.tableName(), routes.evolutionOf(i));
    }
    textWriter.configure(Map.of(JsonConverterConfig.SCHEMAS_ENABLE_CONFIG, "false"), false);
  }

  /** Converts one data change record; see the class comment for records that cannot be applied. */
  void convert(SourceRecord record, Consumer<CapturedChange> output) {
    Integer index = indexes.get(record.topic());
    String locator = routes.origin() + ", topic " + record.topic();
    List<ChangeEvent> events;
    try {
      if (index == null) {
        // A table created while the job runs that the enumerator took (TablesTaken).
        int appearedIndex = routes.indexOf(record.topic());
        if (appearedIndex < 0) {
          if (routes.awaitsTaking(record.topic())) {
            skipUntilTaken(record.topic());
            return;
          }
          throw new MalformedChangeException(
              locator + ": no captured table has this topic; the job captures " + routes.topics());
        }
        index = appearedIndex;
        indexes.put(record.topic(), index);
      }
      String refusal = routes.refusalOf(index);
      if (refusal != null) {
        throw new io.icebergcdc.cdc.RefusedSourceException(locator + ": " + refusal);
      }
      events = converter(index).convert((Struct) record.value(), record.valueSchema(), locator);
      if (!events.isEmpty()
          && events.get(0).operation() == io.icebergcdc.cdc.Operation.TRUNCATE
          && !routes.appliesTruncates(index)) {
        throw new MalformedChangeException(
            locator + ": " + io.icebergcdc.cdc.Operation.TRUNCATE_NOT_APPLIED);
      }
    } catch (MalformedChangeException e) {
      String text = text(record);
      if (routes.badRecordPolicy() == BadRecordPolicy.FAIL) {
        throw TableRoute.withRecord(e, text);
      }
      String table = index == null ? record.topic() : routes.route(index).tableName();
      output.accept(
          CapturedChange.deadLetter(
              new DeadLetter(table, routes.origin(), e.getMessage(), text)
                  .writtenAs(index == null ? null : routes.mainOutputName(index))));
      return;
    }
    boolean appearedTable = routes.appeared(index);
    for (ChangeEvent event : events) {
      ChangeEvent filled = keyChanges == null ? event : keyChanges.fill(index, event);
      output.accept(
          appearedTable
              ? CapturedChange.appeared(filled.withTable(routes.mainOutputName(index)))
              : CapturedChange.of(index, filled));
    }
  }

  /**
   * Skips a change of a table that the job takes once the enumerator finds it, and has not found
   * yet: the table's chunks, read after the enumerator took it and so after this change was
   * committed, hold its effect, and every change read from then on is applied over them. A table
   * that is dropped before it is found is not captured.
   */
  private void skipUntilTaken(String topic) {
    if (skipped.add(topic)) {
      LOG.info(
          "Changes of topic {} are skipped until the job takes its table, which appeared in {}"
              + " while the job runs: its snapshot, read then, holds them",
          topic,
          routes.origin());
    }
  }

  private StructChangeConverter converter(int index) {
    if (!routes.appeared(index)) {
      return converters[index];
    }
    return appeared.computeIfAbsent(
        index,
        i ->
            new StructChangeConverter(
                    routes.route(i).schema(), routes.route(i).tableName(), routes.evolutionOf(i))
                .carryingSchemaId());
  }

  /** The record's value as Kafka Connect's JSON converter writes it without schema. */
  private String text(SourceRecord record) {
    byte[] json = textWriter.fromConnectData(record.topic(), record.valueSchema(), record.value());
    return new String(json, StandardCharsets.UTF_8);
  }
}
