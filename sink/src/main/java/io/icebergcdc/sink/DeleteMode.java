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
   * By key, as Iceberg's own upsert does: every upsert and delete writes an equality delete on the
   * primary key. No index state, but every reader joins the deletes against the data.
   */
  EQUALITY
}
