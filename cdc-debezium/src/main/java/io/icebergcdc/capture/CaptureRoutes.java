package io.icebergcdc.capture;

import io.icebergcdc.cdc.BadRecordPolicy;
import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.ChangeSchema;
import io.icebergcdc.cdc.SchemaEvolution;
import io.icebergcdc.cdc.TableRoute;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
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
   * The topics whose tables' writers follow their schema changes while the job runs (with {@link
   * #evolution}).
   */
  private final Set<String> following;

  /** The topics whose tables have a key-indexed writer, which applies their truncates. */
  private final Set<String> truncating;

  /** What makes the tables that appear while the job runs ready; null to end the job at one. */
  private AppearingTables appearing;

  /**
   * The tables that appeared, in the order this instance met them, their routes' indexes following
   * the job's: each operator's instance has its own, so an index of one never leaves it ({@link
   * CapturedChange#APPEARED}).
   */
  private transient List<AppearingTables.Table> appeared;

  private transient Map<String, Integer> appearedIndexes;

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
    this(schemas, tableNames, onMainOutput, origin, badRecordPolicy, null, Set.of(), Set.of());
  }

  /**
   * As above; the schema changes of the tables of {@code following} are followed while the job
   * runs.
   *
   * @param evolution what evolves the Iceberg table of a route of {@code following} when its
   *     source's schema changes; null to end the job at such a change instead
   * @param following the topics whose tables' writers read the rows of each schema their table
   *     takes (the one writer of the tables on the main output, and writers of their own); at a
   *     schema change of another topic's table the job ends
   * @param truncating the topics whose tables have a key-indexed writer (shared or their own),
   *     which applies their truncates; the truncate of another topic's table is a bad record
   */
  public CaptureRoutes(
      Map<String, ChangeSchema> schemas,
      Map<String, String> tableNames,
      Map<String, String> onMainOutput,
      String origin,
      BadRecordPolicy badRecordPolicy,
      SchemaEvolution evolution,
      Set<String> following,
      Set<String> truncating) {
    this.evolution = evolution;
    this.following = Set.copyOf(following);
    this.truncating = Set.copyOf(truncating);
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

  /**
   * Takes the tables that appear while the job runs, for the tables on the main output: a change or
   * chunk of such a table is routed there instead of being refused ({@link #indexOf}).
   */
  public CaptureRoutes takingTablesThatAppear(AppearingTables appearing) {
    this.appearing = appearing;
    return this;
  }

  /** What makes the tables that appear ready; null if the job ends at one. */
  AppearingTables appearing() {
    return appearing;
  }

  /** The topics of the tables the job was built with, in the order of the routes' indexes. */
  List<String> topics() {
    return topics;
  }

  /**
   * The index of the route of {@code topic}: one of the job's, or for a table that appeared while
   * the job runs and that this instance has taken ({@link #take}), one after the job's routes. -1
   * if this instance knows no route of the topic.
   */
  int indexOf(String topic) {
    int index = topics.indexOf(topic);
    if (index >= 0 || appearing == null) {
      return index;
    }
    synchronized (this) {
      Integer known = appearedIndexes == null ? null : appearedIndexes.get(topic);
      return known == null ? -1 : known;
    }
  }

  /**
   * Whether {@code topic} is of a table that the job takes when the source's enumerator has found
   * it, and that this instance has not taken yet: a change of it read from the log before then is
   * skipped, as the table's chunks, read once it is taken, hold its effect.
   */
  boolean awaitsTaking(String topic) {
    return appearing != null && indexOf(topic) < 0 && appearing.matches(topic);
  }

  /**
   * The index of the route of {@code topic} as {@link #indexOf}, taking the table first if it
   * appeared while the job runs and this instance has not taken it: the table made ready ({@link
   * AppearingTables#tableOf}). -1 if the job takes no such table, or the table no longer exists.
   *
   * @throws io.icebergcdc.cdc.RefusedSourceException if the table is named into the Iceberg table
   *     of another source table, or cannot be captured
   */
  int take(String topic) {
    return take(topic, true);
  }

  /**
   * {@link #take} for a table the enumerator has just found, which the job has not taken before: a
   * table gone meanwhile is not captured, even if an Iceberg table of its name exists.
   */
  int takeNew(String topic) {
    return take(topic, false);
  }

  private int take(String topic, boolean takenBefore) {
    int index = indexOf(topic);
    if (index >= 0 || appearing == null || !appearing.matches(topic)) {
      return index;
    }
    String name = appearing.nameOf(topic);
    synchronized (this) {
      // Checked before the table is made ready, which may create or evolve an Iceberg table.
      String other = null;
      for (int i = 0; i < routes.size(); i++) {
        other = name.equals(mainOutputNames.get(i)) ? topics.get(i) : other;
      }
      for (AppearingTables.Table earlier :
          appeared == null ? List.<AppearingTables.Table>of() : appeared) {
        other = name.equals(earlier.name()) ? earlier.snapshot().topic() : other;
      }
      if (other != null) {
        // Two source tables into one: their changes' positions are not those of one table's log.
        throw new io.icebergcdc.cdc.RefusedSourceException(
            "topic "
                + topic
                + ", of a table that appeared in "
                + origin
                + " while the job runs, is named into table "
                + name
                + ", which the source table of topic "
                + other
                + " writes; give --table-template a template that tells them apart (with {schema}"
                + " or {database}), or leave the table out of --tables");
      }
    }
    // Made ready outside the lock: it reaches the database and the catalog, and the enumerator's
    // thread plans chunks of the tables already known meanwhile.
    AppearingTables.Table table = appearing.tableOf(topic, takenBefore);
    if (table == null) {
      return -1;
    }
    synchronized (this) {
      if (appeared == null) {
        appeared = new ArrayList<>();
        appearedIndexes = new HashMap<>();
      }
      Integer known = appearedIndexes.get(topic);
      if (known != null) {
        return known;
      }
      appeared.add(table);
      appearedIndexes.put(topic, routes.size() + appeared.size() - 1);
      return routes.size() + appeared.size() - 1;
    }
  }

  /** Whether the route of {@code index} is of a table that appeared while the job runs. */
  boolean appeared(int index) {
    return index >= routes.size();
  }

  private synchronized AppearingTables.Table appearedTable(int index) {
    return appeared.get(index - routes.size());
  }

  /** The topic of a route. */
  String topic(int index) {
    return appeared(index) ? appearedTable(index).snapshot().topic() : topics.get(index);
  }

  TableRoute route(int index) {
    if (appeared(index)) {
      AppearingTables.Table table = appearedTable(index);
      return new TableRoute(table.sourceName(), table.schema(), null);
    }
    return routes.get(index);
  }

  /** The table name the changes of a route carry on the router's main output; null for none. */
  String mainOutputName(int index) {
    return appeared(index) ? appearedTable(index).name() : mainOutputNames.get(index);
  }

  /**
   * The chunked snapshot's table of a route: the job's, or for a table that appeared, the one it
   * was made ready with.
   */
  ChunkedSnapshot.Table snapshotTable(int index, ChunkedSnapshot snapshot) {
    return sourceTable(index, snapshot.tables());
  }

  /**
   * The source table of a route as the database has it (its key and columns): of {@code jobTables},
   * the job's, or for a table that appeared, the one it was made ready with.
   */
  ChunkedSnapshot.Table sourceTable(int index, List<ChunkedSnapshot.Table> jobTables) {
    return appeared(index)
        ? appearedTable(index).snapshot()
        : ChunkedSnapshot.table(jobTables, topics.get(index));
  }

  /** The number of the job's routes, which does not count the tables that appeared. */
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

  /**
   * Whether a route's table applies its source's truncates: those of a key-indexed writer, which
   * knows every key of the table, and so every row a truncate deletes.
   */
  boolean appliesTruncates(int index) {
    return appeared(index) ? appearing.appliesTruncates() : truncating.contains(topics.get(index));
  }

  /**
   * Why the job cannot write a route's table, which ends it at a change of the table ({@link
   * AppearingTables.Table#refusal}); null for a table it writes.
   */
  String refusalOf(int index) {
    return appeared(index) ? appearedTable(index).refusal() : null;
  }

  /** What follows the schema changes of a route's table; null where the job ends at one. */
  SchemaEvolution evolutionOf(int index) {
    if (appeared(index)) {
      return appearedTable(index).evolution();
    }
    return following.contains(topics.get(index)) ? evolution : null;
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
