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

  /**
   * The failure of the change at {@code locator} that {@code e} ended: {@code e} itself where it is
   * already a change's failure (this, or a schema change the table cannot follow or could not be
   * made to follow), else this naming the locator and {@code e}'s message.
   */
  public static RuntimeException of(RuntimeException e, String locator) {
    if (e instanceof MalformedChangeException
        || e instanceof SourceSchemaChangedException
        || e instanceof SchemaEvolutionException) {
      return e;
    }
    return new MalformedChangeException(locator + ": " + e.getMessage(), e);
  }
}
