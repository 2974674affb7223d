package io.icebergcdc.commit.internal;

import org.apache.flink.runtime.throwable.ThrowableAnnotation;
import org.apache.flink.runtime.throwable.ThrowableType;

/**
 * A commit the committer refuses, such as an overwrite whose input has no rows: nothing was
 * committed, and a restart would meet the same input, so Flink does not retry it.
 */
@ThrowableAnnotation(ThrowableType.NonRecoverableError)
public final class RefusedCommitException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  RefusedCommitException(String message) {
    super(message);
  }
}
