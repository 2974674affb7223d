package io.icebergcdc.cdc.debezium;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.BigIntegerNode;
import com.fasterxml.jackson.databind.node.BooleanNode;
import com.fasterxml.jackson.databind.node.DoubleNode;
import com.fasterxml.jackson.databind.node.IntNode;
import com.fasterxml.jackson.databind.node.LongNode;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.TextNode;
import java.io.IOException;

/** Values read from a streaming parser as the nodes a tree of the same JSON would hold. */
final class StreamedValues {

  private StreamedValues() {}

  /**
   * The value at the parser's current {@code token}, as the default {@code ObjectMapper} reads it
   * into a tree: an int, long or big integer node by the number's size, a double node for a
   * fraction; an object or array read as a tree (with the parser's codec). Leaves the parser at the
   * value's last token.
   *
   * @throws NotStreamed for a token a tree would read otherwise
   */
  static JsonNode node(JsonParser parser, JsonToken token) throws IOException {
    switch (token) {
      case VALUE_STRING:
        return TextNode.valueOf(parser.getText());
      case VALUE_NUMBER_INT:
        switch (parser.getNumberType()) {
          case INT:
            return IntNode.valueOf(parser.getIntValue());
          case LONG:
            return LongNode.valueOf(parser.getLongValue());
          default:
            return BigIntegerNode.valueOf(parser.getBigIntegerValue());
        }
      case VALUE_NUMBER_FLOAT:
        if (parser.getNumberTypeFP() != JsonParser.NumberTypeFP.UNKNOWN) {
          throw NotStreamed.INSTANCE;
        }
        return DoubleNode.valueOf(parser.getDoubleValue());
      case VALUE_TRUE:
        return BooleanNode.TRUE;
      case VALUE_FALSE:
        return BooleanNode.FALSE;
      case VALUE_NULL:
        return NullNode.getInstance();
      case START_OBJECT:
      case START_ARRAY:
        JsonNode tree = parser.readValueAsTree();
        if (tree == null) {
          throw NotStreamed.INSTANCE;
        }
        return tree;
      default:
        throw NotStreamed.INSTANCE;
    }
  }
}
