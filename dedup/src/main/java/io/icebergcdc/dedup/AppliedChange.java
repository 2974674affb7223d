package io.icebergcdc.dedup;

import io.icebergcdc.cdc.SourceSequence;
import java.util.Objects;

/**
 * What is kept per key: the sequence of the last change applied, that change's fingerprint (to tell
 * a duplicate from a different change at the same sequence), whether it was a delete, and, where a
 * writer keeps a key index, the data file and position of the key's live row.
 *
 * <p>A key loaded from the table (the index's bootstrap) has a location but no sequence: no change
 * of this job has touched it, so any change of it is newer.
 */
public final class AppliedChange {

  private final SourceSequence sequence;
  private final long fingerprint;
  private final boolean deleted;
  private final String file;
  private final long position;

  public AppliedChange(SourceSequence sequence, long fingerprint, boolean deleted) {
    this(Objects.requireNonNull(sequence, "sequence"), fingerprint, deleted, null, 0);
  }

  /** As read back by the serializer. */
  public static AppliedChange of(
      SourceSequence sequence, long fingerprint, boolean deleted, String file, long position) {
    return new AppliedChange(sequence, fingerprint, deleted, file, position);
  }

  private AppliedChange(
      SourceSequence sequence, long fingerprint, boolean deleted, String file, long position) {
    this.sequence = sequence;
    this.fingerprint = fingerprint;
    this.deleted = deleted;
    this.file = file;
    this.position = position;
  }

  /** A live row applied at {@code sequence}, at {@code position} of {@code file} if not null. */
  public static AppliedChange live(
      SourceSequence sequence, long fingerprint, String file, long position) {
    return new AppliedChange(
        Objects.requireNonNull(sequence, "sequence"), fingerprint, false, file, position);
  }

  /** A row found in the table, at {@code position} of {@code file}, before any change of it. */
  public static AppliedChange loaded(String file, long position) {
    return new AppliedChange(null, 0, false, Objects.requireNonNull(file, "file"), position);
  }

  /** The sequence of the last change applied; null for a row loaded from the table. */
  public SourceSequence sequence() {
    return sequence;
  }

  public long fingerprint() {
    return fingerprint;
  }

  public boolean deleted() {
    return deleted;
  }

  /** The data file of the key's live row, as the writer stores it; null where not known. */
  public String file() {
    return file;
  }

  /** The position of the key's live row in {@link #file()}. */
  public long position() {
    return position;
  }

  @Override
  public boolean equals(Object o) {
    if (!(o instanceof AppliedChange)) {
      return false;
    }
    AppliedChange that = (AppliedChange) o;
    return fingerprint == that.fingerprint
        && deleted == that.deleted
        && position == that.position
        && Objects.equals(sequence, that.sequence)
        && Objects.equals(file, that.file);
  }

  @Override
  public int hashCode() {
    return Objects.hash(sequence, fingerprint, deleted, file, position);
  }

  @Override
  public String toString() {
    return (deleted ? "deleted at " : sequence == null ? "loaded" : "applied at ")
        + (sequence == null ? "" : sequence)
        + (file == null ? "" : ", row " + file + "@" + position);
  }
}
