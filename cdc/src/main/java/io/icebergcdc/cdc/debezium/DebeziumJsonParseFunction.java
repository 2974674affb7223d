package io.icebergcdc.cdc.debezium;

import com.fasterxml.jackson.databind.JsonNode;
import io.icebergcdc.cdc.BadRecordPolicy;
import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.ChangeSchema;
import io.icebergcdc.cdc.DeadLetter;
import io.icebergcdc.cdc.MalformedChangeException;
import io.icebergcdc.cdc.typeutils.DeadLetterSerializer;
import io.icebergcdc.cdc.typeutils.SimpleVersionedTypeInfo;
import java.io.Closeable;
import java.io.IOException;
import java.io.Serializable;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.java.tuple.Tuple4;
import org.apache.flink.metrics.Counter;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;

/**
 * Parses numbered lines of Debezium JSON into change events, at as many parallel instances as the
 * job's writers: changes are ordered by their source position, not by the order in which the
 * parsers see them. A line comes as {@code (number, offset, length, UTF-8 bytes)}, its bytes given
 * or, where fewer than its length are given, read from its file at its offset ({@link LineBytes}).
 * A line that cannot be applied fails the job with a message naming the file, the line and, where
 * the event shows it, the key; or, under {@link BadRecordPolicy#DEAD_LETTER}, goes to {@link
 * #DEAD_LETTERS} with the reason and is counted in {@code badRecords}.
 *
 * <p>Stateless; each parallel instance has its own parser.
 */
public final class DebeziumJsonParseFunction
    extends ProcessFunction<Tuple4<Long, Long, Integer, byte[]>, ChangeEvent> {

  private static final long serialVersionUID = 1L;
  private static final int SHOWN_RECORD_CHARS = 160;

  public static final OutputTag<DeadLetter> DEAD_LETTERS =
      new OutputTag<>(
          "parse-dead-letters",
          new SimpleVersionedTypeInfo<>(DeadLetter.class, DeadLetterSerializer::new));

  private final ChangeSchema schema;
  private final String tableName;
  private final String sequenceColumn;
  private final String origin;
  private final BadRecordPolicy badRecordPolicy;

  private transient DebeziumJsonParser parser;
  private transient Counter badRecords;
  private transient org.apache.flink.api.common.accumulators.LongCounter deadLettered;

  /** The source table ({@code source.schema.table}) of the first change with one. */
  private transient String sourceTable;

  /** The source table of the file's first change, where the job read it before starting. */
  private final String firstSourceTable;

  /** Reads the lines that come without their bytes; null if every line comes with them. */
  private final LineBytes lineBytes;

  /** Evolves the table at an event of a changed schema; null to refuse such events. */
  private io.icebergcdc.cdc.SchemaEvolution evolution;

  /** Whether the table's writer applies truncates; if not, a truncate is a bad record. */
  private boolean applyingTruncates;

  /** Reads lines from their file by their place in it, for the lines that come without bytes. */
  public interface LineBytes extends Serializable, Closeable {

    /** The {@code length} bytes at {@code offset} of the file. */
    byte[] read(long offset, int length) throws IOException;
  }

  /**
   * @param origin where the lines come from (a file's path), for messages
   */
  public DebeziumJsonParseFunction(
      ChangeSchema schema,
      String tableName,
      String sequenceColumn,
      String origin,
      BadRecordPolicy badRecordPolicy) {
    this(schema, tableName, sequenceColumn, origin, badRecordPolicy, null, null);
  }

  /**
   * @param origin where the lines come from (a file's path), for messages
   * @param firstSourceTable the source table ({@code schema.table}) of the file's first change, or
   *     null if unknown: parallel parsers then each compare with the first change they see
   * @param lineBytes reads the lines that come without their bytes; null if every line comes with
   *     them
   */
  public DebeziumJsonParseFunction(
      ChangeSchema schema,
      String tableName,
      String sequenceColumn,
      String origin,
      BadRecordPolicy badRecordPolicy,
      String firstSourceTable,
      LineBytes lineBytes) {
    this.firstSourceTable = firstSourceTable;
    this.lineBytes = lineBytes;
    this.schema = schema;
    this.tableName = tableName;
    this.sequenceColumn = sequenceColumn;
    this.origin = origin;
    this.badRecordPolicy = badRecordPolicy;
  }

  /**
   * Follows the schema changes that events with their {@code schema} part show, for a writer that
   * takes the changes of a schema the table took while the job runs: {@code evolution} evolves the
   * table at the first event of a changed schema ({@link
   * DebeziumJsonParser#followingSchemaChanges}). Without it, an event with a column the table lacks
   * is a bad record.
   */
  public DebeziumJsonParseFunction followingSchemaChanges(
      io.icebergcdc.cdc.SchemaEvolution schemaEvolution) {
    this.evolution = schemaEvolution;
    return this;
  }

  /**
   * Applies truncates, for a key-indexed writer (which knows every key of the table) of this one
   * table, keyed by its primary key or by partition (not the writer of several tables, keyed by
   * table too): each is sent as a copy for each of the writer's subtasks ({@link
   * io.icebergcdc.cdc.TruncateCopies#forOneTable}). Without it, a truncate is a bad record.
   */
  public DebeziumJsonParseFunction applyingTruncates() {
    this.applyingTruncates = true;
    return this;
  }

  @Override
  public void open(OpenContext openContext) {
    parser = new DebeziumJsonParser(schema, tableName, sequenceColumn);
    if (evolution != null) {
      parser.followingSchemaChanges(evolution);
    }
    sourceTable = firstSourceTable;
    badRecords = getRuntimeContext().getMetricGroup().counter("badRecords");
    deadLettered = new org.apache.flink.api.common.accumulators.LongCounter();
    getRuntimeContext().addAccumulator(DeadLetter.ACCUMULATOR, deadLettered);
  }

  @Override
  public void processElement(
      Tuple4<Long, Long, Integer, byte[]> numbered, Context ctx, Collector<ChangeEvent> out)
      throws IOException {
    // Messages name the line by this; the key and the record's text are added only on failure.
    String at = origin + ":" + numbered.f0;
    byte[] line = hasBytes(numbered) ? numbered.f3 : read(numbered, at);
    if (isBlank(line)) {
      return;
    }
    try {
      List<ChangeEvent> events;
      try {
        events = parser.parse(line, at);
      } catch (MalformedChangeException e) {
        throw located(e, at, new String(line, StandardCharsets.UTF_8));
      }
      for (ChangeEvent event : events) {
        checkOneSourceTable(event, at, line);
      }
      for (ChangeEvent event : events) {
        if (event.operation() != io.icebergcdc.cdc.Operation.TRUNCATE) {
          out.collect(event);
        } else if (applyingTruncates) {
          io.icebergcdc.cdc.TruncateCopies.forOneTable(
              event,
              getRuntimeContext().getTaskInfo().getMaxNumberOfParallelSubtasks(),
              out::collect);
        } else {
          throw located(
              new MalformedChangeException(
                  at + ": " + io.icebergcdc.cdc.Operation.TRUNCATE_NOT_APPLIED),
              at,
              new String(line, StandardCharsets.UTF_8));
        }
      }
    } catch (MalformedChangeException e) {
      if (badRecordPolicy == BadRecordPolicy.FAIL) {
        throw e;
      }
      badRecords.inc();
      deadLettered.add(1);
      ctx.output(
          DEAD_LETTERS,
          new DeadLetter(tableName, at, e.getMessage(), new String(line, StandardCharsets.UTF_8)));
    }
  }

  /** Whether a line came with its bytes; if not, they are read from its file at its offset. */
  public static boolean hasBytes(Tuple4<Long, Long, Integer, byte[]> line) {
    return line.f3.length == line.f2;
  }

  /** The bytes of a line that came without them, from its file. */
  private byte[] read(Tuple4<Long, Long, Integer, byte[]> numbered, String at) throws IOException {
    if (lineBytes == null) {
      throw new IllegalStateException(
          at + ": a line without its bytes, and no file to read it from");
    }
    try {
      return lineBytes.read(numbered.f1, numbered.f2);
    } catch (IOException e) {
      throw new IOException(at + ": cannot be read from the file: " + e.getMessage(), e);
    }
  }

  @Override
  public void close() throws Exception {
    if (lineBytes != null) {
      lineBytes.close();
    }
    super.close();
  }

  /**
   * The failure of a line with its locator completed: the key where the line shows it and the start
   * of its text after the Connect schema, which every line of a file repeats.
   */
  private MalformedChangeException located(MalformedChangeException e, String at, String text) {
    String message = e.getMessage();
    if (message == null || !message.startsWith(at + ":")) {
      return e;
    }
    JsonNode root;
    try {
      root = DebeziumJsonParser.readTree(text, at);
    } catch (MalformedChangeException notJson) {
      return new MalformedChangeException(
          at + ", record '" + abbreviate(text) + "'" + message.substring(at.length()), e);
    }
    String locator = at + keyOf(root) + ", record '" + abbreviate(payloadOf(text)) + "'";
    return new MalformedChangeException(locator + message.substring(at.length()), e);
  }

  private static boolean isBlank(byte[] line) {
    for (byte b : line) {
      if (b != ' ' && b != '\t' && b != '\r' && b != '\n' && b != '\f' && b != 0x0b) {
        return false;
      }
    }
    return true;
  }

  /**
   * A changelog of this source goes into one table: a change whose source names another table than
   * the changes before it is refused, naming both, rather than merged into the first one's table.
   */
  private void checkOneSourceTable(ChangeEvent event, String at, byte[] line) {
    String table = event.table();
    if (table == null || table.equals(tableName)) {
      return;
    }
    if (sourceTable == null) {
      sourceTable = table;
    } else if (!sourceTable.equals(table)) {
      throw located(
          new MalformedChangeException(
              at
                  + ": a change of source table "
                  + table
                  + ", but the changes before it are of "
                  + sourceTable
                  + "; this job applies one source table to "
                  + tableName),
          at,
          new String(line, StandardCharsets.UTF_8));
    }
  }

  /** The key of the row the event changes, as {@code ", key id=5"}, or "" if it shows none. */
  private String keyOf(JsonNode root) {
    JsonNode payload = root.has("payload") ? root.get("payload") : root;
    if (payload == null || !payload.isObject()) {
      return "";
    }
    JsonNode row = payload.path("after");
    if (!row.isObject()) {
      row = payload.path("before");
    }
    if (!row.isObject()) {
      return "";
    }
    StringBuilder key = new StringBuilder();
    for (String column : schema.keyColumns()) {
      JsonNode value = row.get(column);
      if (value == null) {
        return "";
      }
      key.append(key.length() == 0 ? ", key " : ", ").append(column).append('=').append(value);
    }
    return key.toString();
  }

  /** The part of a line after its Connect schema, which every line of a file repeats. */
  private static String payloadOf(String line) {
    int payload = line.indexOf("\"payload\"");
    return payload > 0 && line.startsWith("{\"schema\"") ? "{" + line.substring(payload) : line;
  }

  private static String abbreviate(String line) {
    return line.length() <= SHOWN_RECORD_CHARS
        ? line
        : line.substring(0, SHOWN_RECORD_CHARS) + "...";
  }
}
