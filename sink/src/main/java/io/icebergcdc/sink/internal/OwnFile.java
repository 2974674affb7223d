package io.icebergcdc.sink.internal;

import java.util.BitSet;

/**
 * An own data file as the writer tracks it: how many of its rows this subtask has deleted, and
 * which (those since the subtask started; those before are in the table's deletes).
 */
final class OwnFile {
  /** The file as recorded when it was written or restored. */
  private final OwnDataFile recorded;

  private long deleted;
  private final BitSet deletedHere = new BitSet();

  /** When the subtask wrote it, by {@link System#nanoTime()}; meaningless if {@link #restored}. */
  private final long writtenAt;

  /** Whether the file was restored from state, written a while ago. */
  private final boolean restored;

  /**
   * The first checkpoint known complete that carries the file (its own, or a later one where its
   * own was aborted or subsumed); -1 while none is.
   */
  private long confirmed = -1;

  /** A file restored from state, written a while ago. */
  OwnFile(OwnDataFile recorded) {
    this(recorded, 0, true);
  }

  /** A file the subtask has just written, at {@code writtenAt} by {@link System#nanoTime()}. */
  OwnFile(OwnDataFile recorded, long writtenAt) {
    this(recorded, writtenAt, false);
  }

  private OwnFile(OwnDataFile recorded, long writtenAt, boolean restored) {
    this.recorded = recorded;
    this.deleted = recorded.deleted();
    this.writtenAt = writtenAt;
    this.restored = restored;
  }

  /** Whether the file was written at least {@code nanos} before {@code now} (or restored). */
  boolean writtenBefore(long now, long nanos) {
    return restored || now - writtenAt >= nanos;
  }

  String file() {
    return recorded.file();
  }

  long rows() {
    return recorded.rows();
  }

  /** Records {@code checkpointId}, known complete, as the file's if none was before. */
  void confirm(long checkpointId) {
    if (confirmed < 0) {
      confirmed = checkpointId;
    }
  }

  /**
   * Whether the file's commit was done by the time checkpoint {@code completed} was known complete:
   * it was carried by a checkpoint three or more before (the committer commits a checkpoint as the
   * writers hear of it), so a table read then that lacks it no longer has it.
   */
  boolean committedBy(long completed) {
    return confirmed >= 0 && confirmed < completed - 2;
  }

  long checkpoint() {
    return recorded.checkpoint();
  }

  long deleted() {
    return deleted;
  }

  void deleted(long position) {
    deleted++;
    if (position <= Integer.MAX_VALUE) {
      deletedHere.set((int) position);
    }
  }

  boolean deletedHere(long position) {
    return position <= Integer.MAX_VALUE && deletedHere.get((int) position);
  }

  OwnDataFile state() {
    return recorded.withDeleted(deleted);
  }
}
