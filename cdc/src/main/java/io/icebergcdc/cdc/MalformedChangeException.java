package io.icebergcdc.cdc;

/**
 * A change event that cannot be applied: it does not parse, has an unknown operation, lacks its key
 * or sequence, or does not fit the table's schema. The message names the record.
 */
public class MalformedChangeException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  public MalformedChangeException(String message) {
    super(message);
  }

  public MalformedChangeException(String message, Throwable cause) {
    super(message, cause);
  }
}
