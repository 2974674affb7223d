package io.icebergcdc.sink;

/** How changes are spread over the writer subtasks. Every change of one key reaches one writer. */
public enum Distribution {
  /**
   * Hash by primary key: even load whatever the partitioning, and the dedup and the writer run
   * chained in one task with no shuffle between them. Each writer writes to every partition.
   */
  PRIMARY_KEY,
  /**
   * Hash by partition: each partition is written by one subtask, so fewer, larger files; load
   * follows the partitions' sizes. Needs a partitioned table whose partition columns are part of
   * the primary key.
   */
  PARTITION
}
