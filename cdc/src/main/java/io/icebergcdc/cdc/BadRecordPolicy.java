package io.icebergcdc.cdc;

/** What a source does with a record it cannot turn into a change. */
public enum BadRecordPolicy {
  /** Fail the job with an error naming the record. */
  FAIL,
  /** Send the record, with the reason, to the dead-letter output, and count it. */
  DEAD_LETTER
}
