package io.icebergcdc.sink.internal;

import io.icebergcdc.commit.LiveFiles;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.function.Predicate;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.PartitionSpec;

/**
 * Chooses the data files that a writer subtask moves its live rows out of at a checkpoint, in the
 * order it should, so that the table's files stay few and masked rows stay rare whoever wrote them:
 *
 * <ul>
 *   <li><b>deleted</b>: files of which at least the compaction ratio of the rows is deleted, those
 *       with the largest share first. For its own files the writer knows the share (its own
 *       deletes, committed or not); for the others the table's deletes tell it.
 *   <li><b>small</b>: files below the small-file size, once a partition has {@value
 *       #FILES_PER_TIER} of similar size (a size tier: sizes within a factor of 4) that have stayed
 *       small for a while (own files written a survey interval ago: under updates most fresh files
 *       soon reach the ratio and are compacted for it instead). Their rows go into the checkpoint's
 *       new files, which then are about as large as those {@value #FILES_PER_TIER} together: each
 *       row is copied once per tier it climbs, about log4(small size / size written per checkpoint)
 *       times, instead of once per merge. Smaller tiers first.
 * </ul>
 *
 * <p>Own files are those the subtask wrote at the current parallelism (all their keys are its own):
 * it moves all their live rows and the commit removes the file. Shared files are the others in the
 * table: written before a rescaling, by an earlier job, or by another engine, with keys of several
 * subtasks. Each subtask moves the rows its keys own, the position deletes of the rows it moved
 * mask them, and the commit that deletes a shared file's last live row removes it. Files that the
 * other subtasks of this job wrote are theirs to compact and not considered; nor are files with
 * equality deletes (their deleted rows are not known by position), files whose commit is not known
 * to be complete, or shared files this subtask has moved its rows out of already.
 */
final class CompactionPlan {

  /** How many small files of one size tier in one partition are merged at once. */
  static final int FILES_PER_TIER = 4;

  private CompactionPlan() {}

  /**
   * A file to move rows out of.
   *
   * @param location the data file's location
   * @param own the subtask's own file, or null for a shared one
   * @param rows how many rows moving is expected to copy, for the checkpoint's budget
   */
  record Candidate(String location, OwnFile own, long rows) {}

  /**
   * @param own the subtask's own files
   * @param locationOf the location of an own file, or null if unknown
   * @param live the table's live files now
   * @param specs the table's partition specs
   * @param deletedRatio the share of deleted rows that makes a file a candidate; 1 or more: none
   * @param smallFileSize the size below which a file is small; 0: none
   * @param settled whether an own small file is old enough to merge
   * @param lastCompletedCheckpoint the latest checkpoint whose commit is known to be complete
   * @param othersOwn whether a location is a file of another subtask of this job
   * @param done shared files this subtask has moved its rows out of already
   * @param parallelism the number of writer subtasks, which share a shared file's rows
   */
  static List<Candidate> of(
      Collection<OwnFile> own,
      Function<String, String> locationOf,
      LiveFiles live,
      Map<Integer, PartitionSpec> specs,
      double deletedRatio,
      long smallFileSize,
      Predicate<OwnFile> settled,
      long lastCompletedCheckpoint,
      Predicate<String> othersOwn,
      Predicate<String> done,
      int parallelism) {
    List<Scored> deleted = new ArrayList<>();
    Map<String, List<Scored>> tiers = new HashMap<>();
    Map<String, OwnFile> ownByLocation = new HashMap<>();
    for (OwnFile file : own) {
      String location = locationOf.apply(file.file());
      if (location != null && file.checkpoint() <= lastCompletedCheckpoint) {
        ownByLocation.put(location, file);
      }
    }
    for (DataFile file : live.dataFiles()) {
      String location = file.location();
      if (live.hasEqualityDeletes(location) || file.recordCount() <= 0) {
        continue;
      }
      OwnFile mine = ownByLocation.get(location);
      long rows;
      long deletedRows;
      if (mine != null) {
        rows = mine.rows();
        deletedRows = Math.max(mine.deleted(), live.rowsDeletedOf(location));
      } else if (done.test(location) || othersOwn.test(location)) {
        continue;
      } else {
        rows = file.recordCount();
        deletedRows = live.rowsDeletedOf(location);
      }
      long liveRows = Math.max(0, rows - deletedRows);
      // A shared file's rows are spread over the subtasks' keys.
      long toCopy = mine != null ? liveRows : (liveRows + parallelism - 1) / parallelism;
      Candidate candidate = new Candidate(location, mine, toCopy);
      double share = (double) deletedRows / rows;
      if (deletedRatio < 1 && share >= deletedRatio) {
        deleted.add(new Scored(candidate, share));
      } else if (file.fileSizeInBytes() < smallFileSize && (mine == null || settled.test(mine))) {
        int tier = tierOf(file.fileSizeInBytes());
        String partition =
            file.specId() + "/" + specs.get(file.specId()).partitionToPath(file.partition());
        tiers
            .computeIfAbsent(tier + "|" + partition, k -> new ArrayList<>())
            .add(new Scored(candidate, tier));
      }
    }
    deleted.sort(Comparator.comparingDouble(Scored::score).reversed());
    List<Candidate> plan = new ArrayList<>();
    deleted.forEach(s -> plan.add(s.candidate()));
    List<List<Scored>> groups = new ArrayList<>();
    for (List<Scored> group : tiers.values()) {
      if (group.size() >= FILES_PER_TIER) {
        groups.add(group);
      }
    }
    groups.sort(Comparator.comparingDouble(g -> g.get(0).score()));
    groups.forEach(g -> g.forEach(s -> plan.add(s.candidate())));
    return plan;
  }

  /** The size tier of a file: sizes within a factor of 4 share one. */
  static int tierOf(long bytes) {
    return (63 - Long.numberOfLeadingZeros(Math.max(1, bytes))) / 2;
  }

  private record Scored(Candidate candidate, double score) {}
}
