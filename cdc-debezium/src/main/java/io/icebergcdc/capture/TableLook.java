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

  /** How often a captured table left unpublished for want of its primary key is warned of. */
  static final long KEYLESS_WARNING_INTERVAL_MILLIS = 10 * 60 * 1000L;

  private final CaptureRoutes routes;
  private final ChunkedSnapshot snapshot;
  private final NewTableWatch watch;
  private final Map<String, String> connectorProperties;

  /** The topics of the tables the job captures; the enumerator adds those it takes. */
  private final Set<String> taken;

  /** Whether the last look failed to publish captured tables again (warned once). */
  private volatile boolean republishFailed;

  /** The topics taken before a restore that this look made known to the routes, once each. */
  private final Set<String> madeKnown = new java.util.HashSet<>();

  /**
   * The captured tables left unpublished for want of their primary key, with when they were last
   * warned of (shared with the enumerator's start).
   */
  private final Map<String, Long> keyless;

  TableLook(
      CaptureRoutes routes,
      ChunkedSnapshot snapshot,
      NewTableWatch watch,
      Map<String, String> connectorProperties,
      Set<String> taken,
      Map<String, Long> keyless) {
    this.keyless = keyless;
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
    List<TableListing.Name> matching = watch.matchingTableNames(database);
    boolean postgres = database.dialect() == SourceDatabase.Dialect.POSTGRES;
    if (postgres) {
      republishRecreated(database, matching);
    }
    List<TableListing.Name> found = watch.newTableNames(matching);
    if (postgres) {
      // Before their Iceberg tables are created.
      List<TableListing.Name> untaken = untaken(found);
      if (!untaken.isEmpty()) {
        PostgresLogStart.checkPartitionedTables(database, connectorProperties, untaken);
      }
    }
    List<ChunkedSnapshot.Table> ready = madeReady(found);
    if (!ready.isEmpty() && postgres) {
      PostgresLogStart.publish(database, connectorProperties, ready, true);
    }
    return ready;
  }

  /**
   * Of the tables {@code found} that the job has not taken, those made ready, for the job to take;
   * a table that cannot be made ready now is warned of and left to the next look.
   */
  List<ChunkedSnapshot.Table> madeReady(List<TableListing.Name> found) {
    List<ChunkedSnapshot.Table> ready = new ArrayList<>();
    AppearingTables appearing = routes.appearing();
    for (TableListing.Name table : untaken(found)) {
      String topic = appearing.topicOf(table.namespace(), table.name());
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
      int route;
      try {
        route = routes.takeNew(topic);
      } catch (io.icebergcdc.cdc.RefusedSourceException
          | io.icebergcdc.cdc.NewSourceTableException e) {
        throw e;
      } catch (RuntimeException e) {
        // One table that cannot be made ready now (its Iceberg table not created, say) does not
        // hold back the others: it is tried again at the next look.
        LOG.warn(
            "Table {}.{} appeared in {} but could not be made ready; tried again at the next look:"
                + " {}",
            table.namespace(),
            table.name(),
            routes.origin(),
            e.toString());
        continue;
      }
      if (route < 0) {
        continue;
      }
      ready.add(routes.snapshotTable(route, snapshot));
    }
    return ready;
  }

  /** The tables of {@code found} that the job has not taken. */
  private List<TableListing.Name> untaken(List<TableListing.Name> found) {
    List<TableListing.Name> untaken = new ArrayList<>();
    for (TableListing.Name table : found) {
      if (!taken.contains(routes.appearing().topicOf(table.namespace(), table.name()))) {
        untaken.add(table);
      }
    }
    return untaken;
  }

  /**
   * Publishes again the captured tables that exist but that the publication no longer holds:
   * PostgreSQL drops a table from its publications with the table, so one dropped and created again
   * under its name while the job runs is not sent to it. Its changes until now are lost to the job;
   * the warning says so. A table created again without a primary key is published only once it has
   * its key again (published, a table without a replica identity would make the application's
   * updates fail); one with another key ends the job. Tables taken in flight before a restore are
   * first made known to this instance's routes. A failure other than a refusal is warned of and
   * tried again at the next look.
   */
  private void republishRecreated(SourceDatabase database, List<TableListing.Name> matching) {
    Set<String> existing = new java.util.HashSet<>();
    for (TableListing.Name table : matching) {
      existing.add(table.qualified());
    }
    try {
      List<ChunkedSnapshot.Table> captured = new ArrayList<>();
      for (String topic : taken) {
        int route = routes.indexOf(topic);
        if (route < 0
            && routes.appearing() != null
            && routes.appearing().matches(topic)
            && !madeKnown.contains(topic)) {
          // Taken in flight before a restore: described again, its Iceberg table checked.
          route = routes.take(topic);
          madeKnown.add(topic);
        }
        if (route >= 0) {
          ChunkedSnapshot.Table table = routes.snapshotTable(route, snapshot);
          if (existing.contains(table.namespace() + "." + table.name())) {
            captured.add(table);
          }
        }
      }
      List<ChunkedSnapshot.Table> missing =
          withTheirKeys(
              database,
              PostgresLogStart.unpublished(database, connectorProperties, captured),
              routes.origin(),
              "while the job runs",
              keyless);
      for (String qualified : PostgresLogStart.republish(database, connectorProperties, missing)) {
        for (ChunkedSnapshot.Table table : missing) {
          if (qualified.equals(table.namespace() + "." + table.name())) {
            warnRepublished(table, routes.origin(), "while the job runs");
          }
        }
      }
      republishFailed = false;
    } catch (io.icebergcdc.cdc.RefusedSourceException e) {
      throw e;
    } catch (RuntimeException e) {
      // Tried again at the next look; the new tables of this one are taken meanwhile.
      if (!republishFailed) {
        LOG.warn(
            "Could not publish captured tables of {} again: {}", routes.origin(), e.toString());
      }
      republishFailed = true;
    }
  }

  /**
   * Of the captured {@code tables} the publication lacks, those with the primary key the job
   * captures them by, which may be published again. One without a primary key (created again and
   * not yet given its key, as {@code pg_restore} does, or dropped meanwhile) is left out and looked
   * at again later, with a warning every {@link #KEYLESS_WARNING_INTERVAL_MILLIS} while it lasts
   * ({@code keyless} holds when each was last warned of).
   *
   * @throws io.icebergcdc.cdc.RefusedSourceException for a table created again with another key
   */
  static List<ChunkedSnapshot.Table> withTheirKeys(
      SourceDatabase database,
      List<ChunkedSnapshot.Table> tables,
      String origin,
      String when,
      Map<String, Long> keyless) {
    List<ChunkedSnapshot.Table> keyed = new ArrayList<>();
    for (ChunkedSnapshot.Table table : tables) {
      String qualified = table.namespace() + "." + table.name();
      Set<String> key = primaryKeyOf(database, table);
      if (key.isEmpty()) {
        long now = System.currentTimeMillis();
        Long warned = keyless.get(qualified);
        if (warned == null || now - warned >= KEYLESS_WARNING_INTERVAL_MILLIS) {
          keyless.put(qualified, now);
          LOG.warn(
              "Table {} of {}, which the job captures, is not in the job's publication and has no"
                  + " primary key (dropped, or dropped and created again {} without its key): it"
                  + " is published again once it has its key {}; its changes until then are not"
                  + " captured",
              qualified,
              origin,
              when,
              table.primaryKey());
        }
        continue;
      }
      keyless.remove(qualified);
      if (!key.equals(Set.copyOf(table.primaryKey()))) {
        throw new io.icebergcdc.cdc.RefusedSourceException(
            "table "
                + qualified
                + " of "
                + origin
                + " was dropped and created again "
                + when
                + " with primary key "
                + key
                + ", where the job captures it by "
                + table.primaryKey()
                + ": the job does not publish it again, and ends; give the table its key back, or"
                + " leave it out of --tables, and start the job again");
      }
      keyed.add(table);
    }
    return keyed;
  }

  /** The columns of the table's primary key now; none if it has none or no longer exists. */
  private static Set<String> primaryKeyOf(SourceDatabase database, ChunkedSnapshot.Table table) {
    Set<String> key = new java.util.HashSet<>();
    try (java.sql.Connection connection = database.connect();
        java.sql.ResultSet columns =
            connection.getMetaData().getPrimaryKeys(null, table.namespace(), table.name())) {
      while (columns.next()) {
        key.add(columns.getString("COLUMN_NAME"));
      }
    } catch (java.sql.SQLException e) {
      throw new IllegalStateException(
          "cannot read the primary key of " + table.namespace() + "." + table.name() + ": " + e, e);
    }
    return key;
  }

  /** Warns that {@code table} of {@code origin} was published again: changes of it are missing. */
  static void warnRepublished(ChunkedSnapshot.Table table, String origin, String when) {
    LOG.warn(
        "Table {}.{} of {}, which the job captures, was no longer in the job's publication (it was"
            + " dropped and created again, or taken out of the publication, {}): it is published"
            + " again, but PostgreSQL did not send its changes from then until now, so its Iceberg"
            + " table may lack rows and changes, and keep rows the drop removed; to read it whole"
            + " again, empty its Iceberg table and start the job again without state",
        table.namespace(),
        table.name(),
        origin,
        when);
  }
}
