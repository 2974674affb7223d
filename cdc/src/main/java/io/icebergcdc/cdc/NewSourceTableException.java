package io.icebergcdc.cdc;

import org.apache.flink.runtime.throwable.ThrowableAnnotation;
import org.apache.flink.runtime.throwable.ThrowableType;

/**
 * A change of a source that the job's table list or topic pattern matches, but that the job has no
 * table for: the table or topic appeared after the job was built.
 *
 * <p>A job whose operators cannot take a table they were not built with (all but the Kafka job of
 * Debezium JSON into the shared writer, which takes new topics in flight) ends instead, and Flink
 * does not restart it (a restart would meet the same change again): the apply command builds the
 * job again, which creates the table's Iceberg table, and resumes from the job's latest checkpoint,
 * from which the new source is read from its start.
 */
@ThrowableAnnotation(ThrowableType.NonRecoverableError)
public final class NewSourceTableException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  private final String source;

  /**
   * @param source the new table or topic, as the job names its sources
   * @param locator where the job met it (its first change, or the source's list of tables), for the
   *     message
   */
  public NewSourceTableException(String source, String locator) {
    super(
        "source "
            + source
            + " appeared while the job runs (seen at "
            + locator
            + "). The job ends here; the apply command builds it again with a table for it and"
            + " resumes from the latest checkpoint, or run it again with --restore-from latest"
            + " (and the job's --checkpoint-dir)");
    this.source = source;
  }

  /** The new table or topic. */
  public String source() {
    return source;
  }
}
