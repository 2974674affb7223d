package io.icebergcdc.commit.internal;

import io.icebergcdc.cdc.ChangeStats;
import io.icebergcdc.cdc.SourceSequence;
import io.icebergcdc.commit.BoundedWrite;
import io.icebergcdc.commit.Overwrite;
import io.icebergcdc.commit.RecordedPositions;
import io.icebergcdc.commit.SnapshotSummaryKeys;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.util.SnapshotUtil;

/**
 * What the committer writes into the summary of each snapshot ({@link SnapshotSummaryKeys}): the
 * job, operator and checkpoint that a restore looks up, the checkpoint's counts, the source
 * position and Kafka offsets a job without state takes up from, and what the commit did.
 */
final class CommitSummary {

  private final String operatorId;
  private final String runId;
  private final boolean recordsSourceSequence;
  private final boolean positionNeverGoesBack;
  private final java.util.Set<String> ownJobs;
  private final Map<String, String> kafkaTopicIds;

  /**
   * @param recordsSourceSequence whether the summary records {@link
   *     SnapshotSummaryKeys#SOURCE_SEQUENCE}
   * @param positionNeverGoesBack whether the recorded position never goes below the table's: false
   *     where the job ignores the table's position, and then only the positions and offsets of
   *     {@code ownJobs}' snapshots are carried forward
   * @param ownJobs the jobs whose commits the committer answers for (its own and those it restored
   *     state of), as it learns them
   * @param kafkaTopicIds the id of each Kafka topic the changes are read from, by name; empty where
   *     unknown
   */
  CommitSummary(
      String operatorId,
      String runId,
      boolean recordsSourceSequence,
      boolean positionNeverGoesBack,
      java.util.Set<String> ownJobs,
      Map<String, String> kafkaTopicIds) {
    this.kafkaTopicIds = kafkaTopicIds;
    this.operatorId = operatorId;
    this.runId = runId;
    this.recordsSourceSequence = recordsSourceSequence;
    this.positionNeverGoesBack = positionNeverGoesBack;
    this.ownJobs = ownJobs;
  }

  /** The summary of the commit of {@code prepared} for checkpoint {@code checkpointId}. */
  Map<String, String> of(
      Table table,
      long checkpointId,
      String commitJobId,
      ChangeStats stats,
      Snapshot base,
      PreparedCommit prepared,
      Overwrite overwrite,
      BoundedWrite bounded) {
    Map<String, String> summary = counts(table, checkpointId, commitJobId, stats, base);
    if (stats.truncatedAt() != null) {
      // The key-indexed writers give it in every checkpoint once they know of one, so a commit
      // that only compacts repeats it; nothing else carries it forward (a job that ignores the
      // table's position, or another engine's delete, leaves it behind).
      summary.put(SnapshotSummaryKeys.TRUNCATED_AT, stats.truncatedAt().encode());
    }
    String offsets = kafkaOffsets(table, base, stats);
    if (!offsets.isEmpty()) {
      summary.put(SnapshotSummaryKeys.KAFKA_OFFSETS, offsets);
      if (!kafkaTopicIds.isEmpty()) {
        summary.put(SnapshotSummaryKeys.KAFKA_TOPIC_IDS, pairs(kafkaTopicIds));
      }
    }
    summary.put(SnapshotSummaryKeys.DELETES_FELL_BACK, Long.toString(prepared.fellBack));
    if (!prepared.compacted.isEmpty()) {
      summary.put(
          SnapshotSummaryKeys.DATA_FILES_COMPACTED, Integer.toString(prepared.compacted.size()));
    }
    if (!prepared.emptied.isEmpty()) {
      summary.put(
          SnapshotSummaryKeys.DATA_FILES_EMPTIED, Integer.toString(prepared.emptied.size()));
    }
    if (prepared.copiesDeleted > 0) {
      summary.put(
          SnapshotSummaryKeys.COMPACTED_ROWS_DELETED_MEANWHILE,
          Long.toString(prepared.copiesDeleted));
    }
    if (overwrite != null) {
      summary.put(SnapshotSummaryKeys.OVERWRITE, overwrite.describe());
    }
    if (bounded.writeId() != null) {
      summary.put(SnapshotSummaryKeys.WRITE_ID, bounded.writeId());
    }
    if (bounded.statement() != null) {
      summary.put(SnapshotSummaryKeys.STATEMENT, bounded.statement());
    }
    return summary;
  }

  /**
   * The Kafka offsets the snapshot's summary gives: this checkpoint's, merged over those of this
   * operator's latest snapshot that has any, so that a commit without new records (one that only
   * compacts, say) still says where the source stands; empty for sources without offsets. A
   * checkpoint without offsets of its own looks no further than this operator's latest snapshot.
   */
  private String kafkaOffsets(Table table, Snapshot base, ChangeStats stats) {
    java.util.TreeMap<String, Long> offsets = new java.util.TreeMap<>(stats.sourceOffsets());
    String previous =
        latestSummaryOfThisOperator(
                table, base, offsets.isEmpty() ? null : SnapshotSummaryKeys.KAFKA_OFFSETS)
            .get(SnapshotSummaryKeys.KAFKA_OFFSETS);
    if (previous != null) {
      for (String pair : previous.split(",")) {
        int eq = pair.lastIndexOf('=');
        offsets.merge(pair.substring(0, eq), Long.parseLong(pair.substring(eq + 1)), Math::max);
      }
    }
    return pairs(offsets);
  }

  /** {@code key=value} pairs separated by commas. */
  private static String pairs(Map<String, ?> values) {
    StringBuilder text = new StringBuilder();
    values.forEach(
        (key, value) ->
            text.append(text.length() == 0 ? "" : ",").append(key).append('=').append(value));
    return text.toString();
  }

  private Map<String, String> counts(
      Table table, long checkpointId, String commitJobId, ChangeStats stats, Snapshot base) {
    Map<String, String> summary = new java.util.LinkedHashMap<>();
    summary.put(SnapshotSummaryKeys.JOB_ID, commitJobId);
    summary.put(SnapshotSummaryKeys.OPERATOR_ID, operatorId);
    summary.put(SnapshotSummaryKeys.CHECKPOINT_ID, Long.toString(checkpointId));
    if (checkpointId == TableCommitter.END_OF_INPUT_CHECKPOINT_ID && runId != null) {
      summary.put(SnapshotSummaryKeys.RUN_ID, runId);
    }
    summary.put(SnapshotSummaryKeys.ROWS_INSERTED, Long.toString(stats.inserted()));
    summary.put(SnapshotSummaryKeys.ROWS_UPDATED, Long.toString(stats.updated()));
    summary.put(SnapshotSummaryKeys.ROWS_DELETED, Long.toString(stats.deleted()));
    summary.put(SnapshotSummaryKeys.STALE_DROPPED, Long.toString(stats.staleDropped()));
    summary.put(SnapshotSummaryKeys.DUPLICATES_DROPPED, Long.toString(stats.duplicatesDropped()));
    summary.put(SnapshotSummaryKeys.DEAD_LETTERED, Long.toString(stats.deadLettered()));
    SourceSequence position =
        positionNeverGoesBack
            ? atLeastTheTables(table, stats.lastSourcePosition(), base)
            : stats.lastSourcePosition();
    if (position != null) {
      summary.put(SnapshotSummaryKeys.SOURCE_POSITION, position.toString());
      if (recordsSourceSequence) {
        summary.put(SnapshotSummaryKeys.SOURCE_SEQUENCE, position.encode());
      }
    } else {
      // A checkpoint without changes (one that only compacts, say): the position stands.
      Map<String, String> previous = latestSummaryOfThisOperator(table, base, null);
      for (String key :
          recordsSourceSequence
              ? List.of(SnapshotSummaryKeys.SOURCE_POSITION, SnapshotSummaryKeys.SOURCE_SEQUENCE)
              : List.of(SnapshotSummaryKeys.SOURCE_POSITION)) {
        if (previous.containsKey(key)) {
          summary.put(key, previous.get(key));
        }
      }
    }
    return summary;
  }

  /**
   * The source position a snapshot records: that of its changes, but never before the one the table
   * already records (of the same kind), which a job started without state on the table passes by
   * when it drops older changes as stale, so that the position never goes back. A position made
   * void since (by an overwrite or delete that records none) counts only where a job this committer
   * answers for recorded it.
   */
  private SourceSequence atLeastTheTables(Table table, SourceSequence position, Snapshot base) {
    if (position == null || base == null) {
      return position;
    }
    boolean voided = false;
    for (Snapshot s : SnapshotUtil.ancestorsOf(base.snapshotId(), table::snapshot)) {
      String recorded = s.summary().get(SnapshotSummaryKeys.SOURCE_SEQUENCE);
      if (recorded == null) {
        voided |= RecordedPositions.voidedBy(s);
        continue;
      }
      if (voided && !ownJobs.contains(s.summary().get(SnapshotSummaryKeys.JOB_ID))) {
        // Made void since: a job that started without state did not start from there.
        return position;
      }
      try {
        SourceSequence before = SourceSequence.decode(recorded);
        // Of another kind or binlog name (another server): not to be ordered against.
        return before.kind() == position.kind()
                && java.util.Objects.equals(before.prefix(), position.prefix())
            ? position.max(before)
            : position;
      } catch (IllegalArgumentException e) {
        return position;
      }
    }
    return position;
  }

  /**
   * The summary of this operator's latest snapshot up to {@code base} that has {@code key} (any
   * key, where null), whose source position and offsets still hold for this commit; empty if there
   * is none. Those of a job this committer answers for (its own, or one it restored the state of)
   * hold: it read the source past them. Another job's hold only where this job started from them:
   * not past a snapshot that voids the table's position ({@link RecordedPositions#voidedBy}: a job
   * started without state after it reads the source from where its options say), nor where this job
   * ignores the table's position.
   */
  private Map<String, String> latestSummaryOfThisOperator(Table table, Snapshot base, String key) {
    if (base != null) {
      boolean voided = false;
      for (Snapshot s : SnapshotUtil.ancestorsOf(base.snapshotId(), table::snapshot)) {
        Map<String, String> summary = s.summary();
        if (operatorId.equals(summary.get(SnapshotSummaryKeys.OPERATOR_ID))
            && (key == null || summary.containsKey(key))) {
          boolean own = ownJobs.contains(summary.get(SnapshotSummaryKeys.JOB_ID));
          return own || (positionNeverGoesBack && !voided) ? summary : Map.of();
        }
        voided |= RecordedPositions.voidedBy(s);
      }
    }
    return Map.of();
  }
}
