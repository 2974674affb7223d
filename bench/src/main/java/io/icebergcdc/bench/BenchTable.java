package io.icebergcdc.bench;

import java.io.IOException;
import java.util.List;

/** A table a benchmark wrote, as the benchmarks read and inspect it: Iceberg's or Paimon's. */
interface BenchTable {

  /**
   * Reads the whole table once with its format's reader and returns the seconds it took; fails
   * unless it holds the input's final rows, each checked against the input if {@code check}.
   */
  double read(Input input, boolean check) throws IOException;

  /** The table's commits, oldest first. */
  List<Commit> commits() throws IOException;

  /**
   * One commit (snapshot) of a table.
   *
   * @param checkpointId the Flink checkpoint it committed, or -1 if it names none
   * @param timeMillis when it was committed
   * @param dataFiles data files it added
   * @param deleteFiles delete files (and deletion vectors) it added
   */
  record Commit(long checkpointId, long timeMillis, long dataFiles, long deleteFiles) {}
}
