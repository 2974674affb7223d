package io.icebergcdc.jobs.pipeline;

import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.ChangeSchema;
import io.icebergcdc.cdc.DeadLetter;
import io.icebergcdc.cdc.debezium.DebeziumJsonParseFunction;
import io.icebergcdc.cdc.typeutils.ChangeEventTypeInfo;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.util.OutputTag;
import org.apache.iceberg.catalog.TableIdentifier;

/**
 * What a source translator hands the sink translator: the parsed changes of each table that has a
 * stream of its own, those of the tables one writer takes in one stream, the records the parser
 * could not read, and the table name the changes and dead letters of each table carry ({@link
 * ChangeEvent#table()}, {@link DeadLetter#table}), by which they are told apart and counted in that
 * table's snapshot summaries.
 *
 * @param changes the changes of each table with a stream of its own
 * @param together the changes of the tables one writer takes, each named as its Iceberg table
 *     ({@link #namesOnMainOutput}); null if none
 */
record RoutedChanges(
    Map<TableIdentifier, DataStream<ChangeEvent>> changes,
    DataStream<DeadLetter> deadLetters,
    Map<TableIdentifier, String> deadLetterTables,
    DataStream<ChangeEvent> together) {

  /**
   * The changes of a router that sends the changes of the tables of {@code writtenTogether} (by
   * route) to its main output, and each other table's to a side output of its own, found by the
   * table's route; and its dead letters.
   */
  static RoutedChanges ofRouter(
      SingleOutputStreamOperator<ChangeEvent> routed,
      List<TableTarget> targets,
      Function<String, OutputTag<ChangeEvent>> outputOf,
      Function<TableTarget, String> tableName,
      Set<String> writtenTogether) {
    Map<TableIdentifier, DataStream<ChangeEvent>> changes = new LinkedHashMap<>();
    Map<TableIdentifier, String> names = new LinkedHashMap<>();
    for (TableTarget target : targets) {
      if (!writtenTogether.contains(target.route())) {
        changes.put(target.table(), routed.getSideOutput(outputOf.apply(target.route())));
      }
      names.put(target.table(), tableName.apply(target));
    }
    return new RoutedChanges(
        changes,
        routed.getSideOutput(DebeziumJsonParseFunction.DEAD_LETTERS),
        names,
        writtenTogether.isEmpty() ? null : routed);
  }

  /**
   * The name the changes of each route of {@code writtenTogether} carry on the router's main
   * output: their Iceberg table's, by which the writer of several tables knows the table and names
   * its state (so that state follows the Iceberg table, whatever source table feeds it).
   */
  static Map<String, String> namesOnMainOutput(
      List<TableTarget> targets, Set<String> writtenTogether) {
    Map<String, String> names = new LinkedHashMap<>();
    for (TableTarget target : targets) {
      if (writtenTogether.contains(target.route())) {
        names.put(target.route(), nameOnMainOutput(target));
      }
    }
    return names;
  }

  /** The name the changes of {@code target} carry on a router's main output. */
  static String nameOnMainOutput(TableTarget target) {
    return target.table().toString();
  }

  /**
   * The type of a router's main output: the changes of the tables of {@code writtenTogether}, each
   * by the name its changes carry there; or, when there are none, that of the first table (the
   * output then stays empty).
   */
  static TypeInformation<ChangeEvent> mainOutputType(
      List<TableTarget> targets, Set<String> writtenTogether) {
    Map<String, ChangeSchema> schemas = new LinkedHashMap<>();
    for (TableTarget target : targets) {
      if (writtenTogether.contains(target.route())) {
        schemas.put(nameOnMainOutput(target), target.schema());
      }
    }
    return schemas.isEmpty()
        ? ChangeEventTypeInfo.of(targets.get(0).schema())
        : ChangeEventTypeInfo.ofTables(schemas);
  }
}
