package io.icebergcdc.bench;

import io.icebergcdc.commit.SnapshotSummaryKeys;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileContent;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SnapshotSummary;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.util.SnapshotUtil;

/** An Iceberg table a benchmark wrote, read through Iceberg's generic reader (deletes applied). */
final class IcebergBenchTable implements BenchTable {

  /** The checkpoint id that Iceberg's own {@code FlinkSink} writes in its snapshot summaries. */
  private static final String FLINK_SINK_CHECKPOINT_ID = "flink.max-committed-checkpoint-id";

  private final Table table;

  IcebergBenchTable(Table table) {
    this.table = table;
  }

  Table table() {
    table.refresh();
    return table;
  }

  @Override
  public double read(Input input, boolean check) throws IOException {
    long start = System.nanoTime();
    long rows = 0;
    try (CloseableIterable<Record> records = IcebergGenerics.read(table()).build()) {
      for (Record record : records) {
        rows++;
        if (check) {
          input.check(
              table.name(), (Long) record.get(0), (Long) record.get(3), (Long) record.get(2));
        }
      }
    }
    double seconds = (System.nanoTime() - start) / 1e9;
    if (rows != input.finalRows()) {
      throw new IllegalStateException(
          table.name() + " has " + rows + " rows, expected " + input.finalRows());
    }
    return seconds;
  }

  @Override
  public List<Commit> commits() {
    List<Commit> commits = new ArrayList<>();
    Snapshot current = table().currentSnapshot();
    if (current == null) {
      return commits;
    }
    for (Snapshot snapshot : SnapshotUtil.ancestorsOf(current.snapshotId(), table::snapshot)) {
      Map<String, String> summary = snapshot.summary();
      String checkpoint =
          summary.getOrDefault(
              SnapshotSummaryKeys.CHECKPOINT_ID, summary.get(FLINK_SINK_CHECKPOINT_ID));
      commits.add(
          0,
          new Commit(
              checkpoint == null ? -1 : Long.parseLong(checkpoint),
              snapshot.timestampMillis(),
              count(summary, SnapshotSummary.ADDED_FILES_PROP),
              count(summary, SnapshotSummary.ADDED_DELETE_FILES_PROP)));
    }
    return commits;
  }

  private static long count(Map<String, String> summary, String key) {
    return Long.parseLong(summary.getOrDefault(key, "0"));
  }

  /** Data files, delete files and equality delete files of the table's current snapshot. */
  long[] files() throws IOException {
    long data = 0;
    Set<String> deletes = new HashSet<>();
    long equality = 0;
    try (CloseableIterable<FileScanTask> tasks = table().newScan().planFiles()) {
      for (FileScanTask task : tasks) {
        data++;
        for (DeleteFile delete : task.deletes()) {
          if (deletes.add(delete.location()) && delete.content() == FileContent.EQUALITY_DELETES) {
            equality++;
          }
        }
      }
    }
    return new long[] {data, deletes.size(), equality};
  }
}
