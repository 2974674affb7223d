package io.icebergcdc.capture;

import java.util.List;

/**
 * What a {@link DebeziumSource}'s enumerator keeps in checkpoints: the splits it holds (the log's
 * before reader 0 has it, chunks handed back by a failed reader), and how far each table's snapshot
 * has been split into chunks. A chunk handed out is in its reader's state until it is done.
 *
 * @param chunked whether the job snapshots in chunks; false for a job whose connector took the
 *     snapshot (and for state written before chunked snapshots), which never chunks, not even a
 *     table added later
 * @param unassigned the splits no reader has
 * @param tables each snapshotted table's progress; a table of the job that is not here has not been
 *     started (a table added to the job's tables since). Without chunks, each table the connector
 *     captured, as done, so that a restore finds those added since (none in a state of a build
 *     before this was recorded)
 */
public record CaptureEnumeratorState(
    boolean chunked, List<CaptureSplit> unassigned, List<TableProgress> tables) {

  public CaptureEnumeratorState {
    unassigned = List.copyOf(unassigned);
    tables = List.copyOf(tables);
  }

  /**
   * How far a table has been split into chunks.
   *
   * @param topic the table's topic
   * @param nextChunk the number the next chunk gets
   * @param nextLower the first key of the next chunk (empty: the table's start, or, once {@code
   *     done}, nothing)
   * @param done whether every chunk of the table has been handed out
   */
  public record TableProgress(String topic, long nextChunk, List<String> nextLower, boolean done) {
    public TableProgress {
      nextLower = List.copyOf(nextLower);
    }

    static TableProgress start(String topic) {
      return new TableProgress(topic, 0, List.of(), false);
    }
  }
}
