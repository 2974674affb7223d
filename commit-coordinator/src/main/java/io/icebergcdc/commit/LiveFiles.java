package io.icebergcdc.commit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileContent;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableScan;
import org.apache.iceberg.io.CloseableIterable;

/**
 * The live data files of one snapshot of a table, with the position deletes (files or deletion
 * vectors) that apply to each: what a commit of position deletes is checked and merged against, and
 * what a writer's compaction reads.
 */
public final class LiveFiles {

  private final Map<String, DataFile> dataFiles = new HashMap<>();
  private final Map<String, List<DeleteFile>> positionDeletes = new HashMap<>();
  private final Set<String> withEqualityDeletes = new HashSet<>();

  private LiveFiles() {}

  public static LiveFiles of(Table table, Snapshot snapshot) {
    return of(table, snapshot, null);
  }

  /**
   * The live files of {@code snapshot}, its manifests read by {@code planWith}; null for Iceberg's
   * worker pool.
   */
  public static LiveFiles of(Table table, Snapshot snapshot, ExecutorService planWith) {
    LiveFiles live = new LiveFiles();
    if (snapshot == null) {
      return live;
    }
    TableScan scan = table.newScan().useSnapshot(snapshot.snapshotId());
    if (planWith != null) {
      scan = scan.planWith(planWith);
    }
    try (CloseableIterable<FileScanTask> tasks = scan.planFiles()) {
      for (FileScanTask task : tasks) {
        String location = task.file().location();
        live.dataFiles.put(location, task.file());
        for (DeleteFile delete : task.deletes()) {
          if (delete.content() == FileContent.POSITION_DELETES) {
            live.positionDeletes.computeIfAbsent(location, l -> new ArrayList<>()).add(delete);
          } else {
            live.withEqualityDeletes.add(location);
          }
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return live;
  }

  /** Counts {@code file}, which a commit adds, as live, without deletes. */
  public void include(DataFile file) {
    dataFiles.put(file.location(), file);
  }

  /** The live data file at {@code location}, or null if the snapshot has none there. */
  public DataFile dataFile(String location) {
    return dataFiles.get(location);
  }

  /** Every live data file. */
  public java.util.Collection<DataFile> dataFiles() {
    return java.util.Collections.unmodifiableCollection(dataFiles.values());
  }

  /**
   * How many rows of the data file at {@code location} its own deletes delete: its deletion vector,
   * or its position delete files that apply to it alone; deletes shared with other files (a
   * position delete file of a partition) are not counted.
   */
  public long rowsDeletedOf(String location) {
    long rows = 0;
    for (DeleteFile delete : positionDeletesOf(location)) {
      if (org.apache.iceberg.util.ContentFileUtil.isFileScoped(delete)) {
        rows += delete.recordCount();
      }
    }
    return rows;
  }

  /** Position delete files and deletion vectors that apply to the data file at {@code location}. */
  public List<DeleteFile> positionDeletesOf(String location) {
    return positionDeletes.getOrDefault(location, List.of());
  }

  /** Whether equality deletes apply to the data file at {@code location}. */
  public boolean hasEqualityDeletes(String location) {
    return withEqualityDeletes.contains(location);
  }
}
