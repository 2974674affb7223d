package io.icebergcdc.dedup.internal;

import io.icebergcdc.cdc.SourceSequence;
import java.util.Objects;

/**
 * What the dedup keeps per key: the sequence of the last change it applied, that change's
 * fingerprint (to tell a duplicate from a different change at the same sequence), and whether it
 * was a delete.
 */
final class AppliedChange {

  private final SourceSequence sequence;
  private final long fingerprint;
  private final boolean deleted;

  AppliedChange(SourceSequence sequence, long fingerprint, boolean deleted) {
    this.sequence = Objects.requireNonNull(sequence, "sequence");
    this.fingerprint = fingerprint;
    this.deleted = deleted;
  }

  SourceSequence sequence() {
    return sequence;
  }

  long fingerprint() {
    return fingerprint;
  }

  boolean deleted() {
    return deleted;
  }

  @Override
  public boolean equals(Object o) {
    if (!(o instanceof AppliedChange)) {
      return false;
    }
    AppliedChange that = (AppliedChange) o;
    return fingerprint == that.fingerprint
        && deleted == that.deleted
        && sequence.equals(that.sequence);
  }

  @Override
  public int hashCode() {
    return Objects.hash(sequence, fingerprint, deleted);
  }

  @Override
  public String toString() {
    return (deleted ? "deleted at " : "applied at ") + sequence;
  }
}
