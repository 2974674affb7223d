package io.icebergcdc.cdc;

import java.io.Serializable;
import java.util.List;
import org.apache.iceberg.Schema;

/**
 * Evolves a table that a running job writes to its source's new schema, so that the job follows the
 * change without ending ({@link SourceSchemaChangedException} is what a job without one meets).
 *
 * <p>A source calls it at the first change of a new schema, before it passes on any change of that
 * schema: the Iceberg table then has every column the source's rows hold before a writer sees one.
 * The changes of the evolved schema carry its id ({@link ChangeEvent#rowSchemaId()}). Evolving is
 * idempotent: a source that meets the same change again (a restart from a checkpoint before it, or
 * another reader of the same table) gets the table's schema as it is.
 */
public interface SchemaEvolution extends Serializable {

  /**
   * Evolves the Iceberg table of {@code table} to {@code sourceSchema}, as the job would at its
   * start; returns the table's schema after it.
   *
   * @param table the source table, as the job names it in its routes
   * @param sourceSchema the Iceberg schema of the source's new rows, by the documented mapping
   * @param changes what changed, for the log
   * @throws RuntimeException if the table cannot follow (an incompatible type, a changed key)
   */
  ChangeSchema evolve(String table, Schema sourceSchema, List<String> changes);
}
