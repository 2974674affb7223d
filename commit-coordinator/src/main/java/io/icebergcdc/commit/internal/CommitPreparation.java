package io.icebergcdc.commit.internal;

import io.icebergcdc.commit.ChangeCommittable;
import io.icebergcdc.commit.CommitException;
import io.icebergcdc.commit.ContentFileCodec;
import io.icebergcdc.commit.LiveFiles;
import io.icebergcdc.commit.PositionDeletes;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.io.DeleteWriteResult;
import org.apache.iceberg.util.ContentFileUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Prepares the commit of a checkpoint against the table as it is now: decodes the writers' files,
 * removes the data files the writers compacted (with their own deletes), and turns the writers'
 * position deletes into deletion vectors or position delete files for the data files still live,
 * and into equality deletes for those another writer replaced meanwhile ({@link
 * EqualityFallbackWriter}). A conflict it can see already fails the attempt, which the committer
 * then prepares again on the new table state.
 */
final class CommitPreparation {

  private static final Logger LOG = LoggerFactory.getLogger(CommitPreparation.class);

  private CommitPreparation() {}

  /**
   * The files of a commit attempt of checkpoint {@code checkpointId} on {@code base}: the writers'
   * files, and the delete files written for it, named with {@code operationId}.
   *
   * @param removalAlone whether an attempt may consist of removing files whose rows are all deleted
   *     (a delete of files), which cannot validate against what a statement read: false for a
   *     bounded write that does
   */
  static PreparedCommit prepare(
      Table table,
      long checkpointId,
      ChangeCommittable committable,
      Snapshot base,
      String operationId,
      boolean removalAlone,
      java.util.concurrent.ExecutorService planWith) {
    Map<Integer, PartitionSpec> specs = table.specs();
    PreparedCommit prepared = new PreparedCommit();
    for (String json : committable.dataFiles()) {
      prepared.dataFiles.add(ContentFileCodec.decodeDataFile(json, specs));
    }
    for (String json : committable.deleteFiles()) {
      prepared.addedDeletes.add(ContentFileCodec.decodeDeleteFile(json, specs));
    }
    prepared.referenced.addAll(committable.referencedDataFiles());
    prepared.fellBack = committable.equalityFallbacks();
    PositionDeletes positions = committable.positionDeletes();
    // Files of this commit cannot have been changed by anyone else: only the others need the
    // table's live files.
    Set<String> ours = new HashSet<>();
    prepared.dataFiles.forEach(f -> ours.add(f.location()));
    List<String> theirs =
        prepared.referenced.stream().filter(location -> !ours.contains(location)).toList();
    List<String> compacted = committable.compactedDataFiles();
    if (positions.isEmpty() && theirs.isEmpty() && compacted.isEmpty()) {
      return prepared;
    }
    LiveFiles live = LiveFiles.of(table, base, planWith);
    // The commit's own new files are live too: a checkpoint aborted after its writers handed its
    // files on (as a stop with a savepoint aborts the one in flight) leaves them to the next one,
    // whose deletes may point into them. Those are position deletes in the same commit.
    prepared.dataFiles.forEach(live::include);
    // A compacted file still in the table goes, with the deletes of its own; its rows live on in
    // this commit's data files. One that another writer replaced meanwhile stays gone: the
    // positions of the rows compacted from it are deleted below like any other deletes of a
    // replaced file, by key.
    Set<String> removed = new HashSet<>();
    for (String location : compacted) {
      DataFile file = live.dataFile(location);
      if (file != null) {
        prepared.compacted.add(file);
        removed.add(location);
        for (DeleteFile delete : live.positionDeletesOf(location)) {
          if (ContentFileUtil.isFileScoped(delete)) {
            // Its deletion vector, or position delete file of its own: of no use without it.
            prepared.removedDeletes.add(delete);
          }
        }
      }
    }
    for (String referenced : theirs) {
      if (live.dataFile(referenced) == null) {
        throw new CommitException(
            TableCommitter.describe(checkpointId)
                + " conflicts with a concurrent change of table "
                + table.name()
                + ": data file "
                + referenced
                + ", which its deletes refer to, is no longer in the table",
            null,
            true);
      }
    }
    Map<String, long[]> onLive = new java.util.HashMap<>();
    Map<String, long[]> onGone = new java.util.HashMap<>();
    for (String location : positions.files()) {
      if (!removed.contains(location)) {
        (live.dataFile(location) != null ? onLive : onGone)
            .put(location, positions.positions(location));
      }
    }
    if (!compacted.isEmpty()) {
      // Deletes that another writer adds to a compacted file after this base fail the commit,
      // which is then prepared again against the new base.
      prepared.validateDeleteConflicts = true;
    }
    PositionDeletes copies;
    try {
      copies =
          CompactedCopies.deletedMeanwhile(
              table, base, live, committable.compactedRows(), prepared.dataFiles);
    } catch (java.io.IOException | RuntimeException e) {
      throw new CommitException(
          "cannot check the rows compacted in checkpoint "
              + checkpointId
              + " against concurrent deletes in table "
              + table.name()
              + ": "
              + e.getMessage(),
          e);
    }
    if (!copies.isEmpty()) {
      prepared.copiesDeleted = copies.count();
      LOG.warn(
          "{} rows compacted in checkpoint {} were deleted by another writer of table {} meanwhile;"
              + " their copies are deleted too",
          copies.count(),
          checkpointId,
          table.name());
    }
    // The copies' deletes join the commit's own deletes of the same new files (a file of an
    // aborted checkpoint that this commit carries), not replace them.
    PositionDeletes toLive = PositionDeletes.of(onLive).plus(copies);
    if (toLive.isEmpty() && onGone.isEmpty()) {
      return prepared;
    }
    try {
      if (!toLive.isEmpty()) {
        DeleteWriteResult written =
            PositionDeleteFileWriter.write(table, live, toLive, checkpointId, operationId);
        List<DeleteFile> kept =
            withoutEmptiedFiles(table, live, written.deleteFiles(), ours, prepared, removalAlone);
        prepared.addedDeletes.addAll(kept);
        prepared.writtenDeletes.addAll(kept);
        prepared.removedDeletes.addAll(written.rewrittenDeleteFiles());
        written.referencedDataFiles().stream()
            .map(Object::toString)
            .filter(location -> !ours.contains(location))
            .forEach(prepared.referenced::add);
        // A file this commit removes is checked as removed files are: that it is still there.
        prepared.emptied.forEach(file -> prepared.referenced.remove(file.location()));
        prepared.validateDeleteConflicts = true;
      }
      if (!onGone.isEmpty()) {
        PositionDeletes gone = PositionDeletes.of(onGone);
        List<DeleteFile> fallback =
            EqualityFallbackWriter.write(table, gone, checkpointId, operationId);
        prepared.addedDeletes.addAll(fallback);
        prepared.writtenDeletes.addAll(fallback);
        prepared.fellBack += gone.count();
      }
    } catch (java.io.IOException | RuntimeException e) {
      prepared.deleteWrittenFiles(table);
      throw new CommitException(
          "cannot write the position deletes of checkpoint "
              + checkpointId
              + " to table "
              + table.name()
              + ": "
              + e.getMessage(),
          e);
    }
    return prepared;
  }

  /**
   * The written {@code deletes} without those that would delete every row of their data file: such
   * a file goes from the table instead ({@link PreparedCommit#emptied}), with its earlier deletes,
   * which the written ones replace. Only file-scoped deletes count; each holds its file's deleted
   * positions once (a bitmap), merged with the file's earlier ones. A written file that no kept
   * delete shares is removed from storage at once.
   */
  private static List<DeleteFile> withoutEmptiedFiles(
      Table table,
      LiveFiles live,
      List<DeleteFile> deletes,
      Set<String> ours,
      PreparedCommit prepared,
      boolean removalAlone) {
    Map<String, Long> deletedRows = new java.util.HashMap<>();
    for (DeleteFile delete : deletes) {
      String dataFile = ContentFileUtil.referencedDataFileLocation(delete);
      if (dataFile != null && ContentFileUtil.isFileScoped(delete)) {
        deletedRows.merge(dataFile, delete.recordCount(), Long::sum);
      }
    }
    Set<String> emptied = new HashSet<>();
    deletedRows.forEach(
        (location, rows) -> {
          DataFile file = live.dataFile(location);
          // A file of this commit's own is not in the table yet: it stays, masked.
          if (file != null && !ours.contains(location) && rows == file.recordCount()) {
            emptied.add(location);
            prepared.emptied.add(file);
          }
        });
    if (emptied.isEmpty()) {
      return deletes;
    }

    List<DeleteFile> kept = new java.util.ArrayList<>();
    Set<String> keptLocations = new HashSet<>();
    Set<String> dropped = new HashSet<>();
    for (DeleteFile delete : deletes) {
      String dataFile = ContentFileUtil.referencedDataFileLocation(delete);
      if (dataFile != null && emptied.contains(dataFile)) {
        dropped.add(delete.location());
      } else {
        kept.add(delete);
        keptLocations.add(delete.location());
      }
    }
    if (kept.isEmpty()
        && prepared.dataFiles.isEmpty()
        && prepared.addedDeletes.isEmpty()
        && prepared.compacted.isEmpty()
        && (!removalAlone || org.apache.iceberg.TableUtil.formatVersion(table) < 3)) {
      // Removing the files alone is a delete of files only in format version 3 (version 2's
      // position delete files Iceberg does not drop with their data file), and one that cannot
      // validate a statement's read: the rows stay masked, as a delete.
      prepared.emptied.clear();
      return deletes;
    }
    // Deletion vectors share one Puffin file; one whose every vector was dropped is of no use.
    for (String location : dropped) {
      if (!keptLocations.contains(location)) {
        try {
          table.io().deleteFile(location);
        } catch (RuntimeException e) {
          LOG.warn("Cannot remove the unused delete file {}", location, e);
        }
      }
    }
    return kept;
  }
}
