package io.icebergcdc.capture;

import com.fasterxml.jackson.databind.JsonNode;
import io.icebergcdc.cdc.BadRecordPolicy;
import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.ChangeSchema;
import io.icebergcdc.cdc.DeadLetter;
import io.icebergcdc.cdc.MalformedChangeException;
import io.icebergcdc.cdc.TableRoute;
import io.icebergcdc.cdc.debezium.DebeziumJsonParseFunction;
import io.icebergcdc.cdc.debezium.DebeziumJsonParser;
import java.util.HashMap;
import java.util.Map;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.metrics.Counter;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;

/**
 * Parses the records of a {@link DebeziumSource} that captures several tables, and sends the change
 * events of each table to that table's side output ({@link #outputOf}), typed by its schema. The
 * main output stays empty.
 *
 * <p>A record that cannot be applied (an unknown topic, a value that does not fit the table, a
 * value PostgreSQL did not send because it is an unchanged TOASTed column, which the parser
 * refuses) fails the job with a message naming it, or, under {@link BadRecordPolicy#DEAD_LETTER},
 * goes to {@link DebeziumJsonParseFunction#DEAD_LETTERS}.
 *
 * <p>A record whose schema shows that its table changed in a way the job's types cannot carry (a
 * column added, a type widened, a required column dropped) ends the job with {@link
 * io.icebergcdc.cdc.SourceSchemaChangedException}, which Flink does not retry.
 */
public final class DebeziumRouter extends ProcessFunction<DebeziumRecord, ChangeEvent> {

  private static final long serialVersionUID = 1L;

  private final Map<String, TableRoute> routes;
  private final String origin;
  private final BadRecordPolicy badRecordPolicy;

  private transient Map<String, DebeziumJsonParser> parsers;
  private transient Map<String, JsonNode> schemas;
  private transient Counter badRecords;

  /**
   * @param schemas the schema of each captured table by Debezium topic
   * @param tableNames the name of each captured table by topic, for messages
   * @param origin the source database, for messages
   */
  public DebeziumRouter(
      Map<String, ChangeSchema> schemas,
      Map<String, String> tableNames,
      String origin,
      BadRecordPolicy badRecordPolicy) {
    this.routes = TableRoute.byTopic(schemas, tableNames);
    this.origin = origin;
    this.badRecordPolicy = badRecordPolicy;
  }

  /** The side output that carries the change events of a topic's table. */
  public OutputTag<ChangeEvent> outputOf(String topic) {
    return TableRoute.outputOf(routes, topic);
  }

  @Override
  public void open(OpenContext openContext) {
    parsers = new HashMap<>();
    schemas = new HashMap<>();
    for (Map.Entry<String, TableRoute> entry : routes.entrySet()) {
      TableRoute route = entry.getValue();
      parsers.put(
          entry.getKey(),
          new DebeziumJsonParser(route.schema(), route.tableName(), null).detectingSchemaChanges());
    }
    badRecords = getRuntimeContext().getMetricGroup().counter("badRecords");
  }

  @Override
  public void processElement(DebeziumRecord record, Context ctx, Collector<ChangeEvent> out) {
    TableRoute route = routes.get(record.topic);
    try {
      if (route == null) {
        throw new MalformedChangeException(
            origin
                + ", topic "
                + record.topic
                + ": no captured table has this topic; the job captures "
                + routes.keySet());
      }
      String locator = origin + ", topic " + record.topic;
      JsonNode schema;
      if (record.schema != null) {
        schema = DebeziumJsonParser.readTree(record.schema, locator);
        schemas.put(record.topic, schema);
      } else {
        schema = schemas.get(record.topic);
        if (schema == null) {
          throw new IllegalStateException(
              locator + ": a record came without its schema before any record with it");
        }
      }
      JsonNode payload = DebeziumJsonParser.readTree(record.json, locator);
      for (ChangeEvent event : parsers.get(record.topic).parse(payload, schema, locator)) {
        ctx.output(route.output(), event);
      }
    } catch (MalformedChangeException e) {
      if (badRecordPolicy == BadRecordPolicy.FAIL) {
        throw TableRoute.withRecord(e, record.json);
      }
      badRecords.inc();
      ctx.output(
          DebeziumJsonParseFunction.DEAD_LETTERS,
          new DeadLetter(
              route == null ? record.topic : route.tableName(),
              origin,
              e.getMessage(),
              record.json));
    }
  }
}
