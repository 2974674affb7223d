package io.icebergcdc.sink.table;

import java.math.BigDecimal;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.apache.iceberg.Schema;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.util.DateTimeUtil;

/**
 * A SQL boolean expression over a table's columns, as the option {@code overwrite.filter} takes it,
 * turned into an Iceberg {@link Expression} with each literal converted to its column's type.
 *
 * <p>The expression is what a {@code WHERE} clause of comparisons is: {@code =}, {@code <>}, {@code
 * !=}, {@code <}, {@code <=}, {@code >}, {@code >=} between a column and a literal (either side),
 * {@code IS [NOT] NULL}, {@code [NOT] IN (...)}, {@code [NOT] BETWEEN ... AND ...}, combined with
 * {@code AND}, {@code OR}, {@code NOT} and parentheses. Literals are numbers, {@code 'strings'} (a
 * quote doubled inside), {@code TRUE}, {@code FALSE}, {@code DATE '2026-01-06'} and {@code
 * TIMESTAMP '2026-01-06 00:00:00'} (for a column with a time zone, in UTC). Columns are names or
 * {@code `quoted`} names. Functions and arithmetic are not part of it: Flink's planner cannot be
 * reached from a sink, and Iceberg has no SQL parser of its own.
 */
final class SqlFilter {

  private final String text;
  private final Schema schema;
  private final List<String> tokens;
  private int next;

  private SqlFilter(String text, Schema schema) {
    this.text = text;
    this.schema = schema;
    this.tokens = tokenize(text);
  }

  /**
   * @throws IllegalArgumentException naming the part of {@code text} that is not understood, a
   *     column the table does not have, or a literal that is not of its column's type
   */
  static Expression parse(String text, Schema schema) {
    SqlFilter parser = new SqlFilter(text, schema);
    if (parser.tokens.isEmpty()) {
      throw parser.error("it is empty");
    }
    Expression expression = parser.or();
    if (parser.next < parser.tokens.size()) {
      throw parser.error("'" + parser.tokens.get(parser.next) + "' is not expected there");
    }
    return SqlTruth.whereTrue(expression);
  }

  private Expression or() {
    Expression left = and();
    while (accept("OR")) {
      left = Expressions.or(left, and());
    }
    return left;
  }

  private Expression and() {
    Expression left = not();
    while (accept("AND")) {
      left = Expressions.and(left, not());
    }
    return left;
  }

  private Expression not() {
    if (accept("NOT")) {
      return Expressions.not(not());
    }
    return predicate();
  }

  private Expression predicate() {
    if (accept("(")) {
      Expression inner = or();
      expect(")");
      return inner;
    }
    if (isLiteralStart(peek())) {
      // literal op column
      String literal = literal();
      String op = comparison();
      Types.NestedField column = column();
      return compare(column, flip(op), value(column, literal));
    }
    Types.NestedField column = column();
    if (accept("IS")) {
      boolean negated = accept("NOT");
      expect("NULL");
      return negated ? Expressions.notNull(column.name()) : Expressions.isNull(column.name());
    }
    boolean negated = accept("NOT");
    if (accept("IN")) {
      expect("(");
      List<Object> values = new ArrayList<>();
      do {
        values.add(value(column, literal()));
      } while (accept(","));
      expect(")");
      return negated
          ? Expressions.notIn(column.name(), values)
          : Expressions.in(column.name(), values);
    }
    if (accept("BETWEEN")) {
      Object low = value(column, literal());
      expect("AND");
      Object high = value(column, literal());
      Expression between =
          Expressions.and(
              Expressions.greaterThanOrEqual(column.name(), low),
              Expressions.lessThanOrEqual(column.name(), high));
      return negated ? Expressions.not(between) : between;
    }
    if (negated) {
      throw error("NOT after column '" + column.name() + "' must be followed by IN or BETWEEN");
    }
    String op = comparison();
    return compare(column, op, value(column, literal()));
  }

  private static Expression compare(Types.NestedField column, String op, Object value) {
    String name = column.name();
    switch (op) {
      case "=":
        return Expressions.equal(name, value);
      case "<>":
      case "!=":
        return Expressions.notEqual(name, value);
      case "<":
        return Expressions.lessThan(name, value);
      case "<=":
        return Expressions.lessThanOrEqual(name, value);
      case ">":
        return Expressions.greaterThan(name, value);
      case ">=":
        return Expressions.greaterThanOrEqual(name, value);
      default:
        throw new IllegalStateException(op);
    }
  }

  private static String flip(String op) {
    switch (op) {
      case "<":
        return ">";
      case "<=":
        return ">=";
      case ">":
        return "<";
      case ">=":
        return "<=";
      default:
        return op;
    }
  }

  private String comparison() {
    String token = peek();
    if (token != null && List.of("=", "<>", "!=", "<", "<=", ">", ">=").contains(token)) {
      next++;
      return token;
    }
    throw error("a comparison (=, <>, <, <=, >, >=, IS, IN, BETWEEN) is expected after a column");
  }

  private Types.NestedField column() {
    String token = peek();
    if (token == null || isLiteralStart(token) || isSymbol(token)) {
      throw error("a column is expected" + (token == null ? " at its end" : " at '" + token + "'"));
    }
    next++;
    String name = token.startsWith("`") ? token.substring(1, token.length() - 1) : token;
    Types.NestedField field = schema.caseInsensitiveFindField(name);
    if (field == null) {
      throw error("the table has no column '" + name + "'");
    }
    return field;
  }

  /** A literal token, as written: a number, 'string', TRUE, FALSE, DATE '...', TIMESTAMP '...'. */
  private String literal() {
    String token = peek();
    if (token == null || !isLiteralStart(token)) {
      throw error(
          "a literal is expected" + (token == null ? " at its end" : " at '" + token + "'"));
    }
    next++;
    String upper = token.toUpperCase(Locale.ROOT);
    if (upper.equals("DATE") || upper.equals("TIMESTAMP")) {
      String quoted = peek();
      if (quoted == null || !quoted.startsWith("'")) {
        throw error(upper + " must be followed by a quoted value");
      }
      next++;
      return upper + " " + quoted;
    }
    if (token.equals("-")) {
      String number = peek();
      if (number == null || !Character.isDigit(number.charAt(0))) {
        throw error("'-' must be followed by a number");
      }
      next++;
      return "-" + number;
    }
    return token;
  }

  /** The literal as a value of the column's type, as Iceberg's expressions take it. */
  private Object value(Types.NestedField column, String literal) {
    Type type = column.type();
    try {
      if (literal.startsWith("DATE ")) {
        LocalDate date = LocalDate.parse(unquote(literal.substring(5)));
        if (type.typeId() == Type.TypeID.DATE) {
          return DateTimeUtil.daysFromDate(date);
        }
        return timestampValue(column, date.atStartOfDay(), literal);
      }
      if (literal.startsWith("TIMESTAMP ")) {
        String value = unquote(literal.substring(10)).trim().replace(' ', 'T');
        return timestampValue(column, LocalDateTime.parse(value), literal);
      }
      if (literal.startsWith("'")) {
        String value = unquote(literal);
        switch (type.typeId()) {
          case STRING:
            return value;
          case DATE:
            return DateTimeUtil.daysFromDate(LocalDate.parse(value));
          case TIME:
            return DateTimeUtil.microsFromTime(LocalTime.parse(value));
          case TIMESTAMP:
            return timestampValue(column, LocalDateTime.parse(value.replace(' ', 'T')), literal);
          default:
            throw mismatch(column, literal);
        }
      }
      String upper = literal.toUpperCase(Locale.ROOT);
      if (upper.equals("TRUE") || upper.equals("FALSE")) {
        if (type.typeId() != Type.TypeID.BOOLEAN) {
          throw mismatch(column, literal);
        }
        return Boolean.parseBoolean(upper.toLowerCase(Locale.ROOT));
      }
      BigDecimal number = new BigDecimal(literal);
      switch (type.typeId()) {
        case INTEGER:
          return number.intValueExact();
        case LONG:
          return number.longValueExact();
        case FLOAT:
          return number.floatValue();
        case DOUBLE:
          return number.doubleValue();
        case DECIMAL:
          return number.setScale(((Types.DecimalType) type).scale());
        default:
          throw mismatch(column, literal);
      }
    } catch (ArithmeticException | NumberFormatException | DateTimeParseException e) {
      throw error(
          "the literal "
              + literal
              + " does not fit column '"
              + column.name()
              + "' ("
              + type
              + "): "
              + e.getMessage());
    }
  }

  private Object timestampValue(Types.NestedField column, LocalDateTime time, String literal) {
    if (column.type() instanceof Types.TimestampType timestamp) {
      return timestamp.shouldAdjustToUTC()
          ? DateTimeUtil.microsFromTimestamptz(time.atOffset(ZoneOffset.UTC))
          : DateTimeUtil.microsFromTimestamp(time);
    }
    throw mismatch(column, literal);
  }

  private IllegalArgumentException mismatch(Types.NestedField column, String literal) {
    return error(
        "the literal "
            + literal
            + " cannot be compared with column '"
            + column.name()
            + "' ("
            + column.type()
            + ")");
  }

  private static String unquote(String quoted) {
    return quoted.substring(1, quoted.length() - 1).replace("''", "'");
  }

  private boolean isLiteralStart(String token) {
    if (token == null) {
      return false;
    }
    char first = token.charAt(0);
    String upper = token.toUpperCase(Locale.ROOT);
    boolean typed =
        (upper.equals("DATE") || upper.equals("TIMESTAMP"))
            && next + 1 < tokens.size()
            && tokens.get(next + 1).startsWith("'");
    return first == '\''
        || Character.isDigit(first)
        || token.equals("-")
        || upper.equals("TRUE")
        || upper.equals("FALSE")
        || typed;
  }

  private static boolean isSymbol(String token) {
    return "(),=<>!".indexOf(token.charAt(0)) >= 0;
  }

  private String peek() {
    return next < tokens.size() ? tokens.get(next) : null;
  }

  private boolean accept(String keyword) {
    String token = peek();
    if (token != null && token.equalsIgnoreCase(keyword)) {
      next++;
      return true;
    }
    return false;
  }

  private void expect(String keyword) {
    if (!accept(keyword)) {
      String token = peek();
      throw error(
          "'"
              + keyword
              + "' is expected"
              + (token == null ? " at its end" : " at '" + token + "'"));
    }
  }

  private IllegalArgumentException error(String reason) {
    return new IllegalArgumentException(
        "option 'overwrite.filter' = '" + text + "' cannot be used: " + reason);
  }

  private List<String> tokenize(String input) {
    List<String> result = new ArrayList<>();
    int i = 0;
    while (i < input.length()) {
      char c = input.charAt(i);
      if (Character.isWhitespace(c)) {
        i++;
      } else if (c == '\'') {
        int end = i + 1;
        while (true) {
          if (end >= input.length()) {
            throw error("a quoted value is not closed");
          }
          if (input.charAt(end) == '\'') {
            if (end + 1 < input.length() && input.charAt(end + 1) == '\'') {
              end += 2;
              continue;
            }
            break;
          }
          end++;
        }
        result.add(input.substring(i, end + 1));
        i = end + 1;
      } else if (c == '`') {
        int end = input.indexOf('`', i + 1);
        if (end < 0) {
          throw error("a quoted column is not closed");
        }
        result.add(input.substring(i, end + 1));
        i = end + 1;
      } else if (c == '<' || c == '>' || c == '!') {
        if (i + 1 < input.length()
            && (input.charAt(i + 1) == '=' || (c == '<' && input.charAt(i + 1) == '>'))) {
          result.add(input.substring(i, i + 2));
          i += 2;
        } else if (c == '!') {
          throw error("'!' must be followed by '='");
        } else {
          result.add(String.valueOf(c));
          i++;
        }
      } else if ("(),=-".indexOf(c) >= 0) {
        result.add(String.valueOf(c));
        i++;
      } else if (Character.isDigit(c) || c == '.') {
        int end = i;
        while (end < input.length()
            && (Character.isDigit(input.charAt(end))
                || ".eE".indexOf(input.charAt(end)) >= 0
                || ((input.charAt(end) == '-' || input.charAt(end) == '+')
                    && "eE".indexOf(input.charAt(end - 1)) >= 0))) {
          end++;
        }
        result.add(input.substring(i, end));
        i = end;
      } else if (Character.isLetter(c) || c == '_') {
        int end = i;
        while (end < input.length()
            && (Character.isLetterOrDigit(input.charAt(end)) || input.charAt(end) == '_')) {
          end++;
        }
        result.add(input.substring(i, end));
        i = end;
      } else {
        throw error("'" + c + "' is not understood");
      }
    }
    return result;
  }
}
