package io.icebergcdc.capture;

import org.apache.flink.runtime.throwable.ThrowableAnnotation;
import org.apache.flink.runtime.throwable.ThrowableType;

/**
 * The source can no longer be read from the position a job resumes at: the changes since then are
 * gone. A restart from the same checkpoint meets the same loss, so Flink does not retry it.
 */
@ThrowableAnnotation(ThrowableType.NonRecoverableError)
public final class LostSourcePositionException extends IllegalStateException {

  private static final long serialVersionUID = 1L;

  public LostSourcePositionException(String message) {
    super(message);
  }
}
