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
 * run by one reader, whose offsets and schema history live in Flink's checkpoints. It emits each
 * data change as {@link DebeziumRecord}: the Debezium topic and the event as JSON with its schema.
 *
 * <p>Run it with parallelism 1. The connector's properties are Debezium's own ({@code
 * connector.class}, {@code database.hostname}, {@code table.include.list} and so on); the source
 * sets the offset store and the schema history itself.
 */
public final class DebeziumSource
    implements Source<DebeziumRecord, DebeziumSplit, List<DebeziumSplit>>,
        ResultTypeQueryable<DebeziumRecord> {

  private static final long serialVersionUID = 1L;

  /** How many records the engine may read ahead of the pipeline. */
  public static final int DEFAULT_QUEUE_CAPACITY = 10_000;

  private final Map<String, String> connectorProperties;
  private final int queueCapacity;

  public DebeziumSource(Map<String, String> connectorProperties) {
    this(connectorProperties, DEFAULT_QUEUE_CAPACITY);
  }

  public DebeziumSource(Map<String, String> connectorProperties, int queueCapacity) {
    if (!connectorProperties.containsKey("connector.class")) {
      throw new IllegalArgumentException("the Debezium properties name no 'connector.class'");
    }
    this.connectorProperties = Map.copyOf(connectorProperties);
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
  public SourceReader<DebeziumRecord, DebeziumSplit> createReader(SourceReaderContext context) {
    return new DebeziumSourceReader(connectorProperties, queueCapacity);
  }

  @Override
  public TypeInformation<DebeziumRecord> getProducedType() {
    return TypeInformation.of(DebeziumRecord.class);
  }
}
