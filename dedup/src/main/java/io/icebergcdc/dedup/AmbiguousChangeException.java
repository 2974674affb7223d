package io.icebergcdc.dedup;

/**
 * Two different changes of one key carry the same source sequence, so neither can be said to be the
 * later one. Raised when {@link AmbiguousChangePolicy#FAIL} is in force.
 */
public class AmbiguousChangeException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  public AmbiguousChangeException(String message) {
    super(message);
  }
}
