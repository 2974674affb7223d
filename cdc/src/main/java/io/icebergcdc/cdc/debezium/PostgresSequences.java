package io.icebergcdc.cdc.debezium;

import io.icebergcdc.cdc.SourceSequence;

/**
 * PostgreSQL's {@code source.sequence} as Debezium writes it: the text of a JSON array of two LSNs,
 * each a decimal string or null ({@code ["24023928","24023976"]}), the last commit's and the
 * change's. Read in place, without a JSON parser: it is read for every change.
 */
public final class PostgresSequences {

  private PostgresSequences() {}

  /**
   * The two LSNs, a null read as 0; null if the text has another form (bare numbers, escapes, more
   * or fewer elements), which a JSON parser is left to read or refuse. An LSN may also be written
   * {@code XXX/XXX}.
   */
  public static long[] pair(String text) {
    int from = skipSpaces(text, 0);
    int to = text.length();
    while (to > from && isSpace(text.charAt(to - 1))) {
      to--;
    }
    if (to - from < 2 || text.charAt(from) != '[' || text.charAt(to - 1) != ']') {
      return null;
    }
    int comma = text.indexOf(',', from + 1);
    if (comma < 0 || comma >= to - 1) {
      return null;
    }
    int another = text.indexOf(',', comma + 1);
    if (another >= 0 && another < to) {
      return null;
    }
    try {
      return new long[] {lsn(text, from + 1, comma), lsn(text, comma + 1, to - 1)};
    } catch (IllegalArgumentException e) {
      return null;
    }
  }

  /** One element, {@code text[from, to)}: 0 for null, else a quoted decimal or X/X LSN. */
  private static long lsn(String text, int from, int to) {
    from = skipSpaces(text, from);
    while (to > from && isSpace(text.charAt(to - 1))) {
      to--;
    }
    if (to - from == 4 && text.startsWith("null", from)) {
      return 0L;
    }
    if (to - from < 2 || text.charAt(from) != '"' || text.charAt(to - 1) != '"') {
      throw new NumberFormatException("not a quoted LSN");
    }
    from++;
    to--;
    for (int i = from; i < to; i++) {
      char c = text.charAt(i);
      if (c == '"' || c == '\\') {
        throw new NumberFormatException("not a plain string");
      }
    }
    int slash = text.indexOf('/', from);
    if (slash >= 0 && slash < to) {
      return SourceSequence.parseLsn(text.substring(from, to));
    }
    return Long.parseLong(text, from, to, 10);
  }

  private static int skipSpaces(String text, int at) {
    while (at < text.length() && isSpace(text.charAt(at))) {
      at++;
    }
    return at;
  }

  /** JSON's whitespace. */
  private static boolean isSpace(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
  }
}
