package io.icebergcdc.cdc;

import io.icebergcdc.cdc.typeutils.ChangeEventTypeInfo;
import java.io.Serializable;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.flink.util.OutputTag;

/**
 * Where a router sends the changes of one topic: the table's name for messages, its schema, and the
 * side output typed by that schema, or the router's main output (a null {@code output}), which
 * carries the changes of all tables that one writer takes. Shared by the routers of several tables
 * from one source (Debezium's engine, Kafka).
 */
public record TableRoute(String tableName, ChangeSchema schema, OutputTag<ChangeEvent> output)
    implements Serializable {

  private static final int SHOWN_RECORD_CHARS = 200;

  /**
   * The route of each topic, in the order of {@code schemas}.
   *
   * @param schemas the schema of each topic's table
   * @param tableNames the name of each topic's table, for messages and dead letters
   */
  public static Map<String, TableRoute> byTopic(
      Map<String, ChangeSchema> schemas, Map<String, String> tableNames) {
    return byTopic(schemas, tableNames, java.util.Set.of());
  }

  /**
   * The route of each topic, in the order of {@code schemas}: to the main output for the topics of
   * {@code onMainOutput}, else to a side output of the topic's own.
   */
  public static Map<String, TableRoute> byTopic(
      Map<String, ChangeSchema> schemas,
      Map<String, String> tableNames,
      java.util.Set<String> onMainOutput) {
    Map<String, TableRoute> routes = new LinkedHashMap<>();
    schemas.forEach(
        (topic, schema) ->
            routes.put(
                topic,
                new TableRoute(
                    tableNames.get(topic),
                    schema,
                    onMainOutput.contains(topic)
                        ? null
                        : new OutputTag<>("changes-" + topic, ChangeEventTypeInfo.of(schema)))));
    return routes;
  }

  /** Whether this route's changes go to the router's main output. */
  public boolean onMainOutput() {
    return output == null;
  }

  /** The side output of a topic's table; null if its changes go to the main output. */
  public static OutputTag<ChangeEvent> outputOf(Map<String, TableRoute> routes, String topic) {
    TableRoute route = routes.get(topic);
    if (route == null) {
      throw new IllegalArgumentException("no table is routed from topic " + topic);
    }
    return route.output();
  }

  /** The failure of a record, with the start of its text, for a job that fails on bad records. */
  public static MalformedChangeException withRecord(MalformedChangeException e, String record) {
    String shown =
        record.length() <= SHOWN_RECORD_CHARS
            ? record
            : record.substring(0, SHOWN_RECORD_CHARS) + "...";
    return new MalformedChangeException(e.getMessage() + " (record '" + shown + "')", e);
  }
}
