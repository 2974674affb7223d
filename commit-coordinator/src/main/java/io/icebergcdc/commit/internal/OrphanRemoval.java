package io.icebergcdc.commit.internal;

import io.icebergcdc.commit.OrphanFiles;
import io.icebergcdc.commit.OwnedFileNames;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;
import org.apache.iceberg.Table;
import org.apache.iceberg.io.BulkDeletionFailureException;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.SupportsBulkOperations;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Deletes the orphans of a table ({@link OrphanFiles}) that the committer can prove no checkpoint
 * will commit: a file that one of its jobs named for a checkpoint it has committed ({@link
 * OwnedFileNames}) and that no pending checkpoint holds was written by an attempt that never
 * committed it, or was replaced since and is referenced by no snapshot left; any other unreferenced
 * file under the table's location only once it is older than the minimum age, as it may be another
 * writer's write in flight. Under a data or metadata location outside the table's, which other
 * tables may share, only the committer's own files go.
 *
 * <p>That proof needs a checkpoint's files to have reached the committer when the checkpoint
 * completes: true under aligned checkpoints, which the sink requires.
 */
final class OrphanRemoval {

  private static final Logger LOG = LoggerFactory.getLogger(OrphanRemoval.class);

  /**
   * What the committer knows of the files handed to it.
   *
   * @param committedUpTo the checkpoint up to which every checkpoint of the job is committed
   * @param jobs the jobs whose files the committer answers for, each with the last checkpoint whose
   *     files it answers for: its own (all), and the job whose state it restored (up to the
   *     restored checkpoint: that job may still run, its later files its own)
   * @param sink the tag of the committer's sink in the names of its files ({@link
   *     OwnedFileNames#sinkTag}); null where its writers do not name them so: then only age decides
   * @param pending locations of the files that checkpoints still pending are to commit, normalized
   *     ({@link OrphanFiles#normalize})
   */
  record HandedFiles(
      long committedUpTo, Map<String, Long> jobs, String sink, Supplier<Set<String>> pending) {}

  /** What one run found and did. */
  record Result(int unreferenced, int deleted, long bytesDeleted, int deleteFailures) {}

  private OrphanRemoval() {}

  static Result run(Table table, HandedFiles handed, Duration minAge, long now) {
    List<OrphanFiles.Candidate> candidates = OrphanFiles.unreferenced(table);
    if (candidates.isEmpty()) {
      return new Result(0, 0, 0, 0);
    }
    Set<String> pending = handed.pending().get();
    long olderThan = now - minAge.toMillis();
    List<String> doomed = new ArrayList<>();
    long bytes = 0;
    for (OrphanFiles.Candidate candidate : candidates) {
      if (pending.contains(OrphanFiles.normalize(candidate.location()))) {
        continue;
      }
      OwnedFileNames.Owner owner = candidate.owner();
      boolean orphan;
      Long answeredUpTo = owner == null ? null : handed.jobs().get(owner.jobId());
      if (owner != null
          && owner.sink().equals(handed.sink())
          && answeredUpTo != null
          && owner.checkpointId() <= answeredUpTo) {
        // Ours: an orphan once its checkpoint is committed, and in flight before, however old.
        orphan = owner.checkpointId() <= handed.committedUpTo();
      } else if (candidate.underTableLocation()) {
        orphan = candidate.modifiedMillis() < olderThan;
      } else {
        // Under a data or metadata location that properties put outside the table's: other
        // tables may write there too (a shared write.data.path), so only our own files go.
        orphan = false;
      }
      if (orphan) {
        doomed.add(candidate.location());
        bytes += candidate.sizeBytes();
      }
    }
    int failures = delete(table.io(), doomed);
    if (!doomed.isEmpty()) {
      LOG.info(
          "Deleted {} orphan files ({} bytes) of table {}; {} unreferenced files are younger"
              + " than {} and not this job's, kept for now",
          doomed.size() - failures,
          bytes,
          table.name(),
          candidates.size() - doomed.size(),
          minAge);
    }
    return new Result(candidates.size(), doomed.size() - failures, bytes, failures);
  }

  private static int delete(FileIO io, List<String> locations) {
    if (locations.isEmpty()) {
      return 0;
    }
    if (io instanceof SupportsBulkOperations bulk) {
      try {
        bulk.deleteFiles(locations);
        return 0;
      } catch (BulkDeletionFailureException e) {
        LOG.warn("Could not delete {} orphan files: {}", e.numberFailedObjects(), e.getMessage());
        return e.numberFailedObjects();
      }
    }
    int failures = 0;
    for (String location : locations) {
      try {
        io.deleteFile(location);
      } catch (RuntimeException e) {
        failures++;
        LOG.warn("Could not delete orphan file {}: {}", location, e.toString());
      }
    }
    return failures;
  }
}
