package io.icebergcdc.sink.internal;

/**
 * The uids of the sink's operators, in one place: a uid that changes breaks the restore of
 * savepoints, so these are part of the compatibility contract.
 *
 * <p>The keyed operators' uids name what their state depends on: the distribution (which decides
 * how keys are hashed to key groups). A job restored with another distribution so finds no state
 * for them instead of state it would misread; Flink then refuses the savepoint unless told to
 * ignore the unmatched state. The dedup and writer of a changelog are one operator in either delete
 * mode (equality deletes had a dedup and a writer of their own, {@code -dedup} and {@code -writer},
 * before 2026-12-06); an overwrite has a dedup before its append writer.
 */
public final class OperatorUids {

  private final String prefix;
  private final String keying;

  public OperatorUids(String prefix, io.icebergcdc.sink.Distribution distribution) {
    this.prefix = prefix;
    this.keying = distribution == io.icebergcdc.sink.Distribution.PARTITION ? "-by-partition" : "";
  }

  public String dedup() {
    return prefix + "-dedup" + keying;
  }

  /** The dedup and writer of a changelog in one operator, deleting by position or by key. */
  public String indexedWriter() {
    return prefix + "-indexed-writer" + keying;
  }

  /** The writer of rows to insert, which keeps no state. */
  public String appendWriter() {
    return prefix + "-append-writer";
  }

  public String committer() {
    return prefix + "-committer";
  }

  /** The tagging of the contributions with their table, for a committer of several tables. */
  public String committedAs() {
    return prefix + "-committed-as";
  }

  public String stats() {
    return prefix + "-stats";
  }

  /** The count of the records the parser before the sink sent to the dead-letter output. */
  public String upstreamDeadLetters() {
    return prefix + "-upstream-dead-letters";
  }
}
