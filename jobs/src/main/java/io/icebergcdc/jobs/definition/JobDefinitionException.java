package io.icebergcdc.jobs.definition;

/**
 * A job definition that does not fit what it meets, found before the job changes anything: a table
 * that exists with another partition spec or format version than the definition asks for, a
 * distribution by partition for an unpartitioned table. The command line reports it as an argument
 * error.
 */
public final class JobDefinitionException extends IllegalArgumentException {
  private static final long serialVersionUID = 1L;

  public JobDefinitionException(String message) {
    super(message);
  }

  public JobDefinitionException(String message, Throwable cause) {
    super(message, cause);
  }
}
