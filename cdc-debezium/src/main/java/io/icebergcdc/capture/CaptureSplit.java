package io.icebergcdc.capture;

import org.apache.flink.api.connector.source.SourceSplit;

/**
 * A split of a {@link DebeziumSource}: the connector's log ({@link DebeziumSplit}, one per source,
 * read by reader 0), or a chunk of a table's initial snapshot ({@link SnapshotChunk}, read by
 * whichever reader asks for work).
 */
public sealed interface CaptureSplit extends SourceSplit permits DebeziumSplit, SnapshotChunk {}
