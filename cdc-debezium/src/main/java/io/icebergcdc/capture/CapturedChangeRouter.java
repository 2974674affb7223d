package io.icebergcdc.capture;

import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.Operation;
import io.icebergcdc.cdc.TruncateCopies;
import io.icebergcdc.cdc.debezium.DebeziumJsonParseFunction;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.metrics.Counter;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;

/**
 * Sends the change events of a {@link DebeziumSource} to the side output of their table ({@link
 * CaptureRoutes#outputOf}), or to the main output for the tables one writer takes, and its dead
 * letters to {@link DebeziumJsonParseFunction#DEAD_LETTERS}, counted in {@code badRecords}. Chained
 * to the source: the records were converted there.
 */
public final class CapturedChangeRouter extends ProcessFunction<CapturedChange, ChangeEvent> {

  private static final long serialVersionUID = 1L;

  private final CaptureRoutes routes;

  private transient List<OutputTag<ChangeEvent>> outputs;
  private transient List<String> names;
  private transient Counter badRecords;

  public CapturedChangeRouter(CaptureRoutes routes) {
    this.routes = routes;
  }

  @Override
  public void open(OpenContext openContext) {
    outputs = new ArrayList<>();
    names = new ArrayList<>();
    for (int i = 0; i < routes.size(); i++) {
      outputs.add(routes.route(i).output());
      names.add(routes.mainOutputName(i));
    }
    badRecords = getRuntimeContext().getMetricGroup().counter("badRecords");
  }

  /** A change to the one writer of the tables; a truncate as a copy for each of its subtasks. */
  private void collect(ChangeEvent event, Collector<ChangeEvent> out) {
    if (event.operation() == Operation.TRUNCATE) {
      TruncateCopies.forTables(event, maxParallelism(), out::collect);
    } else {
      out.collect(event);
    }
  }

  private int maxParallelism() {
    return getRuntimeContext().getTaskInfo().getMaxNumberOfParallelSubtasks();
  }

  @Override
  public void processElement(CapturedChange record, Context ctx, Collector<ChangeEvent> out) {
    if (record.route() == CapturedChange.DEAD_LETTER) {
      badRecords.inc();
      ctx.output(DebeziumJsonParseFunction.DEAD_LETTERS, record.deadLetter());
    } else if (record.route() == CapturedChange.APPEARED) {
      // A table that appeared while the job runs: named already as the one writer knows it.
      collect(record.event(), out);
    } else {
      OutputTag<ChangeEvent> output = outputs.get(record.route());
      if (output == null) {
        // One stream of several tables: each change named as its writer knows the table.
        collect(record.event().withTable(names.get(record.route())), out);
      } else if (record.event().operation() == Operation.TRUNCATE) {
        TruncateCopies.forOneTable(record.event(), maxParallelism(), e -> ctx.output(output, e));
      } else {
        ctx.output(output, record.event());
      }
    }
  }
}
