package io.icebergcdc.sink.internal;

/**
 * The uids of the sink's operators, in one place: a uid that changes breaks the restore of
 * savepoints, so these are part of the compatibility contract.
 *
 * <p>The keyed operators' uids name what their state depends on: the distribution (which decides
 * how keys are hashed to key groups) and, for the writer, the delete mode (which decides whether it
 * keeps a key index). A job restored with another distribution or delete mode so finds no state for
 * them instead of state it would misread; Flink then refuses the savepoint unless told to ignore
 * the unmatched state.
 */
public final class OperatorUids {

  private final String prefix;
  private final String keying;
  private final String writer;

  public OperatorUids(
      String prefix,
      io.icebergcdc.sink.Distribution distribution,
      io.icebergcdc.sink.DeleteMode deleteMode) {
    this.prefix = prefix;
    this.keying = distribution == io.icebergcdc.sink.Distribution.PARTITION ? "-by-partition" : "";
    this.writer = deleteMode == io.icebergcdc.sink.DeleteMode.POSITION ? "-indexed" : "";
  }

  public String dedup() {
    return prefix + "-dedup" + keying;
  }

  public String writer() {
    return prefix + "-writer" + keying + writer;
  }

  /** The writer of rows to insert, which keeps no state. */
  public String appendWriter() {
    return prefix + "-append-writer";
  }

  public String committer() {
    return prefix + "-committer";
  }

  public String stats() {
    return prefix + "-stats";
  }
}
