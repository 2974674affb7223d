package io.icebergcdc.jobs.pipeline;

import io.icebergcdc.jobs.definition.JobDefinitionException;
import io.icebergcdc.sink.CatalogDefinition;
import io.icebergcdc.sink.CdcTables;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.io.OutputFile;
import org.apache.iceberg.io.PositionOutputStream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The tables of a job made ready before it starts, all or nothing: namespaces a catalog needs
 * (REST, JDBC, Hive) are created with their tables; then every table's location is tried with a
 * small file written and deleted through the table's file IO, so that a missing bucket or refused
 * storage credentials are found before the job runs. If any of it fails, what this preparation
 * created is dropped again and the failure names the catalog and the table.
 */
final class TablePreparation {

  private static final Logger LOG = LoggerFactory.getLogger(TablePreparation.class);

  private final Catalog catalog;
  private final CatalogDefinition definition;
  private final List<Namespace> createdNamespaces = new ArrayList<>();
  private final List<TableIdentifier> createdTables = new ArrayList<>();

  TablePreparation(Catalog catalog, CatalogDefinition definition) {
    this.catalog = catalog;
    this.definition = definition;
  }

  Catalog catalog() {
    return catalog;
  }

  /**
   * {@link CdcTables#createOrLoad}, creating the namespace first where the catalog needs it; a
   * failure of the catalog or its storage is told naming both.
   */
  Table createOrLoad(
      TableIdentifier identifier,
      Schema schema,
      String partitionBy,
      int formatVersion,
      List<String> primaryKey) {
    try {
      return createOrLoadTable(identifier, schema, partitionBy, formatVersion, primaryKey);
    } catch (JobDefinitionException e) {
      throw e;
    } catch (IllegalArgumentException e) {
      if (e.getCause() != null) {
        // A failure that arrives as one (Hadoop's unknown host): the catalog's, not the job's.
        throw catalogFailure(identifier, e);
      }
      // What the definition asks does not fit the table (another primary key, say): an argument
      // error, whose own message says so.
      throw new JobDefinitionException(e.getMessage(), e);
    } catch (RuntimeException e) {
      throw catalogFailure(identifier, e);
    }
  }

  /** A failure of the catalog or its storage, told naming both. */
  private IllegalArgumentException catalogFailure(TableIdentifier identifier, RuntimeException e) {
    return new IllegalArgumentException(
        "catalog "
            + definition.describe()
            + ": cannot create or load table "
            + identifier
            + ": "
            + CatalogDefinition.rootCause(e),
        e);
  }

  private Table createOrLoadTable(
      TableIdentifier identifier,
      Schema schema,
      String partitionBy,
      int formatVersion,
      List<String> primaryKey) {
    if (!catalog.tableExists(identifier)) {
      createNamespace(identifier.namespace());
      Table table =
          CdcTables.createOrLoad(
              catalog, identifier, schema, partitionBy, formatVersion, primaryKey);
      createdTables.add(identifier);
      return table;
    }
    return CdcTables.createOrLoad(
        catalog, identifier, schema, partitionBy, formatVersion, primaryKey);
  }

  private void createNamespace(Namespace namespace) {
    if (namespace.isEmpty() || !(catalog instanceof SupportsNamespaces namespaces)) {
      return;
    }
    for (int depth = 1; depth <= namespace.length(); depth++) {
      String[] levels = new String[depth];
      System.arraycopy(namespace.levels(), 0, levels, 0, depth);
      Namespace level = Namespace.of(levels);
      if (!namespaces.namespaceExists(level)) {
        namespaces.createNamespace(level);
        createdNamespaces.add(level);
      }
    }
  }

  /** Writes and deletes a small file in each table's location, through the table's file IO. */
  void probeStorage(List<TableTarget> targets) {
    for (TableTarget target : targets) {
      Table table = catalog.loadTable(target.table());
      String path = table.location() + "/metadata/.iceberg-cdc-probe-" + UUID.randomUUID();
      try {
        OutputFile file = table.io().newOutputFile(path);
        try (PositionOutputStream out = file.createOrOverwrite()) {
          out.write("probe".getBytes(StandardCharsets.UTF_8));
        }
        table.io().deleteFile(path);
      } catch (Exception e) {
        throw new IllegalArgumentException(
            "catalog "
                + definition.describe()
                + ": cannot write to the location of table "
                + target.table()
                + " ("
                + table.location()
                + "): "
                + CatalogDefinition.rootCause(e),
            e);
      }
    }
  }

  /** Drops what this preparation created, newest first; a failure to drop is logged. */
  void rollback() {
    for (int i = createdTables.size() - 1; i >= 0; i--) {
      try {
        catalog.dropTable(createdTables.get(i), true);
      } catch (RuntimeException e) {
        LOG.warn("Could not drop table {} created by the failed start", createdTables.get(i), e);
      }
    }
    for (int i = createdNamespaces.size() - 1; i >= 0; i--) {
      try {
        ((SupportsNamespaces) catalog).dropNamespace(createdNamespaces.get(i));
      } catch (RuntimeException e) {
        LOG.warn(
            "Could not drop namespace {} created by the failed start", createdNamespaces.get(i), e);
      }
    }
  }
}
