package io.icebergcdc.bench;

import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.ChangeSchema;
import io.icebergcdc.cdc.Operation;
import io.icebergcdc.cdc.SourceSequence;
import io.icebergcdc.cdc.typeutils.ChangeEventTypeInfo;
import org.apache.flink.api.common.functions.FlatMapFunction;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.types.RowKind;
import org.apache.flink.util.Collector;
import org.apache.iceberg.flink.FlinkSchemaUtil;

/**
 * The generated input as the writers take it: change events for this project's sink, Flink rows for
 * the peers. A source of parallelism 1 hands out the change numbers, and {@link BarrierClock} notes
 * when each checkpoint's barrier leaves it.
 */
final class GeneratedChanges {

  private GeneratedChanges() {}

  /** The numbers of changes {@code first} to {@code last}, from a source of parallelism 1. */
  static DataStream<Long> numbers(StreamExecutionEnvironment env, long first, long last) {
    return env.fromSequence(first, last)
        .setParallelism(1)
        .map(new BarrierClock())
        .setParallelism(1)
        .name("barrier clock");
  }

  /** The input's changes as change events, in its order (disordered for its workload). */
  static DataStream<ChangeEvent> events(
      StreamExecutionEnvironment env, Input input, ChangeSchema schema) {
    return numbers(env, 0, input.changes() - 1)
        .flatMap(new ToChangeEvents(schema, input))
        .returns(ChangeEventTypeInfo.of(schema))
        .setParallelism(1);
  }

  /**
   * Changes {@code first} to {@code last} as Flink rows: inserts if {@code insert}, else upserts
   * ({@code UPDATE_AFTER}, as Iceberg's upsert mode takes them).
   */
  static DataStream<RowData> rows(
      StreamExecutionEnvironment env, Input input, long first, long last, boolean insert) {
    return numbers(env, first, last)
        .map(new ToRow(input, insert))
        .returns(InternalTypeInfo.of(FlinkSchemaUtil.convert(input.workload().schema())))
        .setParallelism(1);
  }

  /**
   * The changes as this project's sink receives them: in order, or, for the disordered workload,
   * with one change in ten delivered a round of all keys late (the change after it for the same key
   * comes first, so the late one is stale) and one in fifty delivered twice.
   */
  static final class ToChangeEvents implements FlatMapFunction<Long, ChangeEvent> {
    private static final long serialVersionUID = 1L;
    private final ChangeSchema schema;
    private final Input input;

    ToChangeEvents(ChangeSchema schema, Input input) {
      this.schema = schema;
      this.input = input;
    }

    @Override
    public void flatMap(Long delivered, Collector<ChangeEvent> out) {
      boolean disordered = input.workload() == Workload.DISORDERED;
      long keys = input.keys();
      long i = delivered;
      if (disordered) {
        // Change j and change j + keys set the same key: for one j in ten, the later one comes
        // first and the earlier one, now stale, a round of all keys later.
        boolean evenRound = (delivered / keys) % 2 == 0;
        if (evenRound && delivered % 10 == 3 && delivered + keys < input.changes()) {
          i = delivered + keys;
        } else if (!evenRound && (delivered - keys) % 10 == 3) {
          i = delivered - keys;
        }
      }
      out.collect(event(i));
      if (disordered && delivered % 50 == 7) {
        out.collect(event(i));
      }
    }

    private ChangeEvent event(long i) {
      GenericRowData row = input.row(i);
      Operation op = input.insertOnly() ? Operation.INSERT : Operation.UPDATE;
      return new ChangeEvent(
          "bench", op, schema.keyOf(row), null, row, SourceSequence.column(i), 0L);
    }
  }

  /** Change {@code i} as a Flink row. */
  static final class ToRow implements MapFunction<Long, RowData> {
    private static final long serialVersionUID = 1L;
    private final Input input;
    private final boolean insert;

    ToRow(Input input, boolean insert) {
      this.input = input;
      this.insert = insert;
    }

    @Override
    public RowData map(Long i) {
      GenericRowData row = input.row(i);
      row.setRowKind(insert ? RowKind.INSERT : RowKind.UPDATE_AFTER);
      return row;
    }
  }
}
