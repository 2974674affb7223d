package io.icebergcdc.commit;

import java.util.Map;
import org.apache.iceberg.DataOperations;
import org.apache.iceberg.Snapshot;

/**
 * The one rule by which a table's snapshots void the source positions recorded before them ({@link
 * SnapshotSummaryKeys#SOURCE_SEQUENCE}, {@link SnapshotSummaryKeys#KAFKA_OFFSETS}): what a job that
 * starts without state reads, and what a committer carries forward into its commits, so that the
 * two never disagree.
 */
public final class RecordedPositions {

  private RecordedPositions() {}

  /**
   * Whether {@code snapshot} makes the positions recorded before it void: an overwrite or delete
   * that records none of its own (an {@code INSERT OVERWRITE}, a {@code DELETE}, another engine's
   * commit) may have removed rows that those positions say the table holds. Appends, and overwrites
   * of a writer that records a position, leave them standing.
   */
  public static boolean voidedBy(Snapshot snapshot) {
    String operation = snapshot.operation();
    Map<String, String> summary = snapshot.summary();
    return (DataOperations.OVERWRITE.equals(operation) || DataOperations.DELETE.equals(operation))
        && !summary.containsKey(SnapshotSummaryKeys.SOURCE_SEQUENCE)
        && !summary.containsKey(SnapshotSummaryKeys.KAFKA_OFFSETS);
  }
}
