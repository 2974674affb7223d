package io.icebergcdc.capture;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The look of the {@link CaptureSplitEnumerator} for tables created in the source while the job
 * runs, taken in flight ({@link CaptureRoutes#takingTablesThatAppear}), every {@link
 * NewTableWatch#interval()}, in a thread of the coordinator's pool: the tables that appeared are
 * made ready ({@link AppearingTables#tableOf}: their Iceberg tables created) and, for PostgreSQL,
 * published; and the captured PostgreSQL tables that the job's publication no longer holds (dropped
 * and created again) are published again.
 */
final class TableLook {

  private static final Logger LOG = LoggerFactory.getLogger(TableLook.class);

  private final CaptureRoutes routes;
  private final ChunkedSnapshot snapshot;
  private final NewTableWatch watch;
  private final Map<String, String> connectorProperties;

  /** The topics of the tables the job captures; the enumerator adds those it takes. */
  private final Set<String> taken;

  TableLook(
      CaptureRoutes routes,
      ChunkedSnapshot snapshot,
      NewTableWatch watch,
      Map<String, String> connectorProperties,
      Set<String> taken) {
    this.routes = routes;
    this.snapshot = snapshot;
    this.watch = watch;
    this.connectorProperties = connectorProperties;
    this.taken = taken;
  }

  /**
   * The tables that appeared since the last look, made ready to be captured, and for PostgreSQL
   * published, before their chunks are planned: in a thread of the coordinator's pool, since
   * publishing waits for the transactions running at that moment.
   */
  List<ChunkedSnapshot.Table> tablesThatAppeared(SourceDatabase database)
      throws java.sql.SQLException {
    List<ChunkedSnapshot.Table> ready = new ArrayList<>();
    AppearingTables appearing = routes.appearing();
    List<TableListing.Name> matching = watch.matchingTableNames(database);
    boolean postgres = database.dialect() == SourceDatabase.Dialect.POSTGRES;
    if (postgres) {
      republishRecreated(database, matching);
    }
    for (TableListing.Name table : watch.newTableNames(matching)) {
      String topic = appearing.topicOf(table.namespace(), table.name());
      if (taken.contains(topic)) {
        continue;
      }
      String name = appearing.nameOf(topic);
      for (String other : taken) {
        if (!routes.topics().contains(other) && appearing.nameOf(other).equals(name)) {
          // One taken before a restore, which this instance's routes do not know.
          throw new io.icebergcdc.cdc.RefusedSourceException(
              "topic "
                  + topic
                  + ", of a table that appeared in "
                  + routes.origin()
                  + " while the job runs, is named into table "
                  + name
                  + ", which the table of topic "
                  + other
                  + " writes, which appeared earlier; give --table-template a template that tells"
                  + " them apart (with {schema} or {database}), or leave the table out of --tables");
        }
      }
      int route = routes.takeNew(topic);
      if (route < 0) {
        continue;
      }
      ready.add(routes.snapshotTable(route, snapshot));
    }
    if (!ready.isEmpty() && postgres) {
      PostgresLogStart.publish(database, connectorProperties, ready, true);
    }
    return ready;
  }

  /**
   * Publishes again the captured tables that exist but that the publication no longer holds:
   * PostgreSQL drops a table from its publications with the table, so one dropped and created again
   * under its name while the job runs is not sent to it. Its changes until now are lost to the job;
   * the warning says so. Tables that appeared before a restore are checked once this instance's
   * routes know them.
   */
  private void republishRecreated(SourceDatabase database, List<TableListing.Name> matching) {
    Set<String> existing = new java.util.HashSet<>();
    for (TableListing.Name table : matching) {
      existing.add(table.qualified());
    }
    List<ChunkedSnapshot.Table> captured = new ArrayList<>();
    for (String topic : taken) {
      int route = routes.indexOf(topic);
      if (route >= 0) {
        ChunkedSnapshot.Table table = routes.snapshotTable(route, snapshot);
        if (existing.contains(table.namespace() + "." + table.name())) {
          captured.add(table);
        }
      }
    }
    List<String> republished = PostgresLogStart.publish(database, connectorProperties, captured);
    for (ChunkedSnapshot.Table table : captured) {
      if (republished.contains(table.namespace() + "." + table.name())) {
        warnRepublished(table, routes.origin(), "while the job runs");
      }
    }
  }

  /** Warns that {@code table} of {@code origin} was published again: changes of it are missing. */
  static void warnRepublished(ChunkedSnapshot.Table table, String origin, String when) {
    LOG.warn(
        "Table {}.{} of {}, which the job captures, was no longer in the job's publication (it was"
            + " dropped and created again, or taken out of the publication, {}): it is published"
            + " again, but PostgreSQL did not send its changes from then until now, so its Iceberg"
            + " table may lack them; to read the table whole again, start the job without state",
        table.namespace(),
        table.name(),
        origin,
        when);
  }
}
