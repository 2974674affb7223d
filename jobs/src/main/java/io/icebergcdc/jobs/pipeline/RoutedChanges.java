package io.icebergcdc.jobs.pipeline;

import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.DeadLetter;
import io.icebergcdc.cdc.debezium.DebeziumJsonParseFunction;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.util.OutputTag;
import org.apache.iceberg.catalog.TableIdentifier;

/**
 * What a source translator hands the sink translator: each table's parsed changes, the records the
 * parser could not read, and the table name those of each table carry ({@link DeadLetter#table}),
 * by which they are counted in that table's snapshot summaries.
 */
record RoutedChanges(
    Map<TableIdentifier, DataStream<ChangeEvent>> changes,
    DataStream<DeadLetter> deadLetters,
    Map<TableIdentifier, String> deadLetterTables) {

  /**
   * The changes of a router that sends each table's changes to a side output of its own, found by
   * the table's route, and its dead letters.
   */
  static RoutedChanges ofRouter(
      SingleOutputStreamOperator<ChangeEvent> routed,
      List<TableTarget> targets,
      Function<String, OutputTag<ChangeEvent>> outputOf,
      Function<TableTarget, String> deadLetterTable) {
    Map<TableIdentifier, DataStream<ChangeEvent>> changes = new LinkedHashMap<>();
    Map<TableIdentifier, String> names = new LinkedHashMap<>();
    for (TableTarget target : targets) {
      changes.put(target.table(), routed.getSideOutput(outputOf.apply(target.route())));
      names.put(target.table(), deadLetterTable.apply(target));
    }
    return new RoutedChanges(
        changes, routed.getSideOutput(DebeziumJsonParseFunction.DEAD_LETTERS), names);
  }
}
