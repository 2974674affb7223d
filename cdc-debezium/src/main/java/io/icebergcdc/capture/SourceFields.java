package io.icebergcdc.capture;

import io.icebergcdc.cdc.MalformedChangeException;
import io.icebergcdc.cdc.SourceSequence;
import io.icebergcdc.cdc.debezium.PostgresSequences;
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
        long[] lsns = PostgresSequences.pair(text);
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
}
