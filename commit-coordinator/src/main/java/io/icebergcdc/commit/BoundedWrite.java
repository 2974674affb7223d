package io.icebergcdc.commit;

import java.io.Serializable;

/**
 * What a bounded write, committed once at the end of its input (batch execution), says about itself
 * beyond its files.
 *
 * @param writeId the load's write id, or null: a load with a write id is published at most once,
 *     checked against the write ids that the table's snapshots record, so that a retry after an
 *     uncertain outcome commits nothing when the first attempt was published
 * @param statement the SQL statement the write carries out ({@code UPDATE}, {@code DELETE}), or
 *     null; recorded in the snapshot summary
 * @param readSnapshotId the snapshot the write's input was read from, or null: data or deletes that
 *     other writers commit after it fail the commit, since the write computed its rows from what it
 *     read (an {@code UPDATE} would otherwise undo a concurrent change of a row it rewrote)
 */
public record BoundedWrite(String writeId, String statement, Long readSnapshotId)
    implements Serializable {

  /** The table option that names a load's write id. */
  public static final String WRITE_ID_OPTION = "write-id";

  public static final BoundedWrite NONE = new BoundedWrite(null, null, null);

  public BoundedWrite {
    if (writeId != null && writeId.isBlank()) {
      throw new IllegalArgumentException("option '" + WRITE_ID_OPTION + "' must not be blank");
    }
  }

  public BoundedWrite withWriteId(String id) {
    return new BoundedWrite(id, statement, readSnapshotId);
  }

  public BoundedWrite withStatement(String kind, Long snapshotId) {
    return new BoundedWrite(writeId, kind, snapshotId);
  }

  public boolean isNone() {
    return writeId == null && statement == null && readSnapshotId == null;
  }
}
