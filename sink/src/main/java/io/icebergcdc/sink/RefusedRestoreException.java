package io.icebergcdc.sink;

import org.apache.flink.runtime.throwable.ThrowableAnnotation;
import org.apache.flink.runtime.throwable.ThrowableType;

/**
 * A restored state that a writer cannot read as this job is built (a table's keys hashed otherwise
 * over the writers than the state's were): the job ends, and Flink does not restart it, since a
 * restart restores the same state; the message names the table and what to change.
 */
@ThrowableAnnotation(ThrowableType.NonRecoverableError)
public final class RefusedRestoreException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  public RefusedRestoreException(String message) {
    super(message);
  }
}
