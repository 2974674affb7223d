package io.icebergcdc.sink.table;

import io.icebergcdc.sink.CatalogDefinition;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.table.catalog.Catalog;
import org.apache.flink.table.factories.CatalogFactory;
import org.apache.flink.table.factories.FactoryUtil;

/**
 * {@code CREATE CATALOG lake WITH ('type' = 'iceberg-cdc', ...)}: an {@link IcebergCdcCatalog} over
 * the Iceberg catalog its options describe, with the connector's option names ({@code
 * catalog-type}, {@code catalog-impl}, {@code uri}, {@code warehouse}, {@code catalog.<key>}).
 */
public final class IcebergCdcCatalogFactory implements CatalogFactory {

  static final ConfigOption<String> DEFAULT_DATABASE =
      ConfigOptions.key("default-database")
          .stringType()
          .defaultValue("default")
          .withDescription("The database (Iceberg namespace) the catalog starts in.");

  @Override
  public String factoryIdentifier() {
    return IcebergCdcTableFactory.IDENTIFIER;
  }

  @Override
  public Set<ConfigOption<?>> requiredOptions() {
    return Set.of();
  }

  @Override
  public Set<ConfigOption<?>> optionalOptions() {
    Set<ConfigOption<?>> options = new HashSet<>();
    options.add(CatalogDefinition.CATALOG_TYPE);
    options.add(CatalogDefinition.CATALOG_IMPL);
    options.add(CatalogDefinition.URI);
    options.add(CatalogDefinition.WAREHOUSE);
    options.add(CatalogDefinition.PROPERTIES_FILE);
    options.add(DEFAULT_DATABASE);
    return options;
  }

  @Override
  public Catalog createCatalog(Context context) {
    FactoryUtil.CatalogFactoryHelper helper = FactoryUtil.createCatalogFactoryHelper(this, context);
    helper.validateExcept(CatalogDefinition.PROPERTY_PREFIX);
    Map<String, String> options = context.getOptions();
    Configuration config = Configuration.fromMap(options);
    if (!config.contains(CatalogDefinition.CATALOG_NAME)) {
      config.set(CatalogDefinition.CATALOG_NAME, context.getName());
    }
    CatalogDefinition definition = IcebergCdcTableFactory.catalog(config, options);
    return ContextClassLoader.ofThisJar(
        () ->
            new IcebergCdcCatalog(
                context.getName(), config.get(DEFAULT_DATABASE), definition, options));
  }
}
