package io.icebergcdc.jobs.cli;

import io.icebergcdc.commit.MaintenancePolicy;
import io.icebergcdc.commit.OrphanFiles;
import io.icebergcdc.commit.SnapshotSummaryKeys;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SnapshotSummary;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.util.SnapshotUtil;

/**
 * What a user checks after a load: the snapshot log with what each commit did, and the live files
 * per partition.
 */
final class TableInspector {

  private final Table table;

  TableInspector(Table table) {
    this.table = table;
  }

  void print(PrintStream out) {
    out.println("Table " + table.name() + " at " + table.location());
    out.println(
        "  format version "
            + org.apache.iceberg.TableUtil.formatVersion(table)
            + ", partition spec ["
            + (table.spec().isUnpartitioned()
                ? ""
                : io.icebergcdc.jobs.pipeline.TableChecks.describe(table.spec()))
            + "]"
            + ", primary key "
            + table.schema().identifierFieldNames());
    printSnapshots(out);
    printFiles(out);
    printHealth(out);
    out.println("Rows (deletes applied): " + countRows());
  }

  /**
   * What a table that a job writes for months needs watched: how many snapshots and metadata files
   * it keeps, the size of its metadata file, and how many manifests a read or a commit plans over.
   */
  private void printHealth(PrintStream out) {
    out.println();
    out.println("Health:");
    int snapshots = 0;
    long oldest = Long.MAX_VALUE;
    for (Snapshot s : table.snapshots()) {
      snapshots++;
      oldest = Math.min(oldest, s.timestampMillis());
    }
    out.printf(
        "  snapshots kept         %d%s%n",
        snapshots, snapshots == 0 ? "" : ", the oldest from " + Instant.ofEpochMilli(oldest));
    if (table instanceof HasTableOperations operations) {
      TableMetadata metadata = operations.operations().current();
      String location = metadata.metadataFileLocation();
      String size = "?";
      if (location != null) {
        try {
          size = bytes(table.io().newInputFile(location).getLength());
        } catch (RuntimeException e) {
          size = "? (" + e.getMessage() + ")";
        }
      }
      out.printf("  metadata file          %s, %s%n", location, size);
      out.printf(
          "  earlier metadata files %d listed in the metadata log%n",
          metadata.previousFiles().size());
    }
    Snapshot current = table.currentSnapshot();
    if (current != null) {
      out.printf(
          "  manifests              %d data, %d delete%n",
          current.dataManifests(table.io()).size(), current.deleteManifests(table.io()).size());
    }
    out.println("  unreferenced files     " + orphans());
    List<String> missing = MaintenancePolicy.missingMetadataRetention(table.properties());
    out.println(
        "  metadata retention     "
            + (missing.isEmpty()
                ? "old metadata files deleted after commits"
                : "not set: " + String.join(", ", missing)));
  }

  /**
   * The files under the table's location that no snapshot references: orphans, or a write in
   * flight. A running job's committer removes its own once their checkpoint committed, others by
   * age ({@code maintenance.remove-orphans.*}).
   */
  private String orphans() {
    if (!OrphanFiles.canList(table)) {
      return "not counted: the table's file IO cannot list files";
    }
    List<OrphanFiles.Candidate> orphans;
    try {
      orphans = OrphanFiles.unreferenced(table);
    } catch (RuntimeException e) {
      return "not counted: " + e.getMessage();
    }
    if (orphans.isEmpty()) {
      return "none";
    }
    long size = 0;
    long oldest = Long.MAX_VALUE;
    int written = 0;
    for (OrphanFiles.Candidate orphan : orphans) {
      size += orphan.sizeBytes();
      oldest = Math.min(oldest, orphan.modifiedMillis());
      if (orphan.owner() != null) {
        written++;
      }
    }
    return String.format(
        "%d (%s, the oldest from %s; %d named by this project's writers), orphans or writes in"
            + " flight",
        orphans.size(), bytes(size), Instant.ofEpochMilli(oldest), written);
  }

  private void printSnapshots(PrintStream out) {
    out.println();
    out.println("Snapshots (oldest first):");
    out.printf(
        "  %-20s %-24s %-10s %10s %10s %10s %6s %6s %20s %7s %7s  %s%n",
        "snapshot",
        "committed at",
        "operation",
        "checkpoint",
        "+records",
        "+deletes",
        "+data",
        "+del.",
        "inserted/upd./del.",
        "stale",
        "dups",
        "source position");
    List<Snapshot> snapshots = new ArrayList<>();
    if (table.currentSnapshot() != null) {
      for (Snapshot s : SnapshotUtil.currentAncestors(table)) {
        snapshots.add(0, s);
      }
    }
    for (Snapshot s : snapshots) {
      Map<String, String> summary = s.summary();
      long deletes =
          count(summary, SnapshotSummary.ADDED_EQ_DELETES_PROP)
              + count(summary, SnapshotSummary.ADDED_POS_DELETES_PROP);
      out.printf(
          "  %-20d %-24s %-10s %10s %10d %10d %6d %6d %20s %7s %7s  %s%n",
          s.snapshotId(),
          Instant.ofEpochMilli(s.timestampMillis()),
          s.operation(),
          checkpoint(summary.get(SnapshotSummaryKeys.CHECKPOINT_ID)),
          count(summary, SnapshotSummary.ADDED_RECORDS_PROP),
          deletes,
          count(summary, SnapshotSummary.ADDED_FILES_PROP),
          count(summary, SnapshotSummary.ADDED_DELETE_FILES_PROP),
          summary.getOrDefault(SnapshotSummaryKeys.ROWS_INSERTED, "-")
              + "/"
              + summary.getOrDefault(SnapshotSummaryKeys.ROWS_UPDATED, "-")
              + "/"
              + summary.getOrDefault(SnapshotSummaryKeys.ROWS_DELETED, "-"),
          summary.getOrDefault(SnapshotSummaryKeys.STALE_DROPPED, "-"),
          summary.getOrDefault(SnapshotSummaryKeys.DUPLICATES_DROPPED, "-"),
          summary.getOrDefault(SnapshotSummaryKeys.SOURCE_POSITION, "-"));
    }
    if (snapshots.isEmpty()) {
      out.println("  (none)");
    }
  }

  private void printFiles(PrintStream out) {
    Map<String, long[]> byPartition = new TreeMap<>();
    Set<String> seenDeletes = new HashSet<>();
    try (CloseableIterable<FileScanTask> tasks = table.newScan().planFiles()) {
      for (FileScanTask task : tasks) {
        PartitionSpec spec = table.specs().get(task.file().specId());
        String partition =
            spec.isUnpartitioned()
                ? "(unpartitioned)"
                : spec.partitionToPath(task.file().partition());
        long[] stats = byPartition.computeIfAbsent(partition, p -> new long[4]);
        stats[0]++;
        stats[1] += task.file().fileSizeInBytes();
        for (DeleteFile delete : task.deletes()) {
          if (seenDeletes.add(delete.location())) {
            stats[2]++;
            stats[3] += delete.fileSizeInBytes();
          }
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    out.println();
    out.println("Live files per partition:");
    out.printf(
        "  %-40s %10s %14s %12s %14s%n",
        "partition", "data files", "avg data size", "delete files", "avg del. size");
    for (Map.Entry<String, long[]> e : byPartition.entrySet()) {
      long[] s = e.getValue();
      out.printf(
          "  %-40s %10d %14s %12d %14s%n",
          e.getKey(),
          s[0],
          bytes(s[0] == 0 ? 0 : s[1] / s[0]),
          s[2],
          bytes(s[2] == 0 ? 0 : s[3] / s[2]));
    }
    if (byPartition.isEmpty()) {
      out.println("  (no files)");
    }
  }

  private long countRows() {
    long rows = 0;
    try (CloseableIterable<Record> records = IcebergGenerics.read(table).build()) {
      for (Record ignored : records) {
        rows++;
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return rows;
  }

  private static long count(Map<String, String> summary, String key) {
    String value = summary.get(key);
    return value == null ? 0 : Long.parseLong(value);
  }

  private static String bytes(long size) {
    if (size >= 1 << 20) {
      return String.format("%.1f MiB", size / (double) (1 << 20));
    }
    if (size >= 1 << 10) {
      return String.format("%.1f KiB", size / (double) (1 << 10));
    }
    return size + " B";
  }

  /** A snapshot's checkpoint id as shown: {@code end} for the one commit of a bounded input. */
  private static String checkpoint(String id) {
    if (id == null) {
      return "-";
    }
    return id.equals(String.valueOf(SnapshotSummaryKeys.END_OF_INPUT_CHECKPOINT_ID)) ? "end" : id;
  }
}
