package io.icebergcdc.commit.internal;

import io.icebergcdc.commit.SnapshotSummaryKeys;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.util.SnapshotUtil;

/**
 * The write ids a table's snapshots record: the recovery records of idempotent loads. Only the
 * snapshots the table still keeps are seen, so a write id is recognised as long as the snapshot
 * that published it is not expired.
 */
final class WriteIds {

  private WriteIds() {}

  /** The snapshot among the current one and its ancestors that published {@code writeId}. */
  static Snapshot publishedBy(Table table, String writeId) {
    if (table.currentSnapshot() == null) {
      return null;
    }
    for (Snapshot snapshot : SnapshotUtil.currentAncestors(table)) {
      if (writeId.equals(snapshot.summary().get(SnapshotSummaryKeys.WRITE_ID))) {
        return snapshot;
      }
    }
    return null;
  }
}
