package io.icebergcdc.cdc;

import java.util.List;
import org.apache.flink.runtime.throwable.ThrowableAnnotation;
import org.apache.flink.runtime.throwable.ThrowableType;
import org.apache.iceberg.Schema;

/**
 * A captured table's schema changed in the source (a column added, a type widened, a required
 * column dropped), and its change events no longer fit the schema the job was built with.
 *
 * <p>Where the source has a {@link SchemaEvolution} for the table (the tables of a key-indexed
 * writer, the one writer of a capture or Kafka job's tables or one of their own), the change is
 * followed while the job runs and this is not thrown. Where it has none (a table with equality
 * deletes, whose writer knows only the table's schema), the job ends instead, and Flink does not
 * restart it (a restart would meet the same event with the same schema): the command evolves the
 * Iceberg table and resumes from the job's latest checkpoint, which replays the event into the
 * evolved table.
 */
@ThrowableAnnotation(ThrowableType.NonRecoverableError)
public final class SourceSchemaChangedException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  private final String table;
  private final List<String> changes;
  private final Schema sourceSchema;

  /**
   * @param table the source table, as the job names it
   * @param changes what changed, one entry per column
   * @param sourceSchema the Iceberg schema of the event's row, by the documented mapping
   * @param locator the first event with the new schema, for the message
   */
  public SourceSchemaChangedException(
      String table, List<String> changes, Schema sourceSchema, String locator) {
    super(
        "the schema of source table "
            + table
            + " changed ("
            + String.join("; ", changes)
            + ") at "
            + locator
            + ". The job ends here; the capture command evolves the Iceberg table and resumes from"
            + " the latest checkpoint, or run it again with --restore-from latest");
    this.table = table;
    this.changes = List.copyOf(changes);
    this.sourceSchema = sourceSchema;
  }

  /** The source table whose schema changed. */
  public String table() {
    return table;
  }

  public List<String> changes() {
    return changes;
  }

  /** The event's row schema as Iceberg types; its identifier fields are the primary key. */
  public Schema sourceSchema() {
    return sourceSchema;
  }
}
