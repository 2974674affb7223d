package io.icebergcdc.commit.internal;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.Table;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The files of one commit attempt ({@link CommitPreparation}): the writers' data and delete files,
 * the delete files written for the attempt, what it removes, and what it must validate.
 */
final class PreparedCommit {

  private static final Logger LOG = LoggerFactory.getLogger(PreparedCommit.class);

  final List<DataFile> dataFiles = new ArrayList<>();
  final List<DeleteFile> addedDeletes = new ArrayList<>();
  final List<DeleteFile> removedDeletes = new ArrayList<>();
  final List<DataFile> compacted = new ArrayList<>();

  /** Data files all of whose rows are deleted once this attempt commits: removed, not masked. */
  final List<DataFile> emptied = new ArrayList<>();

  final List<DeleteFile> writtenDeletes = new ArrayList<>();
  final Set<String> referenced = new LinkedHashSet<>();
  long fellBack;
  long copiesDeleted;
  boolean validateDeleteConflicts;

  /** Removes the delete files the committer wrote for an attempt that did not commit. */
  void deleteWrittenFiles(Table table) {
    for (DeleteFile file : writtenDeletes) {
      try {
        table.io().deleteFile(file.location());
      } catch (RuntimeException e) {
        LOG.warn("Cannot remove the unused delete file {}", file.location(), e);
      }
    }
    writtenDeletes.clear();
  }
}
