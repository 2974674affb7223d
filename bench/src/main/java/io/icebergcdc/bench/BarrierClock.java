package io.icebergcdc.bench;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;

/**
 * Passes the source's change numbers through and notes, per checkpoint, the wall-clock time at
 * which its barrier left the source: chained to the source, it is snapshotted when the barrier is
 * injected. The times sit in a static map, since the benchmark's MiniCluster runs in its JVM; a
 * commit's latency is its snapshot's time minus its checkpoint's time here.
 */
final class BarrierClock implements MapFunction<Long, Long>, CheckpointedFunction {

  private static final long serialVersionUID = 1L;
  private static final Map<Long, Long> INJECTED = new ConcurrentHashMap<>();

  @Override
  public Long map(Long change) {
    return change;
  }

  @Override
  public void snapshotState(FunctionSnapshotContext context) {
    INJECTED.putIfAbsent(context.getCheckpointId(), System.currentTimeMillis());
  }

  @Override
  public void initializeState(FunctionInitializationContext context) {}

  /** The time checkpoint {@code id}'s barrier left the source, or null if not seen. */
  static Long injectedAt(long checkpointId) {
    return INJECTED.get(checkpointId);
  }

  /** Forgets the times of earlier jobs, whose checkpoint ids start from 1 again. */
  static void reset() {
    INJECTED.clear();
  }
}
