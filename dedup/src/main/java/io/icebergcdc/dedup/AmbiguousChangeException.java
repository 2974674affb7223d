package io.icebergcdc.dedup;

import org.apache.flink.runtime.throwable.ThrowableAnnotation;
import org.apache.flink.runtime.throwable.ThrowableType;

/**
 * Two different changes of one key carry the same source sequence, so neither can be said to be the
 * later one. Raised when {@link AmbiguousChangePolicy#FAIL} is in force.
 *
 * <p>Flink does not restart a job for it: a restart would meet the same change again.
 */
@ThrowableAnnotation(ThrowableType.NonRecoverableError)
public class AmbiguousChangeException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  public AmbiguousChangeException(String message) {
    super(message);
  }
}
