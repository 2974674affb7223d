package io.icebergcdc.cdc;

/**
 * The Iceberg table of a source table whose schema changed could not be evolved while the job runs
 * (the catalog out of reach, a commit that kept failing): the change is not applied, nor sent to
 * the dead-letter output, and the job fails. Flink restarts it from its last checkpoint, and the
 * source tries again when it meets the change again.
 */
public final class SchemaEvolutionException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  public SchemaEvolutionException(String message, Throwable cause) {
    super(message, cause);
  }
}
