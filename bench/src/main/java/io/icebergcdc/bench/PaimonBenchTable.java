package io.icebergcdc.bench;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import org.apache.paimon.Snapshot;
import org.apache.paimon.data.InternalRow;
import org.apache.paimon.manifest.FileKind;
import org.apache.paimon.reader.RecordReader;
import org.apache.paimon.table.FileStoreTable;
import org.apache.paimon.table.source.DataSplit;
import org.apache.paimon.table.source.ReadBuilder;
import org.apache.paimon.table.source.ScanMode;
import org.apache.paimon.table.source.Split;

/**
 * A Paimon primary-key table a benchmark wrote, read by Paimon's own reader (it is no Iceberg
 * table, so Iceberg's reader cannot read it).
 */
final class PaimonBenchTable implements BenchTable {

  private final org.apache.paimon.catalog.Catalog catalog;
  private final org.apache.paimon.catalog.Identifier id;

  PaimonBenchTable(
      org.apache.paimon.catalog.Catalog catalog, org.apache.paimon.catalog.Identifier id) {
    this.catalog = catalog;
    this.id = id;
  }

  private FileStoreTable table() {
    try {
      return (FileStoreTable) catalog.getTable(id);
    } catch (org.apache.paimon.catalog.Catalog.TableNotExistException e) {
      throw new IllegalStateException(e);
    }
  }

  @Override
  public double read(Input input, boolean check) throws IOException {
    long start = System.nanoTime();
    ReadBuilder read = table().newReadBuilder();
    List<Split> splits = read.newScan().plan().splits();
    long[] rows = {0};
    try (RecordReader<InternalRow> reader = read.newRead().createReader(splits)) {
      reader.forEachRemaining(
          row -> {
            rows[0]++;
            if (check) {
              input.check(id.getFullName(), row.getLong(0), row.getLong(3), row.getLong(2));
            }
          });
    }
    double seconds = (System.nanoTime() - start) / 1e9;
    if (rows[0] != input.finalRows()) {
      throw new IllegalStateException(
          "Paimon has " + rows[0] + " rows, expected " + input.finalRows());
    }
    return seconds;
  }

  /** The data files that a read plans: what the table holds now. */
  long dataFiles() {
    long files = 0;
    for (Split split : table().newReadBuilder().newScan().plan().splits()) {
      files += ((DataSplit) split).dataFiles().size();
    }
    return files;
  }

  /**
   * Paimon's snapshots: one for each checkpoint's append, and one more for each compaction it ran
   * with it; the checkpoint id is the snapshot's commit identifier. Paimon writes no delete files
   * here (its tables merge rows by key when read, and compact).
   */
  @Override
  public List<Commit> commits() throws IOException {
    FileStoreTable table = table();
    List<Commit> commits = new ArrayList<>();
    Iterator<Snapshot> snapshots = table.snapshotManager().snapshots();
    while (snapshots.hasNext()) {
      Snapshot snapshot = snapshots.next();
      long added =
          table
              .store()
              .newScan()
              .withSnapshot(snapshot)
              .withKind(ScanMode.DELTA)
              .plan()
              .files(FileKind.ADD)
              .size();
      commits.add(new Commit(snapshot.commitIdentifier(), snapshot.timeMillis(), added, 0));
    }
    return commits;
  }
}
