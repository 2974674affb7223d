package io.icebergcdc.cdc.debezium;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.MissingNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.icebergcdc.cdc.ColumnMask;
import java.io.IOException;
import java.util.Map;
import org.apache.flink.table.data.RowData;

/**
 * The parts of a Debezium payload a change is made of, read as the payload streams by: its rows are
 * converted from the parser's tokens without a tree, its {@code source} block read as a small tree.
 * What {@link DebeziumJsonParser} would take from the payload's tree, read the same way.
 */
final class StreamedPayload {

  JsonNode op = MissingNode.getInstance();
  JsonNode source = MissingNode.getInstance();
  JsonNode tsMs = MissingNode.getInstance();
  RowData before;
  RowData after;
  ColumnMask unavailable = ColumnMask.EMPTY;

  private StreamedPayload() {}

  /**
   * Reads the payload object that starts at the parser's current token, to its end; the parser must
   * then hold no more.
   *
   * @throws NotStreamed where the payload has a shape its tree would read otherwise: a field given
   *     twice, a row or source that is neither an object nor null, content after it
   */
  static StreamedPayload read(JsonParser parser, JsonRowConverter rows, Map<String, String> units)
      throws IOException {
    StreamedPayload payload = new StreamedPayload();
    int seen = 0;
    String name;
    while ((name = parser.nextFieldName()) != null) {
      JsonToken token = parser.nextToken();
      int field =
          switch (name) {
            case "before" -> 1;
            case "after" -> 2;
            case "source" -> 4;
            case "op" -> 8;
            case "ts_ms" -> 16;
            default -> 0;
          };
      if ((seen & field) != 0) {
        throw NotStreamed.INSTANCE;
      }
      seen |= field;
      switch (field) {
        case 1 -> payload.before = row(parser, token, rows, units, false);
        case 2 -> {
          payload.after = row(parser, token, rows, units, true);
          payload.unavailable =
              payload.after == null ? ColumnMask.EMPTY : rows.unavailableOfLastRow();
        }
        case 4 ->
            payload.source =
                token == JsonToken.START_OBJECT
                    ? source(parser)
                    : StreamedValues.node(parser, token);
        case 8 -> payload.op = StreamedValues.node(parser, token);
        case 16 -> payload.tsMs = StreamedValues.node(parser, token);
        default -> parser.skipChildren();
      }
    }
    if (!parser.hasToken(JsonToken.END_OBJECT) || parser.nextToken() != null) {
      throw NotStreamed.INSTANCE;
    }
    return payload;
  }

  /**
   * The {@code source} object at the parser, with only the fields a change is made of ({@link
   * DebeziumJsonParser#SOURCE_FIELDS}); the others are skipped. As in a tree, a field given twice
   * has its last value.
   */
  private static JsonNode source(JsonParser parser) throws IOException {
    ObjectNode source = JsonNodeFactory.instance.objectNode();
    String name;
    while ((name = parser.nextFieldName()) != null) {
      JsonToken token = parser.nextToken();
      if (DebeziumJsonParser.SOURCE_FIELDS.contains(name)) {
        source.set(name, StreamedValues.node(parser, token));
      } else {
        parser.skipChildren();
      }
    }
    if (!parser.hasToken(JsonToken.END_OBJECT)) {
      throw NotStreamed.INSTANCE;
    }
    return source;
  }

  private static RowData row(
      JsonParser parser,
      JsonToken token,
      JsonRowConverter rows,
      Map<String, String> units,
      boolean checkRequired)
      throws IOException {
    if (token == JsonToken.VALUE_NULL) {
      return null;
    }
    if (token != JsonToken.START_OBJECT) {
      throw NotStreamed.INSTANCE;
    }
    return rows.convert(parser, units, checkRequired);
  }
}
