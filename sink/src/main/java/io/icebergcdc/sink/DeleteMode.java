package io.icebergcdc.sink;

/** How the sink expresses updates and deletes of existing rows. */
public enum DeleteMode {
  /**
   * By position: a key index in Flink state knows the data file and row of every live key, so an
   * update or delete becomes a position delete (format version 2) or a deletion vector (format
   * version 3), and an insert of a new key needs no delete at all. Tables read like plain ones.
   * Costs state per key (the data file's location and the row position).
   */
  POSITION,
  /**
   * By key, as Iceberg's own upsert does: an upsert or delete of a key that may have a row writes
   * an equality delete on the primary key (a row written for a checkpoint not yet known complete is
   * deleted by position). No row locations in the state, but every reader joins the deletes against
   * the data.
   */
  EQUALITY
}
