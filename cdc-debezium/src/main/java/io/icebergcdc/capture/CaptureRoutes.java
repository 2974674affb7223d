package io.icebergcdc.capture;

import io.icebergcdc.cdc.BadRecordPolicy;
import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.ChangeSchema;
import io.icebergcdc.cdc.SchemaEvolution;
import io.icebergcdc.cdc.TableRoute;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.flink.util.OutputTag;

/**
 * The tables a {@link DebeziumSource} captures, each by its Debezium topic ({@code
 * prefix.schema.table} for PostgreSQL, {@code prefix.database.table} for MySQL and MariaDB): the
 * schema its records are converted to, its name for messages and the side output of the {@link
 * CapturedChangeRouter} that carries its changes; with the source database, for messages, and what
 * becomes of a record that cannot be applied.
 */
public final class CaptureRoutes implements Serializable {

  private static final long serialVersionUID = 1L;

  private final List<String> topics;
  private final List<TableRoute> routes;
  private final List<String> mainOutputNames;
  private final String origin;
  private final BadRecordPolicy badRecordPolicy;
  private final SchemaEvolution evolution;

  /**
   * @param schemas the schema of each captured table by Debezium topic
   * @param tableNames the name of each captured table by topic, for messages
   * @param origin the source database, for messages
   */
  public CaptureRoutes(
      Map<String, ChangeSchema> schemas,
      Map<String, String> tableNames,
      String origin,
      BadRecordPolicy badRecordPolicy) {
    this(schemas, tableNames, Map.of(), origin, badRecordPolicy);
  }

  /**
   * @param schemas the schema of each captured table by Debezium topic
   * @param tableNames the name of each captured table by topic, for messages
   * @param onMainOutput the topics whose changes go to the router's main output, for one writer of
   *     them all, each with the table name its changes carry there; the others' to a side output
   *     each
   * @param origin the source database, for messages
   */
  public CaptureRoutes(
      Map<String, ChangeSchema> schemas,
      Map<String, String> tableNames,
      Map<String, String> onMainOutput,
      String origin,
      BadRecordPolicy badRecordPolicy) {
    this(schemas, tableNames, onMainOutput, origin, badRecordPolicy, null);
  }

  /**
   * As above; the schema changes of the tables on the main output are followed while the job runs.
   *
   * @param evolution what evolves the Iceberg table of a route on the main output when its source's
   *     schema changes (the one writer of those tables reads the rows of each of its schemas); null
   *     to end the job at such a change instead, as it ends for the tables on side outputs, whose
   *     writers are typed by their tables' schemas
   */
  public CaptureRoutes(
      Map<String, ChangeSchema> schemas,
      Map<String, String> tableNames,
      Map<String, String> onMainOutput,
      String origin,
      BadRecordPolicy badRecordPolicy,
      SchemaEvolution evolution) {
    this.evolution = evolution;
    Map<String, TableRoute> byTopic =
        TableRoute.byTopic(schemas, tableNames, onMainOutput.keySet());
    this.mainOutputNames = new ArrayList<>();
    for (String topic : byTopic.keySet()) {
      mainOutputNames.add(onMainOutput.get(topic));
    }
    this.topics = List.copyOf(byTopic.keySet());
    this.routes = List.copyOf(byTopic.values());
    this.origin = origin;
    this.badRecordPolicy = badRecordPolicy;
  }

  /** The topics, in the order of the routes' indexes. */
  List<String> topics() {
    return topics;
  }

  TableRoute route(int index) {
    return routes.get(index);
  }

  /** The table name the changes of a route carry on the router's main output; null for none. */
  String mainOutputName(int index) {
    return mainOutputNames.get(index);
  }

  int size() {
    return routes.size();
  }

  List<ChangeSchema> schemas() {
    List<ChangeSchema> schemas = new ArrayList<>();
    for (TableRoute route : routes) {
      schemas.add(route.schema());
    }
    return schemas;
  }

  String origin() {
    return origin;
  }

  /** What follows the schema changes of a route's table; null where the job ends at one. */
  SchemaEvolution evolutionOf(int index) {
    return routes.get(index).output() == null ? evolution : null;
  }

  BadRecordPolicy badRecordPolicy() {
    return badRecordPolicy;
  }

  /**
   * The side output that carries the change events of a topic's table; null if the main output
   * does.
   */
  public OutputTag<ChangeEvent> outputOf(String topic) {
    int index = topics.indexOf(topic);
    if (index < 0) {
      throw new IllegalArgumentException("no table is routed from topic " + topic);
    }
    return routes.get(index).output();
  }
}
