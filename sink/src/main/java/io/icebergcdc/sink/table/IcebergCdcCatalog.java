package io.icebergcdc.sink.table;

import io.icebergcdc.sink.CatalogDefinition;
import java.util.Map;
import java.util.Optional;
import org.apache.flink.table.factories.Factory;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.flink.FlinkCatalog;

/**
 * A Flink catalog over any Iceberg catalog ({@code CREATE CATALOG lake WITH ('type' =
 * 'iceberg-cdc', 'catalog-type' = 'rest', ...)}): Iceberg's {@link FlinkCatalog} (namespaces as
 * databases; {@code CREATE TABLE}, {@code ALTER TABLE ... SET}, {@code DROP TABLE} on Iceberg
 * tables, the primary key as identifier fields), whose tables need no DDL of their own, are written
 * through this project's sink (dedup, key index, one commit per checkpoint) and read through
 * Iceberg's Flink source ({@link IcebergCdcCatalogTableFactory}).
 */
final class IcebergCdcCatalog extends FlinkCatalog {

  private final CatalogDefinition definition;

  IcebergCdcCatalog(
      String name,
      String defaultDatabase,
      CatalogDefinition definition,
      Map<String, String> options) {
    super(name, defaultDatabase, Namespace.empty(), definition.loader(), options, false, -1);
    this.definition = definition;
  }

  @Override
  public Optional<Factory> getFactory() {
    return Optional.of(new IcebergCdcCatalogTableFactory(this, definition));
  }
}
