package io.icebergcdc.capture;

import io.icebergcdc.cdc.MalformedChangeException;
import io.icebergcdc.cdc.SourceSequence;
import org.apache.kafka.connect.data.Field;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.Struct;

/**
 * The fields of a Debezium {@code source} struct that a change event needs, looked up once per
 * schema: the table's name, the source position that orders changes and the time of the change.
 *
 * <p>The position is, for PostgreSQL, {@code lsn} preceded by the last commit LSN of {@code
 * sequence} where the record has one; for MySQL and MariaDB {@code file}, {@code pos} and {@code
 * row}: the same as {@link io.icebergcdc.cdc.debezium.DebeziumJsonParser} reads from JSON.
 */
final class SourceFields {

  static final SourceFields NONE =
      new SourceFields(null, null, null, null, null, null, null, null, null);

  private final Field table;
  private final Field schema;
  private final Field db;
  private final Field lsn;
  private final Field sequence;
  private final Field file;
  private final Field pos;
  private final Field row;
  private final Field tsMs;

  private SourceFields(
      Field table,
      Field schema,
      Field db,
      Field lsn,
      Field sequence,
      Field file,
      Field pos,
      Field row,
      Field tsMs) {
    this.table = table;
    this.schema = schema;
    this.db = db;
    this.lsn = lsn;
    this.sequence = sequence;
    this.file = file;
    this.pos = pos;
    this.row = row;
    this.tsMs = tsMs;
  }

  static SourceFields of(Schema source) {
    return new SourceFields(
        source.field("table"),
        source.field("schema"),
        source.field("db"),
        source.field("lsn"),
        source.field("sequence"),
        source.field("file"),
        source.field("pos"),
        source.field("row"),
        source.field("ts_ms"));
  }

  /** {@code schema.table} (PostgreSQL) or {@code db.table} (MySQL), else {@code fallback}. */
  String tableName(Struct source, String fallback) {
    Object name = get(source, table);
    if (name == null) {
      return fallback;
    }
    Object prefix = get(source, schema);
    if (prefix == null) {
      prefix = get(source, db);
    }
    return prefix == null ? name.toString() : prefix + "." + name;
  }

  SourceSequence sequence(Struct source, String locator) {
    Object lsnValue = get(source, lsn);
    if (lsnValue != null) {
      Object pair = get(source, sequence);
      if (pair instanceof String text) {
        long[] lsns = lsnPair(text);
        if (lsns != null) {
          return SourceSequence.postgresLsn(lsns[0], lsns[1]);
        }
      }
      return SourceSequence.postgresLsn(lsn(lsnValue));
    }
    Object fileValue = get(source, file);
    Object posValue = get(source, pos);
    if (fileValue instanceof String binlog && posValue instanceof Number position) {
      Object rowValue = get(source, row);
      return SourceSequence.mysqlBinlog(
          binlog, position.longValue(), rowValue instanceof Number n ? n.longValue() : 0L);
    }
    throw new MalformedChangeException(
        locator
            + ": the event has no source position (source.lsn, or source.file and source.pos);"
            + " name a sequence column to order its changes");
  }

  /** {@code source.ts_ms}, else the envelope's {@code ts_ms}, else 0. */
  long timestampMillis(Struct source, Struct envelope) {
    Object ts = get(source, tsMs);
    if (ts instanceof Number millis) {
      return millis.longValue();
    }
    Field envelopeTs = envelope.schema().field("ts_ms");
    Object value = envelopeTs == null ? null : envelope.get(envelopeTs);
    return value instanceof Number millis ? millis.longValue() : 0L;
  }

  private static Object get(Struct struct, Field field) {
    return struct == null || field == null ? null : struct.get(field);
  }

  private static long lsn(Object value) {
    if (value instanceof Number number) {
      return number.longValue();
    }
    String text = value.toString();
    return text.indexOf('/') >= 0 ? SourceSequence.parseLsn(text) : Long.parseLong(text);
  }

  /**
   * The two LSNs of PostgreSQL's {@code source.sequence}, a JSON array of two strings or nulls
   * ({@code ["24023928","24023976"]}, a null read as 0); null if the text has another form. Read in
   * place, without substrings: it is read for every change PostgreSQL sends.
   */
  static long[] lsnPair(String text) {
    int from = 0;
    int to = text.length();
    while (from < to && Character.isWhitespace(text.charAt(from))) {
      from++;
    }
    while (to > from && Character.isWhitespace(text.charAt(to - 1))) {
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
      return new long[] {lsnOf(text, from + 1, comma), lsnOf(text, comma + 1, to - 1)};
    } catch (RuntimeException e) {
      return null;
    }
  }

  /** One element of the pair, {@code text[from, to)}: 0 for null, else a decimal or X/X LSN. */
  private static long lsnOf(String text, int from, int to) {
    while (from < to && Character.isWhitespace(text.charAt(from))) {
      from++;
    }
    while (to > from && Character.isWhitespace(text.charAt(to - 1))) {
      to--;
    }
    if (to - from == 4 && text.startsWith("null", from)) {
      return 0L;
    }
    if (to - from >= 2 && text.charAt(from) == '"' && text.charAt(to - 1) == '"') {
      from++;
      to--;
    }
    int slash = text.indexOf('/', from);
    if (slash >= 0 && slash < to) {
      return (Long.parseLong(text, from, slash, 16) << 32)
          | Long.parseLong(text, slash + 1, to, 16);
    }
    return Long.parseLong(text, from, to, 10);
  }
}
