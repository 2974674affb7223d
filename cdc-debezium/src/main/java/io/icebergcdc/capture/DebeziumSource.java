package io.icebergcdc.capture;

import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.connector.source.Boundedness;
import org.apache.flink.api.connector.source.Source;
import org.apache.flink.api.connector.source.SourceReader;
import org.apache.flink.api.connector.source.SourceReaderContext;
import org.apache.flink.api.connector.source.SplitEnumerator;
import org.apache.flink.api.connector.source.SplitEnumeratorContext;
import org.apache.flink.api.java.typeutils.ResultTypeQueryable;
import org.apache.flink.core.io.SimpleVersionedSerializer;

/**
 * A Flink source around Debezium's embedded engine: one connector (PostgreSQL, MySQL, MariaDB...),
 * run by reader 0, whose offsets and schema history live in Flink's checkpoints. The reader turns
 * each data change into the change events of its table ({@link CaptureRoutes}) straight from
 * Debezium's Kafka Connect structs, and emits them as {@link CapturedChange}s for a {@link
 * CapturedChangeRouter} chained to it.
 *
 * <p>The initial snapshot is the connector's own (one reader, started over after a failure), or,
 * with a {@link ChunkedSnapshot}, read by the source in chunks by primary key, by all readers in
 * parallel beside the log, and resumed from the next chunk after a failure. Run it at the job's
 * parallelism for a chunked snapshot, else with parallelism 1.
 *
 * <p>The connector's properties are Debezium's own ({@code connector.class}, {@code
 * database.hostname}, {@code table.include.list} and so on); the source sets the offset store, the
 * schema history and, for a chunked snapshot, the snapshot mode itself.
 */
public final class DebeziumSource
    implements Source<CapturedChange, CaptureSplit, CaptureEnumeratorState>,
        ResultTypeQueryable<CapturedChange> {

  private static final long serialVersionUID = 1L;

  /** How many records the engine may read ahead of the pipeline. */
  public static final int DEFAULT_QUEUE_CAPACITY = 10_000;

  /**
   * Checks, before a job is built, what the source database must allow for its tables to be
   * captured that the job does not set up itself: for PostgreSQL, that an existing publication
   * sends a partitioned table's changes as its own.
   *
   * @throws io.icebergcdc.cdc.RefusedSourceException naming the tables and the way out
   */
  public static void checkSource(
      Map<String, String> connectorProperties, List<TableListing.Name> tables) {
    SourceDatabase database = SourceDatabase.of(connectorProperties);
    if (database.dialect() == SourceDatabase.Dialect.POSTGRES) {
      PostgresLogStart.checkPartitionedTables(database, connectorProperties, tables);
    }
  }

  private final Map<String, String> connectorProperties;
  private final CaptureRoutes routes;
  private final ChunkedSnapshot snapshot;
  private final List<ChunkedSnapshot.Table> tables;
  private final int queueCapacity;
  private final NewTableWatch watch;

  /**
   * A source whose connector takes the initial snapshot itself, and that leaves a change of key
   * without its unchanged TOASTed values unfilled (no tables given).
   */
  public DebeziumSource(Map<String, String> connectorProperties, CaptureRoutes routes) {
    this(connectorProperties, routes, List.of(), 0, DEFAULT_QUEUE_CAPACITY, null);
  }

  /**
   * @param connectorProperties the Debezium connector's properties
   * @param routes the captured tables by Debezium topic
   * @param tables the captured tables as the database has them (their keys and columns): those the
   *     chunked snapshot reads, and of which a PostgreSQL source reads the values that a change of
   *     key left out (unchanged TOASTed values); empty, with the connector's own snapshot, to leave
   *     such a change unfilled, waiting for a later change of its key
   * @param snapshotChunkRows the rows of a chunk of the snapshot the source reads itself ({@link
   *     ChunkedSnapshot}); 0 for the connector's own snapshot
   * @param queueCapacity how many records the connector may read ahead of the pipeline
   * @param watch what looks for tables created while the job runs, which the job takes in flight
   *     where {@code routes} take such tables ({@link CaptureRoutes#takingTablesThatAppear}), and
   *     otherwise ends at, to be built again with them; only with a chunked snapshot, which reads a
   *     table the log already streams; null for none
   */
  public DebeziumSource(
      Map<String, String> connectorProperties,
      CaptureRoutes routes,
      List<ChunkedSnapshot.Table> tables,
      int snapshotChunkRows,
      int queueCapacity,
      NewTableWatch watch) {
    if (snapshotChunkRows < 0) {
      throw new IllegalArgumentException(
          "a snapshot chunk has at least one row (0 for the connector's own snapshot), not "
              + snapshotChunkRows);
    }
    if (watch != null && snapshotChunkRows == 0) {
      throw new IllegalArgumentException(
          "new tables are picked up only by a capture with a chunked snapshot");
    }
    if (!connectorProperties.containsKey("connector.class")) {
      throw new IllegalArgumentException("the Debezium properties name no 'connector.class'");
    }
    java.util.Objects.requireNonNull(tables, "tables");
    for (ChunkedSnapshot.Table table : tables) {
      if (!routes.topics().contains(table.topic())) {
        throw new IllegalArgumentException(
            "the job's table " + table.topic() + " has no route; routes: " + routes.topics());
      }
    }
    this.connectorProperties = Map.copyOf(connectorProperties);
    this.routes = routes;
    this.tables = List.copyOf(tables);
    this.snapshot =
        snapshotChunkRows == 0
            ? null
            : new ChunkedSnapshot(tables, snapshotChunkRows, ChunkedSnapshot.DEFAULT_FETCH_ROWS);
    this.queueCapacity = queueCapacity;
    this.watch = watch;
  }

  @Override
  public Boundedness getBoundedness() {
    return Boundedness.CONTINUOUS_UNBOUNDED;
  }

  @Override
  public SplitEnumerator<CaptureSplit, CaptureEnumeratorState> createEnumerator(
      SplitEnumeratorContext<CaptureSplit> context) {
    DebeziumSplit log =
        snapshot == null ? DebeziumSplit.initial() : new DebeziumSplit(Map.of(), List.of(), false);
    return restoreEnumerator(
        context, new CaptureEnumeratorState(snapshot != null, List.of(log), List.of()));
  }

  @Override
  public SplitEnumerator<CaptureSplit, CaptureEnumeratorState> restoreEnumerator(
      SplitEnumeratorContext<CaptureSplit> context, CaptureEnumeratorState checkpoint) {
    return new CaptureSplitEnumerator(
        context, connectorProperties, routes, snapshot, watch, checkpoint);
  }

  @Override
  public SimpleVersionedSerializer<CaptureSplit> getSplitSerializer() {
    return CaptureSplitSerializer.INSTANCE;
  }

  @Override
  public SimpleVersionedSerializer<CaptureEnumeratorState> getEnumeratorCheckpointSerializer() {
    return new CaptureSplitSerializer.StateSerializer();
  }

  @Override
  public SourceReader<CapturedChange, CaptureSplit> createReader(SourceReaderContext context) {
    return new CaptureSourceReader(
        context, connectorProperties, routes, snapshot, tables, queueCapacity);
  }

  @Override
  public TypeInformation<CapturedChange> getProducedType() {
    return new CapturedChangeTypeInfo(routes.schemas());
  }
}
