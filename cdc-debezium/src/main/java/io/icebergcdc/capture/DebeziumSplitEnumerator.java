package io.icebergcdc.capture;

import java.util.ArrayList;
import java.util.List;
import org.apache.flink.api.connector.source.SplitEnumerator;
import org.apache.flink.api.connector.source.SplitEnumeratorContext;

/**
 * Hands the source's one split to reader 0, and takes it back when that reader fails, so that the
 * restarted reader resumes from the offsets of the last completed checkpoint.
 */
final class DebeziumSplitEnumerator implements SplitEnumerator<DebeziumSplit, List<DebeziumSplit>> {

  private final SplitEnumeratorContext<DebeziumSplit> context;
  private final List<DebeziumSplit> unassigned;

  DebeziumSplitEnumerator(
      SplitEnumeratorContext<DebeziumSplit> context, List<DebeziumSplit> unassigned) {
    this.context = context;
    this.unassigned = new ArrayList<>(unassigned);
  }

  @Override
  public void start() {}

  @Override
  public void handleSplitRequest(int subtaskId, String requesterHostname) {}

  @Override
  public void addSplitsBack(List<DebeziumSplit> splits, int subtaskId) {
    unassigned.addAll(splits);
    assignTo(subtaskId);
  }

  @Override
  public void addReader(int subtaskId) {
    assignTo(subtaskId);
  }

  private void assignTo(int subtaskId) {
    if (!unassigned.isEmpty() && context.registeredReaders().containsKey(subtaskId)) {
      for (DebeziumSplit split : unassigned) {
        context.assignSplit(split, subtaskId);
      }
      unassigned.clear();
    }
  }

  @Override
  public List<DebeziumSplit> snapshotState(long checkpointId) {
    return new ArrayList<>(unassigned);
  }

  @Override
  public void close() {}
}
