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

  /**
   * The Iceberg table's schema of {@code table} as it is now, which a source evolved while the job
   * runs: what a snapshot's reader reads the table's rows into.
   */
  ChangeSchema current(String table);

  /**
   * The Iceberg table's schema of {@code table} whose id is {@code schemaId} ({@link
   * ChangeEvent#rowSchemaId()}): the current one or one it had before; null if it has none such.
   */
  default ChangeSchema schema(String table, int schemaId) {
    ChangeSchema current = current(table);
    return current.schema().schemaId() == schemaId ? current : null;
  }

  /**
   * Evolves the table for {@code change} through {@code evolution}, as a source does at the first
   * change of a new schema.
   *
   * @throws SourceSchemaChangedException {@code change} itself, if the table cannot follow it (a
   *     changed key, a type Iceberg cannot widen to): the job ends, as without an evolution
   * @throws SchemaEvolutionException if the evolution failed otherwise (the catalog, a commit): the
   *     job fails and Flink restarts it
   */
  static ChangeSchema follow(
      SchemaEvolution evolution,
      String table,
      SourceSchemaChangedException change,
      String locator) {
    try {
      return evolution.evolve(table, change.sourceSchema(), change.changes());
    } catch (IllegalArgumentException refused) {
      change.addSuppressed(refused);
      throw change;
    } catch (RuntimeException e) {
      throw new SchemaEvolutionException(
          "cannot evolve the Iceberg table of source table "
              + table
              + " for its schema change ("
              + String.join("; ", change.changes())
              + ") at "
              + locator
              + ": "
              + e.getMessage(),
          e);
    }
  }
}
