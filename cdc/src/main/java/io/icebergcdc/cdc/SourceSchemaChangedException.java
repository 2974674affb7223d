package io.icebergcdc.cdc;

import java.util.List;
import org.apache.flink.runtime.throwable.ThrowableAnnotation;
import org.apache.flink.runtime.throwable.ThrowableType;
import org.apache.iceberg.Schema;

/**
 * A captured table's schema changed in the source, and its change events no longer fit the schema
 * the job was built with.
 *
 * <p>Where the source has a {@link SchemaEvolution} for the table (every table of a changelog the
 * job writes), a change the Iceberg table can follow (a column added, a type widened, a required
 * column dropped) is followed while the job runs, and this is thrown only for one it cannot (a
 * changed primary key, a type Iceberg cannot widen to). Where it has none, any change ends the job.
 * Flink does not restart it either way: a restart would meet the same event with the same schema.
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
            + ", which its Iceberg table cannot follow. The job ends here: a changed primary key, or a"
            + " type Iceberg cannot widen to, needs a new Iceberg table");
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
