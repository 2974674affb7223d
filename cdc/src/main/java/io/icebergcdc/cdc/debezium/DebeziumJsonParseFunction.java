package io.icebergcdc.cdc.debezium;

import io.icebergcdc.cdc.BadRecordPolicy;
import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.ChangeSchema;
import io.icebergcdc.cdc.DeadLetter;
import io.icebergcdc.cdc.MalformedChangeException;
import io.icebergcdc.cdc.typeutils.DeadLetterSerializer;
import io.icebergcdc.cdc.typeutils.SimpleVersionedTypeInfo;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.metrics.Counter;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;

/**
 * Parses lines of Debezium JSON into change events, right after the source. A line that cannot be
 * applied fails the job with a message naming it, or, under {@link BadRecordPolicy#DEAD_LETTER},
 * goes to {@link #DEAD_LETTERS} with the reason and is counted in {@code badRecords}.
 *
 * <p>Stateless; each parallel instance has its own parser.
 */
public final class DebeziumJsonParseFunction extends ProcessFunction<String, ChangeEvent> {

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

  /**
   * @param origin where the lines come from (a file name), for messages
   */
  public DebeziumJsonParseFunction(
      ChangeSchema schema,
      String tableName,
      String sequenceColumn,
      String origin,
      BadRecordPolicy badRecordPolicy) {
    this.schema = schema;
    this.tableName = tableName;
    this.sequenceColumn = sequenceColumn;
    this.origin = origin;
    this.badRecordPolicy = badRecordPolicy;
  }

  @Override
  public void open(OpenContext openContext) {
    parser = new DebeziumJsonParser(schema, tableName, sequenceColumn);
    badRecords = getRuntimeContext().getMetricGroup().counter("badRecords");
  }

  @Override
  public void processElement(String line, Context ctx, Collector<ChangeEvent> out) {
    if (line.isBlank()) {
      return;
    }
    String locator = origin + ", record '" + abbreviate(line) + "'";
    try {
      for (ChangeEvent event : parser.parse(line, locator)) {
        out.collect(event);
      }
    } catch (MalformedChangeException e) {
      if (badRecordPolicy == BadRecordPolicy.FAIL) {
        throw e;
      }
      badRecords.inc();
      ctx.output(DEAD_LETTERS, new DeadLetter(tableName, origin, e.getMessage(), line));
    }
  }

  private static String abbreviate(String line) {
    return line.length() <= SHOWN_RECORD_CHARS
        ? line
        : line.substring(0, SHOWN_RECORD_CHARS) + "...";
  }
}
