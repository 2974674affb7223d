package io.icebergcdc.cdc;

import org.apache.flink.runtime.throwable.ThrowableAnnotation;
import org.apache.flink.runtime.throwable.ThrowableType;

/**
 * A change event that cannot be applied: it does not parse, has an unknown operation, lacks its key
 * or sequence, or does not fit the table's schema. The message names the record.
 *
 * <p>Flink does not restart a job for it: a restart would meet the same change again.
 */
@ThrowableAnnotation(ThrowableType.NonRecoverableError)
public class MalformedChangeException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  public MalformedChangeException(String message) {
    super(message);
  }

  public MalformedChangeException(String message, Throwable cause) {
    super(message, cause);
  }
}
