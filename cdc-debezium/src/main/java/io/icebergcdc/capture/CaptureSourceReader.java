package io.icebergcdc.capture;

import io.debezium.engine.RecordChangeEvent;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.apache.flink.api.connector.source.ReaderOutput;
import org.apache.flink.api.connector.source.SourceReader;
import org.apache.flink.api.connector.source.SourceReaderContext;
import org.apache.flink.connector.base.source.reader.synchronization.FutureCompletingBlockingQueue;
import org.apache.flink.core.io.InputStatus;
import org.apache.kafka.connect.source.SourceRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A reader of a {@link DebeziumSource}: reader 0 runs the connector on the log ({@link
 * DebeziumLogReader}); every reader reads the snapshot chunks it is given ({@link ChunkReader}),
 * one at a time, asking for the next when one is done. While both have rows, it takes them in turn.
 */
final class CaptureSourceReader implements SourceReader<CapturedChange, CaptureSplit> {

  private static final Logger LOG = LoggerFactory.getLogger(CaptureSourceReader.class);

  private final SourceReaderContext context;
  private final CaptureRoutes routes;
  private final ChunkedSnapshot snapshot;
  private final FutureCompletingBlockingQueue<RecordChangeEvent<SourceRecord>> queue;
  private final DebeziumLogReader log;
  private final ChunkReader chunks;
  private final KeyChangeFill keyChanges;
  private final Deque<SnapshotChunk> pending = new ArrayDeque<>();
  private boolean logTurn;

  /**
   * The log's split, held until the enumerator has told this reader which tables that appeared
   * while the job runs it has taken ({@link TablesTaken}), for a job that takes such tables: a
   * change of a table the reader does not know is skipped, so the connector starts only once the
   * reader knows them all.
   */
  private DebeziumSplit heldLog;

  private boolean toldTablesTaken;
  private long chunksDone;

  CaptureSourceReader(
      SourceReaderContext context,
      Map<String, String> connectorProperties,
      CaptureRoutes routes,
      ChunkedSnapshot snapshot,
      List<ChunkedSnapshot.Table> tables,
      int queueCapacity) {
    this.context = context;
    this.routes = routes;
    this.snapshot = snapshot;
    this.queue = new FutureCompletingBlockingQueue<>(queueCapacity);
    SourceDatabase database =
        snapshot == null && tables.isEmpty() ? null : SourceDatabase.of(connectorProperties);
    // Only PostgreSQL leaves values out of a change.
    this.keyChanges =
        database != null && database.dialect() == SourceDatabase.Dialect.POSTGRES
            ? new KeyChangeFill(database, tables, routes)
            : null;
    this.log = new DebeziumLogReader(connectorProperties, routes, queue, keyChanges);
    this.chunks = snapshot == null ? null : new ChunkReader(database, snapshot, routes);
  }

  @Override
  public void start() {
    if (snapshot != null) {
      context.sendSplitRequest();
    }
  }

  @Override
  public void addSplits(List<CaptureSplit> splits) {
    for (CaptureSplit split : splits) {
      if (split instanceof DebeziumSplit logSplit) {
        if (routes.appearing() != null && !toldTablesTaken) {
          heldLog = logSplit;
        } else {
          log.start(logSplit);
        }
      } else if (chunks == null) {
        throw new IllegalStateException(
            "the restored state holds "
                + split
                + ", a snapshot chunk not read yet, but this job does not snapshot in chunks;"
                + " restore it into a job that does");
      } else {
        pending.add((SnapshotChunk) split);
      }
    }
    // Wakes a reader that waits for records: it has a chunk to read now.
    queue.notifyAvailable();
  }

  /**
   * Takes the tables the enumerator took ({@link TablesTaken}), tells it so, and starts the log's
   * connector if it was held until then.
   */
  @Override
  public void handleSourceEvents(org.apache.flink.api.connector.source.SourceEvent event) {
    if (!(event instanceof TablesTaken taken)) {
      throw new IllegalArgumentException("unexpected source event " + event);
    }
    for (String topic : taken.topics()) {
      if (routes.take(topic) < 0) {
        LOG.warn("Table of topic {} was taken by the job but no longer exists", topic);
      } else {
        LOG.info("Capturing the table of topic {} too, which appeared while the job runs", topic);
      }
    }
    toldTablesTaken = true;
    context.sendSourceEventToCoordinator(taken);
    if (heldLog != null) {
      DebeziumSplit held = heldLog;
      heldLog = null;
      log.start(held);
      queue.notifyAvailable();
    }
  }

  @Override
  public InputStatus pollNext(ReaderOutput<CapturedChange> output) throws Exception {
    logTurn = !logTurn;
    if (logTurn && log.running() && log.pollNext(output)) {
      return InputStatus.MORE_AVAILABLE;
    }
    if (pollChunk(output)) {
      return InputStatus.MORE_AVAILABLE;
    }
    if (log.running()) {
      if (log.pollNext(output)) {
        return InputStatus.MORE_AVAILABLE;
      }
    } else {
      // Resets the availability that addSplits set: the queue is empty without a connector.
      queue.poll();
    }
    return InputStatus.NOTHING_AVAILABLE;
  }

  private boolean pollChunk(ReaderOutput<CapturedChange> output) {
    if (chunks == null) {
      return false;
    }
    while (true) {
      if (!chunks.reading()) {
        SnapshotChunk next = pending.poll();
        if (next == null) {
          return false;
        }
        if (!chunks.open(next)) {
          chunksDone++;
          if (pending.isEmpty()) {
            context.sendSplitRequest();
            return false;
          }
          continue;
        }
      }
      CapturedChange change = chunks.next();
      if (change != null) {
        output.collect(change);
        return true;
      }
      chunksDone++;
      if (pending.isEmpty()) {
        context.sendSplitRequest();
        LOG.debug(
            "Read {} snapshot chunks ({} rows); asked for another", chunksDone, chunks.rows());
        return false;
      }
    }
  }

  @Override
  public CompletableFuture<Void> isAvailable() {
    if (chunks != null && (chunks.reading() || !pending.isEmpty())) {
      return CompletableFuture.completedFuture(null);
    }
    return queue.getAvailabilityFuture();
  }

  @Override
  public List<CaptureSplit> snapshotState(long checkpointId) {
    List<CaptureSplit> state = new ArrayList<>();
    DebeziumSplit logSplit = heldLog != null ? heldLog : log.snapshotState(checkpointId);
    if (logSplit != null) {
      state.add(logSplit);
    }
    if (chunks != null && chunks.reading()) {
      state.add(chunks.progress());
    }
    state.addAll(pending);
    return state;
  }

  @Override
  public void notifyCheckpointComplete(long checkpointId) throws Exception {
    log.notifyCheckpointComplete(checkpointId);
  }

  @Override
  public void notifyNoMoreSplits() {}

  @Override
  public void close() throws Exception {
    try {
      log.close();
    } finally {
      if (keyChanges != null) {
        keyChanges.close();
      }
      if (chunks != null) {
        chunks.close();
      }
    }
  }
}
