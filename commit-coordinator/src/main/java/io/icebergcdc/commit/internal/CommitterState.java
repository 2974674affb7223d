package io.icebergcdc.commit.internal;

import io.icebergcdc.commit.ChangeCommittable;
import java.util.Collections;
import java.util.NavigableMap;
import java.util.Objects;
import java.util.TreeMap;

/**
 * The checkpointed state of the committer of one table: the job that wrote it, the table it commits
 * to (its UUID, and its name where one committer commits several tables), and the contributions of
 * each checkpoint that was snapshotted but not yet known to be committed, by checkpoint id, and the
 * table's latest snapshot the committer had seen then, after which every commit of those
 * checkpoints comes.
 */
final class CommitterState {

  private final String jobId;
  private final String tableUuid;
  private final NavigableMap<Long, ChangeCommittable> pending;
  private final String table;
  private final Long seenSnapshotId;
  private final java.util.List<String> lineage;

  /** How many earlier job ids a state keeps ({@link #lineage()}). */
  static final int LINEAGE_KEPT = 10;

  /** {@link #seenSnapshotId()} of a state taken while the table had no snapshot. */
  static final long NO_SNAPSHOT = -1L;

  CommitterState(String jobId, String tableUuid, NavigableMap<Long, ChangeCommittable> pending) {
    this(jobId, tableUuid, pending, null, null, java.util.List.of());
  }

  /**
   * @param table the name under which a committer of several tables knows the table; null for the
   *     committer of one table
   * @param seenSnapshotId the id of the table's latest snapshot the committer had seen when it took
   *     the state, {@link #NO_SNAPSHOT} where the table had none; null where unknown (a state of
   *     version 3 or before)
   * @param lineage the jobs before {@code jobId} whose commits the committer answers for, that it
   *     restored the state of, oldest first: the latest {@link #LINEAGE_KEPT}
   */
  CommitterState(
      String jobId,
      String tableUuid,
      NavigableMap<Long, ChangeCommittable> pending,
      String table,
      Long seenSnapshotId,
      java.util.List<String> lineage) {
    this.table = table;
    this.seenSnapshotId = seenSnapshotId;
    this.lineage =
        java.util.List.copyOf(
            lineage.subList(Math.max(0, lineage.size() - LINEAGE_KEPT), lineage.size()));
    this.jobId = Objects.requireNonNull(jobId, "jobId");
    this.tableUuid = tableUuid;
    this.pending = Collections.unmodifiableNavigableMap(new TreeMap<>(pending));
  }

  String jobId() {
    return jobId;
  }

  /** The UUID of the table the pending checkpoints belong to; null in state of version 1. */
  String tableUuid() {
    return tableUuid;
  }

  NavigableMap<Long, ChangeCommittable> pending() {
    return pending;
  }

  /** The table's name in a committer of several tables; null for one of one table. */
  String table() {
    return table;
  }

  /**
   * The table's latest snapshot the committer had seen when it took this state: a commit of the
   * pending checkpoints descends from it. {@link #NO_SNAPSHOT} where the table had none; null where
   * unknown.
   */
  Long seenSnapshotId() {
    return seenSnapshotId;
  }

  /**
   * The jobs before {@link #jobId()} whose state this committer's lineage restored, oldest first:
   * their commits are its own, as a job started from their state read the source past them.
   */
  java.util.List<String> lineage() {
    return lineage;
  }

  /** This state, of {@code table} in a committer of several tables. */
  CommitterState forTable(String table) {
    return new CommitterState(jobId, tableUuid, pending, table, seenSnapshotId, lineage);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof CommitterState
        && jobId.equals(((CommitterState) o).jobId)
        && Objects.equals(tableUuid, ((CommitterState) o).tableUuid)
        && pending.equals(((CommitterState) o).pending)
        && Objects.equals(table, ((CommitterState) o).table)
        && Objects.equals(seenSnapshotId, ((CommitterState) o).seenSnapshotId)
        && lineage.equals(((CommitterState) o).lineage);
  }

  @Override
  public int hashCode() {
    return Objects.hash(jobId, tableUuid, pending);
  }

  @Override
  public String toString() {
    return "job "
        + jobId
        + ", table "
        + (table == null ? "" : table + " ")
        + tableUuid
        + ", pending checkpoints "
        + pending.keySet();
  }
}
