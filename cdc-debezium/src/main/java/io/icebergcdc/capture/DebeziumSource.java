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
 * run by one reader, whose offsets and schema history live in Flink's checkpoints. The reader turns
 * each data change into the change events of its table ({@link CaptureRoutes}) straight from
 * Debezium's Kafka Connect structs, and emits them as {@link CapturedChange}s for a {@link
 * CapturedChangeRouter} chained to it.
 *
 * <p>Run it with parallelism 1. The connector's properties are Debezium's own ({@code
 * connector.class}, {@code database.hostname}, {@code table.include.list} and so on); the source
 * sets the offset store and the schema history itself.
 */
public final class DebeziumSource
    implements Source<CapturedChange, DebeziumSplit, List<DebeziumSplit>>,
        ResultTypeQueryable<CapturedChange> {

  private static final long serialVersionUID = 1L;

  /** How many records the engine may read ahead of the pipeline. */
  public static final int DEFAULT_QUEUE_CAPACITY = 10_000;

  private final Map<String, String> connectorProperties;
  private final CaptureRoutes routes;
  private final int queueCapacity;

  public DebeziumSource(Map<String, String> connectorProperties, CaptureRoutes routes) {
    this(connectorProperties, routes, DEFAULT_QUEUE_CAPACITY);
  }

  public DebeziumSource(
      Map<String, String> connectorProperties, CaptureRoutes routes, int queueCapacity) {
    if (!connectorProperties.containsKey("connector.class")) {
      throw new IllegalArgumentException("the Debezium properties name no 'connector.class'");
    }
    this.connectorProperties = Map.copyOf(connectorProperties);
    this.routes = routes;
    this.queueCapacity = queueCapacity;
  }

  @Override
  public Boundedness getBoundedness() {
    return Boundedness.CONTINUOUS_UNBOUNDED;
  }

  @Override
  public SplitEnumerator<DebeziumSplit, List<DebeziumSplit>> createEnumerator(
      SplitEnumeratorContext<DebeziumSplit> context) {
    return new DebeziumSplitEnumerator(context, List.of(DebeziumSplit.initial()));
  }

  @Override
  public SplitEnumerator<DebeziumSplit, List<DebeziumSplit>> restoreEnumerator(
      SplitEnumeratorContext<DebeziumSplit> context, List<DebeziumSplit> checkpoint) {
    return new DebeziumSplitEnumerator(context, checkpoint);
  }

  @Override
  public SimpleVersionedSerializer<DebeziumSplit> getSplitSerializer() {
    return DebeziumSplitSerializer.INSTANCE;
  }

  @Override
  public SimpleVersionedSerializer<List<DebeziumSplit>> getEnumeratorCheckpointSerializer() {
    return new DebeziumSplitSerializer.ListSerializer();
  }

  @Override
  public SourceReader<CapturedChange, DebeziumSplit> createReader(SourceReaderContext context) {
    return new DebeziumSourceReader(connectorProperties, routes, queueCapacity);
  }

  @Override
  public TypeInformation<CapturedChange> getProducedType() {
    return new CapturedChangeTypeInfo(routes.schemas());
  }
}
