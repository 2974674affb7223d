package io.icebergcdc.dedup;

/**
 * What the dedup does with two different changes of one key at the same source sequence, where no
 * order between them exists.
 */
public enum AmbiguousChangePolicy {
  /** Fail the job with an error naming the table, key and sequence. */
  FAIL,
  /** Keep the change applied first, and send the other to the dead-letter output. */
  DEAD_LETTER
}
