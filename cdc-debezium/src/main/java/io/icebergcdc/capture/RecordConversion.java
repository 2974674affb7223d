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
  private final JsonConverter textWriter = new JsonConverter();
  private final KeyChangeFill keyChanges;

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
        throw new MalformedChangeException(
            locator + ": no captured table has this topic; the job captures " + routes.topics());
      }
      events = converters[index].convert((Struct) record.value(), record.valueSchema(), locator);
    } catch (MalformedChangeException e) {
      String text = text(record);
      if (routes.badRecordPolicy() == BadRecordPolicy.FAIL) {
        throw TableRoute.withRecord(e, text);
      }
      String table = index == null ? record.topic() : routes.route(index).tableName();
      output.accept(
          CapturedChange.deadLetter(new DeadLetter(table, routes.origin(), e.getMessage(), text)));
      return;
    }
    for (ChangeEvent event : events) {
      output.accept(
          CapturedChange.of(index, keyChanges == null ? event : keyChanges.fill(index, event)));
    }
  }

  /** The record's value as Kafka Connect's JSON converter writes it without schema. */
  private String text(SourceRecord record) {
    byte[] json = textWriter.fromConnectData(record.topic(), record.valueSchema(), record.value());
    return new String(json, StandardCharsets.UTF_8);
  }
}
