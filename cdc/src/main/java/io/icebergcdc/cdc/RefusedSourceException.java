package io.icebergcdc.cdc;

import org.apache.flink.runtime.throwable.ThrowableAnnotation;
import org.apache.flink.runtime.throwable.ThrowableType;

/**
 * A source that appeared while the job runs and that the job cannot write as it is: its table does
 * not fit the job's definition, or is one that another of the job's sources writes. The job ends,
 * and Flink does not restart it (a restart would meet the same source again); the message says what
 * to change.
 */
@ThrowableAnnotation(ThrowableType.NonRecoverableError)
public final class RefusedSourceException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  public RefusedSourceException(String message) {
    super(message);
  }

  public RefusedSourceException(String message, Throwable cause) {
    super(message, cause);
  }
}
