package io.icebergcdc.jobs.pipeline;

import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.DeadLetter;
import java.util.Map;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.iceberg.catalog.TableIdentifier;

/**
 * What a source translator hands the sink translator: each table's parsed changes and the records
 * the parser could not read.
 */
record RoutedChanges(
    Map<TableIdentifier, DataStream<ChangeEvent>> changes, DataStream<DeadLetter> deadLetters) {}
