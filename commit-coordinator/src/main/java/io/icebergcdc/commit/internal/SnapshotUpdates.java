package io.icebergcdc.commit.internal;

import io.icebergcdc.commit.BoundedWrite;
import io.icebergcdc.commit.Overwrite;
import org.apache.iceberg.AppendFiles;
import org.apache.iceberg.DeleteFiles;
import org.apache.iceberg.OverwriteFiles;
import org.apache.iceberg.ReplacePartitions;
import org.apache.iceberg.RowDelta;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SnapshotUpdate;
import org.apache.iceberg.Table;
import org.apache.iceberg.expressions.Expression;

/**
 * The Iceberg operation that commits a prepared attempt ({@link PreparedCommit}), with the checks
 * that make a concurrent change fail it: an append where it only adds rows, a delete of files where
 * it only removes files whose rows are all deleted, a row delta where it deletes or compacts, a
 * partition replacement or an overwrite by filter for an overwrite.
 */
final class SnapshotUpdates {

  private SnapshotUpdates() {}

  /**
   * @param base the table state the attempt was prepared on, or null for an empty table
   * @param overwrite what a bounded overwrite replaces, or null
   * @param bounded the bounded write, whose read snapshot validates a statement's rows
   * @param nothingAddedSinceBase whether data files added after {@code base} fail the commit (an
   *     overwrite's, and a removal's of files, fail on their own where the attempt landed)
   */
  static SnapshotUpdate<?> of(
      Table table,
      PreparedCommit prepared,
      Snapshot base,
      Overwrite overwrite,
      BoundedWrite bounded,
      boolean nothingAddedSinceBase) {
    if (overwrite != null) {
      return overwriteUpdate(table, overwrite, prepared);
    } else if (removesOnly(prepared) && bounded.readSnapshotId() == null) {
      // Rows deleted whole files at a time: a delete, as readers of the snapshot log expect of
      // it; the files' deletion vectors go with them (Iceberg drops a removed file's vector).
      DeleteFiles delete = table.newDelete();
      prepared.emptied.forEach(delete::deleteFile);
      delete.validateFilesExist();
      return delete;
    } else if (prepared.addedDeletes.isEmpty()
        && prepared.removedDeletes.isEmpty()
        && prepared.compacted.isEmpty()
        && prepared.emptied.isEmpty()
        && bounded.readSnapshotId() == null
        && !nothingAddedSinceBase) {
      AppendFiles append = table.newAppend();
      prepared.dataFiles.forEach(append::appendFile);
      return append;
    } else {
      RowDelta delta = table.newRowDelta();
      prepared.dataFiles.forEach(delta::addRows);
      prepared.addedDeletes.forEach(delta::addDeletes);
      prepared.removedDeletes.forEach(delta::removeDeletes);
      prepared.compacted.forEach(delta::removeRows);
      prepared.emptied.forEach(delta::removeRows);
      if (base != null) {
        delta.validateFromSnapshot(base.snapshotId());
      }
      if (!prepared.referenced.isEmpty()) {
        delta.validateDataFilesExist(prepared.referenced);
      }
      delta.validateDeletedFiles();
      if (prepared.validateDeleteConflicts) {
        delta.validateNoConflictingDeleteFiles();
      }
      if (nothingAddedSinceBase) {
        // Since base, or since the table's first snapshot where it had none.
        delta.validateNoConflictingDataFiles();
      }
      if (bounded.readSnapshotId() != null) {
        // Rows computed from what the statement read: whatever was committed after that fails it.
        delta.validateFromSnapshot(bounded.readSnapshotId());
        delta.validateNoConflictingDataFiles();
        delta.validateNoConflictingDeleteFiles();
      }
      return delta;
    }
  }

  /**
   * Whether the attempt only removes data files whose rows are all deleted, with their deletion
   * vectors: no rows or deletes added, nothing compacted.
   */
  private static boolean removesOnly(PreparedCommit prepared) {
    return !prepared.emptied.isEmpty()
        && prepared.dataFiles.isEmpty()
        && prepared.addedDeletes.isEmpty()
        && prepared.compacted.isEmpty()
        && prepared.removedDeletes.stream().allMatch(org.apache.iceberg.util.ContentFileUtil::isDV);
  }

  /**
   * The overwrite, validated from the snapshot its write was planned on: data or deletes another
   * writer committed to the replaced rows since fail it rather than being replaced unseen. Planned
   * on an empty table (no starting snapshot), every snapshot of the table's history came since, and
   * Iceberg checks them all.
   */
  private static SnapshotUpdate<?> overwriteUpdate(
      Table table, Overwrite overwrite, PreparedCommit prepared) {
    if (overwrite.scope() == Overwrite.Scope.PARTITIONS_IN_INPUT) {
      ReplacePartitions replace = table.newReplacePartitions();
      prepared.dataFiles.forEach(replace::addFile);
      if (overwrite.startingSnapshotId() != null) {
        replace.validateFromSnapshot(overwrite.startingSnapshotId());
      }
      replace.validateNoConflictingData();
      replace.validateNoConflictingDeletes();
      return replace;
    }
    Expression filter = overwrite.rowFilter(table.schema());
    OverwriteFiles replace = table.newOverwrite().overwriteByRowFilter(filter);
    prepared.dataFiles.forEach(replace::addFile);
    if (!prepared.dataFiles.isEmpty() && overwrite.scope() != Overwrite.Scope.FILTER) {
      // A filter's rows were checked one by one before they were written; the column statistics
      // of a file (strings truncated) cannot always prove them.
      replace.validateAddedFilesMatchOverwriteFilter();
    }
    if (overwrite.startingSnapshotId() != null) {
      replace.validateFromSnapshot(overwrite.startingSnapshotId());
    }
    replace.conflictDetectionFilter(filter);
    replace.validateNoConflictingData();
    replace.validateNoConflictingDeletes();
    return replace;
  }
}
