package io.icebergcdc.cdc.debezium;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectReader;
import io.icebergcdc.cdc.MalformedChangeException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Reads a Debezium JSON event with its Connect schema ({@code {"schema": ..., "payload": ...}}, as
 * Kafka Connect's JSON converter writes it by default) from its UTF-8 bytes, parsing the schema
 * only when its bytes differ from the previous event's.
 *
 * <p>Every event of a table repeats the same schema, which is most of its bytes: here it is skipped
 * by a streaming parser and compared as bytes, and the previous event's parsed schema (the same
 * object, so that the parser's own checks of it are an identity comparison) is given again. Only
 * the payload is read: as it streams by ({@link #knownSchemaPayload}, {@link StreamedPayload}) or
 * here as a tree. An event of any other shape (a bare payload, a tombstone) is read whole.
 *
 * <p>Not thread-safe; one per parser.
 */
final class EnvelopeReader {

  /** An event: its payload and schema, or, for an event of another shape, its whole tree. */
  record Envelope(JsonNode root, JsonNode payload, JsonNode schema) {}

  private static final byte[] SCHEMA_FIELD = "{\"schema\":".getBytes(StandardCharsets.UTF_8);
  private static final byte[] PAYLOAD_FIELD = ",\"payload\":".getBytes(StandardCharsets.UTF_8);

  private final ObjectMapper mapper;

  /** Reads a value that must be the whole of its bytes, with nothing after it. */
  private final ObjectReader wholeReader;

  private byte[] schemaBytes;
  private JsonNode schema;

  EnvelopeReader(ObjectMapper mapper) {
    this.mapper = mapper;
    this.wholeReader = mapper.reader().with(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);
  }

  /**
   * Reads one event.
   *
   * @throws MalformedChangeException naming {@code locator} if the bytes are not JSON or not UTF-8
   */
  Envelope read(byte[] json, String locator) {
    try {
      Envelope envelope = readWithKnownSchema(json);
      if (envelope == null) {
        envelope = readEnvelope(json);
      }
      // Anything after the event (a second event on its line) is refused there.
      return envelope != null ? envelope : new Envelope(wholeReader.readTree(json), null, null);
    } catch (JsonProcessingException e) {
      throw DebeziumJsonParser.notJson(locator, e);
    } catch (IOException e) {
      throw new MalformedChangeException(locator + ": cannot be read: " + e.getMessage(), e);
    }
  }

  /**
   * Where the payload lies, {@code [from, to)}, if the event is written as the previous one was:
   * {@code {"schema":} and the previous schema's bytes, then {@code ,"payload":} and the payload,
   * the envelope's last value. Then the event's schema is {@link #knownSchema()}, not read at all,
   * only compared. Null for any other event, which is {@link #read} as it comes.
   */
  int[] knownSchemaPayload(byte[] json) {
    if (schemaBytes == null || json.length < SCHEMA_FIELD.length + schemaBytes.length + 2) {
      return null;
    }
    int at = SCHEMA_FIELD.length;
    int payloadAt = at + schemaBytes.length + PAYLOAD_FIELD.length;
    if (!Arrays.equals(json, 0, at, SCHEMA_FIELD, 0, at)
        || !Arrays.equals(json, at, at + schemaBytes.length, schemaBytes, 0, schemaBytes.length)
        || payloadAt >= json.length
        || !Arrays.equals(
            json,
            payloadAt - PAYLOAD_FIELD.length,
            payloadAt,
            PAYLOAD_FIELD,
            0,
            PAYLOAD_FIELD.length)) {
      return null;
    }
    int end = json.length;
    while (end > payloadAt && Character.isWhitespace(json[end - 1])) {
      end--;
    }
    if (end <= payloadAt || json[end - 1] != '}') {
      return null;
    }
    return new int[] {payloadAt, end - 1};
  }

  /** The schema of the events {@link #knownSchemaPayload} finds: the last one read. */
  JsonNode knownSchema() {
    return schema;
  }

  /** The event, if {@link #knownSchemaPayload} finds it; null for any other event. */
  private Envelope readWithKnownSchema(byte[] json) throws IOException {
    int[] payloadAt = knownSchemaPayload(json);
    if (payloadAt == null) {
      return null;
    }
    try {
      // The payload must be the whole of what lies between: anything after it (another field,
      // bytes that are not JSON) sends the event the long way, which reads or refuses it.
      JsonNode payload = wholeReader.readTree(json, payloadAt[0], payloadAt[1] - payloadAt[0]);
      return payload == null ? null : new Envelope(null, payload, schema);
    } catch (JsonProcessingException e) {
      return null;
    }
  }

  /** The payload and schema of an envelope; null if the event has another shape. */
  private Envelope readEnvelope(byte[] json) throws IOException {
    try (JsonParser parser = mapper.createParser(json)) {
      if (parser.nextToken() != JsonToken.START_OBJECT) {
        return null;
      }
      JsonNode payload = null;
      JsonNode eventSchema = null;
      String name;
      while ((name = parser.nextFieldName()) != null) {
        JsonToken token = parser.nextToken();
        if (name.equals("schema") && eventSchema == null && token == JsonToken.START_OBJECT) {
          eventSchema = schema(parser, json);
          if (eventSchema == null) {
            return null;
          }
        } else if (name.equals("payload") && payload == null) {
          payload = mapper.readTree(parser);
          if (payload == null) {
            return null;
          }
        } else {
          return null;
        }
      }
      if (payload == null || eventSchema == null || parser.nextToken() != null) {
        // Another shape, or more after the envelope: read as a whole, which refuses the latter.
        return null;
      }
      return new Envelope(null, payload, eventSchema);
    }
  }

  /** The schema object at the parser, the previous one if its bytes are the same. */
  private JsonNode schema(JsonParser parser, byte[] json) throws IOException {
    long start = parser.currentTokenLocation().getByteOffset();
    parser.skipChildren();
    long end = parser.currentLocation().getByteOffset();
    if (start < 0
        || end > json.length
        || end <= start
        || json[(int) start] != '{'
        || json[(int) end - 1] != '}') {
      return null; // offsets this parser does not give as expected: read the event whole
    }
    int from = (int) start;
    int to = (int) end;
    if (schemaBytes == null || !Arrays.equals(json, from, to, schemaBytes, 0, schemaBytes.length)) {
      schema = mapper.readTree(json, from, to - from);
      schemaBytes = Arrays.copyOfRange(json, from, to);
    }
    return schema;
  }
}
