package io.icebergcdc.capture;

import io.icebergcdc.cdc.NewSourceTableException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.flink.api.connector.source.SplitEnumerator;
import org.apache.flink.api.connector.source.SplitEnumeratorContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Hands the log's split to reader 0, and, for a chunked snapshot, chunks to whichever reader asks,
 * planning each as it is asked for ({@link ChunkPlanner}). Splits of a failed reader come back and
 * go out again: the log's to the restarted reader 0, chunks to the next reader that asks.
 *
 * <p>On the job's first start, before any chunk, it fixes where the log is read from ({@link
 * PostgresLogStart}, {@link MySqlLogStart}) and hands the log's split over at that position. A
 * table of the job that its state has not seen (added to the job's tables since) is chunked, a
 * PostgreSQL table published first; a MySQL/MariaDB connector knows it from its schema history,
 * which holds every table of the database (its reader refuses a history of an earlier build that
 * lacks the table, {@link SchemaHistoryTables}).
 *
 * <p>Given a {@link NewTableWatch}, it looks for tables created in the source while the job runs.
 * Where the routes take such tables ({@link CaptureRoutes#takingTablesThatAppear}), its look
 * ({@link TableLook}) makes each ready ({@link AppearingTables#tableOf}: its Iceberg table created)
 * and publishes a PostgreSQL one, and the enumerator snapshots it in chunks as a table added on
 * restore, while the job goes on; the log's reader follows the table by itself, its connector's
 * table list being the job's patterns. Otherwise it ends the job at the first ({@link
 * NewSourceTableException}), to be built again with it.
 */
final class CaptureSplitEnumerator
    implements SplitEnumerator<CaptureSplit, CaptureEnumeratorState> {

  private static final Logger LOG = LoggerFactory.getLogger(CaptureSplitEnumerator.class);
  private static final int LOG_READER = 0;

  private final SplitEnumeratorContext<CaptureSplit> context;
  private final Map<String, String> connectorProperties;
  private final CaptureRoutes routes;
  private final ChunkedSnapshot snapshot;
  private final NewTableWatch watch;
  private final boolean chunked;
  private final Deque<CaptureSplit> unassigned;
  private final Map<String, CaptureEnumeratorState.TableProgress> progress = new LinkedHashMap<>();
  private final Set<Integer> waiting = new LinkedHashSet<>();

  /**
   * The topics of the tables the job captures: those it was built with and those that appeared.
   * Read by the look for new tables, in a thread of the coordinator's pool.
   */
  private final Set<String> taken = java.util.concurrent.ConcurrentHashMap.newKeySet();

  /** The captured tables left unpublished for want of their primary key ({@link TableLook}). */
  private final Map<String, Long> keyless = new java.util.concurrent.ConcurrentHashMap<>();

  /**
   * The tables that appeared which the enumerator took (they are in {@link #progress}, and so in
   * its checkpoints) and whose chunks wait: until the log's reader has confirmed that it knows them
   * ({@link TablesTaken}), and the transactions running then have ended ({@link
   * RunningTransactions}), so that every change the log's reader skipped before it knew a table is
   * seen by its chunks. After a restore, the tables none of whose chunks was planned wait again.
   */
  private final Set<String> unconfirmed = new LinkedHashSet<>();

  /**
   * Where the state was written with Debezium's own snapshot: the tables it captured then, which
   * its checkpoints record for the next restore ({@link #refuseTablesAddedToADebeziumSnapshot});
   * empty for a state of a build that did not record them, or of a first start.
   */
  private final Set<String> capturedWithoutChunks = new LinkedHashSet<>();

  private ChunkPlanner planner;

  /** Set by {@link #close}: a callback of a look or a wait that ends after it does nothing. */
  private volatile boolean closed;

  CaptureSplitEnumerator(
      SplitEnumeratorContext<CaptureSplit> context,
      Map<String, String> connectorProperties,
      CaptureRoutes routes,
      ChunkedSnapshot snapshot,
      NewTableWatch watch,
      CaptureEnumeratorState state) {
    this.context = context;
    this.watch = watch;
    this.connectorProperties = connectorProperties;
    this.routes = routes;
    if (state.chunked() && snapshot == null && unfinished(state)) {
      throw new IllegalStateException(
          "the restored state holds a snapshot read in chunks that is not finished, but this job"
              + " takes Debezium's snapshot (--snapshot-chunk-rows 0): restore it into a job that"
              + " reads chunks, or start without state");
    }
    this.chunked = state.chunked() && snapshot != null;
    this.snapshot = snapshot;
    this.unassigned = new ArrayDeque<>();
    for (CaptureSplit split : state.unassigned()) {
      if (split instanceof SnapshotChunk chunk && !captures(chunk.topic())) {
        LOG.warn("Dropped {}: the job no longer captures its table", chunk);
      } else {
        unassigned.add(split);
      }
    }
    for (CaptureEnumeratorState.TableProgress table : state.tables()) {
      if (!chunked) {
        // Read by Debezium's snapshot, or by chunks all done before this job, which reads none.
        capturedWithoutChunks.add(table.topic());
      }
      if (!state.chunked()) {
        continue;
      }
      if (captures(table.topic())) {
        progress.put(table.topic(), table);
        if (!routes.topics().contains(table.topic()) && !table.done() && table.nextChunk() == 0) {
          // Taken, perhaps not yet waited for: waits again, from the log's reader's confirmation.
          unconfirmed.add(table.topic());
        }
      } else if (!table.done()) {
        LOG.warn("The snapshot of {} stops: the job no longer captures it", table.topic());
      }
    }
  }

  private static boolean unfinished(CaptureEnumeratorState state) {
    return state.unassigned().stream().anyMatch(split -> split instanceof SnapshotChunk)
        || state.tables().stream().anyMatch(table -> !table.done());
  }

  private boolean captures(String topic) {
    return routes.topics().contains(topic)
        || (routes.appearing() != null && routes.appearing().matches(topic));
  }

  @Override
  public void start() {
    refuseTablesAddedToADebeziumSnapshot();
    if (watch != null) {
      SourceDatabase database = SourceDatabase.of(connectorProperties);
      long every = watch.interval().toMillis();
      taken.addAll(routes.topics());
      taken.addAll(progress.keySet());
      if (routes.appearing() == null || !chunked) {
        // Without chunks (a state of Debezium's own snapshot) a table cannot be read beside the
        // log.
        context.callAsync(() -> watch.newTables(database), this::newTablesFound, every, every);
      } else {
        TableLook look =
            new TableLook(routes, snapshot, watch, connectorProperties, taken, keyless);
        context.callAsync(() -> look.tablesThatAppeared(database), this::takeTables, every, every);
      }
    }
    if (routes.appearing() != null
        && freshLogSplit() == null
        && SourceDatabase.of(connectorProperties).dialect() == SourceDatabase.Dialect.POSTGRES) {
      // The connector does not publish tables for a job that takes tables in flight, nor create
      // the publication: it is made to hold the job's tables at every start (a first start's
      // publication is created with the slot, below).
      SourceDatabase database = SourceDatabase.of(connectorProperties);
      List<ChunkedSnapshot.Table> restored = new ArrayList<>();
      for (ChunkedSnapshot.Table table :
          PostgresLogStart.unpublished(database, connectorProperties, snapshot.tables())) {
        if (progress.containsKey(table.topic())) {
          restored.add(table);
        }
      }
      List<ChunkedSnapshot.Table> toPublish = new ArrayList<>(snapshot.tables());
      toPublish.removeAll(restored);
      // Of the tables the state has seen, those that left the publication (dropped, and perhaps
      // created again) only with their keys.
      toPublish.addAll(
          TableLook.withTheirKeys(
              database, restored, routes.origin(), "while the job was not running", keyless));
      List<String> republished = PostgresLogStart.publish(database, connectorProperties, toPublish);
      for (ChunkedSnapshot.Table table : snapshot.tables()) {
        if (progress.containsKey(table.topic())
            && republished.contains(table.namespace() + "." + table.name())) {
          TableLook.warnRepublished(table, routes.origin(), "while the job was not running");
        }
      }
    }
    if (!chunked) {
      return;
    }
    List<ChunkedSnapshot.Table> added = new ArrayList<>();
    for (ChunkedSnapshot.Table table : snapshot.tables()) {
      if (!progress.containsKey(table.topic())) {
        added.add(table);
      }
    }
    if (added.isEmpty()) {
      return;
    }
    SourceDatabase database = SourceDatabase.of(connectorProperties);
    boolean postgres = database.dialect() == SourceDatabase.Dialect.POSTGRES;
    DebeziumSplit fresh = freshLogSplit();
    if (fresh != null) {
      MySqlLogStart.Start start =
          postgres
              ? new MySqlLogStart.Start(
                  StateOffsetBackingStore.postgresStart(
                      connectorProperties,
                      PostgresLogStart.prepare(database, connectorProperties, snapshot.tables())),
                  List.of())
              : MySqlLogStart.prepare(database, connectorProperties);
      unassigned.remove(fresh);
      unassigned.addFirst(fresh.at(start.offset(), start.schemaHistory()));
    } else {
      if (postgres) {
        // Waits for the transactions running now even where the publication holds the tables
        // already: a start that failed during the wait (a transaction open for 10 minutes) added
        // them, and the next start, its state still without them, must not read their chunks
        // before those transactions end (their changes from before the tables were published are
        // not sent).
        PostgresLogStart.publish(database, connectorProperties, added, true);
      }
      // A MySQL/MariaDB connector knows the tables from its schema history, which its reader
      // checks (SchemaHistoryTables) before it starts.
      LOG.info("Tables added to the job since its state was written are snapshotted: {}", added);
    }
    for (ChunkedSnapshot.Table table : added) {
      progress.put(table.topic(), CaptureEnumeratorState.TableProgress.start(table.topic()));
    }
  }

  /**
   * A table added to the job's tables since a state of a job that read no chunks (Debezium's own
   * snapshot, or chunks all done before a restore into a job that reads none): the connector would
   * read its changes from the state's position on, but never its rows, and it cannot be read in
   * chunks beside the log. The job ends (Flink does not restart it), naming the ways out. A
   * MySQL/MariaDB table created since the state's binlog position would be read whole from the
   * binlog, but one that existed before cannot be told from it here.
   */
  private void refuseTablesAddedToADebeziumSnapshot() {
    if (capturedWithoutChunks.isEmpty()) {
      return;
    }
    List<String> added = new ArrayList<>(routes.topics());
    added.removeAll(capturedWithoutChunks);
    if (added.isEmpty()) {
      return;
    }
    List<String> tables =
        added.stream().map(topic -> routes.route(routes.indexOf(topic)).tableName()).toList();
    throw new io.icebergcdc.cdc.RefusedSourceException(
        "the job's tables of "
            + routes.origin()
            + " include "
            + tables
            + ", which its restored state, written with Debezium's own snapshot"
            + " (--snapshot-chunk-rows 0), did not capture: their changes would be read from the"
            + " state's position on, but never the rows they had. Start the job without state"
            + " (its tables are read again), capture those tables in a job of their own, or"
            + " leave them out of --tables"
            + (SourceDatabase.of(connectorProperties).dialect() == SourceDatabase.Dialect.POSTGRES
                ? ""
                : " (a table created after the state's binlog position would be read whole from"
                    + " the binlog, one that existed before only from that position on; the job"
                    + " cannot tell them apart)"));
  }

  /**
   * Ends the job at the first table that appeared since it was built: thrown here, the exception
   * fails the job, and Flink does not restart it.
   */
  private void newTablesFound(List<String> tables, Throwable error) {
    if (error != null) {
      // The log's reader fails the job if the database is gone; a missed look is not a failure.
      LOG.warn("Could not look for new tables of the source: {}", error.toString());
      return;
    }
    if (!tables.isEmpty()) {
      LOG.info("Tables appeared in the source that the job's tables match: {}", tables);
      if (snapshot != null && !chunked) {
        // Built again with the table, the job would restore this state and never read its rows.
        throw new io.icebergcdc.cdc.RefusedSourceException(
            "table "
                + tables.get(0)
                + " appeared in "
                + routes.origin()
                + " while the job runs, but the job's state was written with Debezium's own"
                + " snapshot (--snapshot-chunk-rows 0), which cannot read a table beside the log:"
                + " start the job without state (its tables are read again), or capture the table"
                + " in a job of its own");
      }
      throw new NewSourceTableException(tables.get(0), "the source's tables");
    }
  }

  /** Snapshots the tables that appeared, beside the others' chunks still to be read. */
  private void takeTables(List<ChunkedSnapshot.Table> tables, Throwable error) {
    if (closed) {
      return;
    }
    if (error != null) {
      if (error instanceof NewSourceTableException
          || error instanceof io.icebergcdc.cdc.RefusedSourceException) {
        // A table the job cannot take in flight, or cannot capture at all: ends the job.
        throw (RuntimeException) error;
      }
      LOG.warn("Could not take the new tables of the source: {}", error.toString());
      return;
    }
    List<String> topics = new ArrayList<>();
    for (ChunkedSnapshot.Table table : tables) {
      if (taken.add(table.topic())) {
        progress.put(table.topic(), CaptureEnumeratorState.TableProgress.start(table.topic()));
        unconfirmed.add(table.topic());
        topics.add(table.topic());
        LOG.info("Table {} appeared in the source; the job captures it", table.topic());
      }
    }
    if (!topics.isEmpty() && context.registeredReaders().containsKey(LOG_READER)) {
      context.sendEventToSourceReader(LOG_READER, new TablesTaken(topics));
    }
  }

  /**
   * The log's reader knows the tables it was told of: their snapshots are read from now on, beside
   * the log.
   */
  @Override
  public void handleSourceEvent(
      int subtaskId, org.apache.flink.api.connector.source.SourceEvent event) {
    if (!(event instanceof TablesTaken confirmed)) {
      throw new IllegalArgumentException("unexpected source event " + event);
    }
    List<String> known = new ArrayList<>(confirmed.topics());
    known.retainAll(unconfirmed);
    if (known.isEmpty()) {
      return;
    }
    awaitRunningTransactions(known);
  }

  /**
   * Releases the chunks of {@code topics} once the transactions running now have ended, waiting
   * again as long as some run.
   */
  private void awaitRunningTransactions(List<String> topics) {
    SourceDatabase database = SourceDatabase.of(connectorProperties);
    context.callAsync(
        () -> RunningTransactions.awaitEnd(database),
        (ended, error) -> {
          if (closed) {
            return;
          }
          if (error != null || !Boolean.TRUE.equals(ended)) {
            if (error != null) {
              LOG.warn("Waiting for the running transactions failed: {}", error.toString());
            }
            awaitRunningTransactions(topics);
            return;
          }
          for (String topic : topics) {
            if (unconfirmed.remove(topic)) {
              LOG.info("The snapshot of {}, which appeared while the job runs, is read", topic);
            }
          }
          serveWaiting();
        });
  }

  /** The topics of the tables that appeared which the job captures, confirmed or not. */
  private List<String> appearedTopics() {
    List<String> topics = new ArrayList<>();
    for (String topic : progress.keySet()) {
      if (!routes.topics().contains(topic)) {
        topics.add(topic);
      }
    }
    return topics;
  }

  /** The log's split of a job's first start, not yet anywhere in the log. */
  private DebeziumSplit freshLogSplit() {
    for (CaptureSplit split : unassigned) {
      if (split instanceof DebeziumSplit log && log.offsets().isEmpty() && progress.isEmpty()) {
        return log;
      }
    }
    return null;
  }

  @Override
  public void handleSplitRequest(int subtaskId, String requesterHostname) {
    if (!chunked) {
      return;
    }
    SnapshotChunk chunk = nextChunk();
    if (chunk == null) {
      waiting.add(subtaskId);
      return;
    }
    assign(chunk, subtaskId);
  }

  private void assign(SnapshotChunk chunk, int subtaskId) {
    context.assignSplit(chunk, subtaskId);
    LOG.debug("Assigned {} to reader {}", chunk, subtaskId);
  }

  private SnapshotChunk nextChunk() {
    for (Iterator<CaptureSplit> it = unassigned.iterator(); it.hasNext(); ) {
      CaptureSplit split = it.next();
      if (split instanceof SnapshotChunk chunk) {
        it.remove();
        return chunk;
      }
    }
    for (CaptureEnumeratorState.TableProgress table : progress.values()) {
      if (!table.done() && !unconfirmed.contains(table.topic())) {
        if (planner == null) {
          planner = new ChunkPlanner(SourceDatabase.of(connectorProperties), snapshot, routes);
        }
        ChunkPlanner.Planned planned;
        try {
          planned = planner.next(table);
        } catch (RuntimeException e) {
          boolean gone;
          try {
            gone =
                !routes.topics().contains(table.topic())
                    && routes.appearing() != null
                    && !routes.appearing().exists(table.topic());
          } catch (RuntimeException looking) {
            e.addSuppressed(looking);
            throw e;
          }
          if (!gone) {
            throw e;
          }
          LOG.debug("Planning a chunk of {} failed", table.topic(), e);
          // A table that appeared, was taken and is gone since: nothing more to read.
          LOG.warn("The snapshot of {} stops: the table no longer exists", table.topic());
          progress.put(
              table.topic(),
              new CaptureEnumeratorState.TableProgress(
                  table.topic(), table.nextChunk(), table.nextLower(), true));
          continue;
        }
        progress.put(table.topic(), planned.progress());
        if (planned.progress().done()) {
          LOG.info(
              "Snapshot of {} is split into {} chunks",
              table.topic(),
              planned.progress().nextChunk());
        }
        return planned.chunk();
      }
    }
    return null;
  }

  @Override
  public void addSplitsBack(List<CaptureSplit> splits, int subtaskId) {
    unassigned.addAll(splits);
    assignLog();
    serveWaiting();
  }

  /** Hands the readers that asked when there was nothing to read the chunks there are now. */
  private void serveWaiting() {
    for (Iterator<Integer> it = waiting.iterator(); it.hasNext(); ) {
      int reader = it.next();
      if (!context.registeredReaders().containsKey(reader)) {
        continue;
      }
      SnapshotChunk chunk = nextChunk();
      if (chunk == null) {
        return;
      }
      it.remove();
      assign(chunk, reader);
    }
  }

  @Override
  public void addReader(int subtaskId) {
    if (subtaskId == LOG_READER) {
      if (routes.appearing() != null) {
        // Before the log's split: the reader starts its connector once it knows these.
        context.sendEventToSourceReader(LOG_READER, new TablesTaken(appearedTopics()));
      }
      assignLog();
    }
  }

  private void assignLog() {
    if (!context.registeredReaders().containsKey(LOG_READER)) {
      return;
    }
    for (Iterator<CaptureSplit> it = unassigned.iterator(); it.hasNext(); ) {
      CaptureSplit split = it.next();
      if (split instanceof DebeziumSplit) {
        context.assignSplit(split, LOG_READER);
        it.remove();
      }
    }
  }

  @Override
  public CaptureEnumeratorState snapshotState(long checkpointId) {
    if (!chunked) {
      // The tables the connector captures, so that a restore finds those added since.
      List<CaptureEnumeratorState.TableProgress> captured = new ArrayList<>();
      for (String topic : routes.topics()) {
        captured.add(new CaptureEnumeratorState.TableProgress(topic, 0, List.of(), true));
      }
      return new CaptureEnumeratorState(false, new ArrayList<>(unassigned), captured);
    }
    return new CaptureEnumeratorState(
        chunked, new ArrayList<>(unassigned), new ArrayList<>(progress.values()));
  }

  @Override
  public void close() throws java.io.IOException {
    closed = true;
    if (planner != null) {
      try {
        planner.close();
      } catch (java.sql.SQLException e) {
        throw new java.io.IOException(e);
      }
    }
  }
}
