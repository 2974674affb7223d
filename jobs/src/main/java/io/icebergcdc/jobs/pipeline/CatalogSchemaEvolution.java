package io.icebergcdc.jobs.pipeline;

import io.icebergcdc.cdc.ChangeSchema;
import io.icebergcdc.cdc.SchemaEvolution;
import io.icebergcdc.sink.CatalogDefinition;
import io.icebergcdc.sink.CdcTables;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.flink.CatalogLoader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Evolves the Iceberg tables of a running job through its catalog ({@link CdcTables#evolve}, not
 * strict: a type the table cannot take is left to the conversion of each value, which fails the
 * change that does not fit).
 *
 * <p>The catalog is loaded for each change and closed after it: schema changes are rare, and a
 * source reader holds no catalog client between them.
 */
final class CatalogSchemaEvolution implements SchemaEvolution {

  private static final long serialVersionUID = 1L;
  private static final Logger LOG = LoggerFactory.getLogger(CatalogSchemaEvolution.class);

  /** Attempts at a schema update that another writer's commit got ahead of. */
  private static final int ATTEMPTS = 5;

  private final CatalogLoader catalog;
  private final Map<String, String> tables;

  /**
   * @param catalog the job's catalog
   * @param tables the Iceberg table of each source table, by the name the job's routes give it
   */
  CatalogSchemaEvolution(CatalogLoader catalog, Map<String, TableIdentifier> tables) {
    this.catalog = catalog;
    this.tables = new java.util.HashMap<>();
    tables.forEach((source, identifier) -> this.tables.put(source, identifier.toString()));
  }

  @Override
  public ChangeSchema current(String table) {
    Catalog loaded = catalog.loadCatalog();
    try {
      return new ChangeSchema(load(loaded, identifierOf(table)).schema());
    } finally {
      CatalogDefinition.close(loaded);
    }
  }

  @Override
  public ChangeSchema schema(String table, int schemaId) {
    Catalog loaded = catalog.loadCatalog();
    try {
      org.apache.iceberg.Schema schema = load(loaded, identifierOf(table)).schemas().get(schemaId);
      return schema == null ? null : new ChangeSchema(schema);
    } finally {
      CatalogDefinition.close(loaded);
    }
  }

  /** The job's table {@code identifier}; one the catalog no longer has ends the job. */
  private static Table load(Catalog loaded, String identifier) {
    return io.icebergcdc.commit.ReplacedTableException.unlessDropped(
        identifier, () -> loaded.loadTable(TableIdentifier.parse(identifier)));
  }

  private String identifierOf(String table) {
    String identifier = tables.get(table);
    if (identifier == null) {
      throw new IllegalStateException("the job writes no Iceberg table for source table " + table);
    }
    return identifier;
  }

  @Override
  public ChangeSchema evolve(String table, Schema sourceSchema, List<String> changes) {
    String identifier = identifierOf(table);
    Catalog loaded = catalog.loadCatalog();
    try {
      Table iceberg = load(loaded, identifier);
      for (int attempt = 1; ; attempt++) {
        try {
          List<String> done = CdcTables.evolve(iceberg, sourceSchema, false);
          iceberg.refresh();
          LOG.info(
              "Source table {} changed its schema ({}); Iceberg table {} {} while the job runs,"
                  + " now at schema {}",
              table,
              String.join("; ", changes),
              identifier,
              done.isEmpty() ? "had the change already" : "evolved: " + String.join("; ", done),
              iceberg.schema().schemaId());
          return new ChangeSchema(iceberg.schema());
        } catch (CommitFailedException e) {
          if (attempt >= ATTEMPTS) {
            throw e;
          }
          iceberg.refresh();
        }
      }
    } finally {
      CatalogDefinition.close(loaded);
    }
  }
}
