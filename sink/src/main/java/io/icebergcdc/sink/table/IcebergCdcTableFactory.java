package io.icebergcdc.sink.table;

import io.icebergcdc.dedup.DedupOptions;
import io.icebergcdc.sink.CatalogDefinition;
import io.icebergcdc.sink.SinkOptions;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.ReadableConfig;
import org.apache.flink.table.catalog.ObjectIdentifier;
import org.apache.flink.table.connector.sink.DynamicTableSink;
import org.apache.flink.table.factories.DynamicTableSinkFactory;
import org.apache.flink.table.factories.FactoryUtil;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.flink.CatalogLoader;

/**
 * The {@code 'connector' = 'iceberg-cdc'} table sink: {@code INSERT INTO} such a table applies the
 * query's changelog to an Iceberg table through this project's sink (dedup by sequence, writers
 * with position deletes, one commit per checkpoint). Options are listed by {@link #requiredOptions}
 * and {@link #optionalOptions}; {@code catalog.*} keys go to the Iceberg catalog as they are.
 */
public final class IcebergCdcTableFactory implements DynamicTableSinkFactory {

  public static final String IDENTIFIER = "iceberg-cdc";

  static final ConfigOption<String> DATABASE =
      ConfigOptions.key("database-name")
          .stringType()
          .noDefaultValue()
          .withDescription("the Iceberg namespace; the Flink table's database by default");
  static final ConfigOption<String> TABLE =
      ConfigOptions.key("table-name")
          .stringType()
          .noDefaultValue()
          .withDescription("the Iceberg table; the Flink table's name by default");
  static final ConfigOption<String> SEQUENCE_FIELD =
      ConfigOptions.key("sequence.field")
          .stringType()
          .noDefaultValue()
          .withDescription(
              "an integer or timestamp column that orders the changes of a key; without it, order"
                  + " of arrival decides");
  static final ConfigOption<Integer> FORMAT_VERSION =
      ConfigOptions.key("format-version")
          .intType()
          .defaultValue(2)
          .withDescription("the format version of a table the sink creates");

  private static final String WRITE_PREFIX = "write.";

  static final ConfigOption<String> COMPRESSION =
      ConfigOptions.key("compression").stringType().noDefaultValue();
  static final ConfigOption<String> COMPRESSION_LEVEL =
      ConfigOptions.key("compression-level").stringType().noDefaultValue();
  static final ConfigOption<String> TARGET_FILE_SIZE =
      ConfigOptions.key("target-file-size-bytes").stringType().noDefaultValue();

  @Override
  public String factoryIdentifier() {
    return IDENTIFIER;
  }

  @Override
  public Set<ConfigOption<?>> requiredOptions() {
    return Set.of();
  }

  @Override
  public Set<ConfigOption<?>> optionalOptions() {
    Set<ConfigOption<?>> options = new LinkedHashSet<>();
    options.add(CatalogDefinition.CATALOG_TYPE);
    options.add(CatalogDefinition.CATALOG_IMPL);
    options.add(CatalogDefinition.CATALOG_NAME);
    options.add(CatalogDefinition.WAREHOUSE);
    options.add(CatalogDefinition.URI);
    options.add(DATABASE);
    options.add(TABLE);
    options.add(SEQUENCE_FIELD);
    options.add(FORMAT_VERSION);
    options.add(COMPRESSION);
    options.add(COMPRESSION_LEVEL);
    options.add(TARGET_FILE_SIZE);
    options.addAll(SinkOptions.all());
    return options;
  }

  @Override
  public DynamicTableSink createDynamicTableSink(Context context) {
    FactoryUtil.TableFactoryHelper helper = FactoryUtil.createTableFactoryHelper(this, context);
    helper.validateExcept(CatalogDefinition.PROPERTY_PREFIX, WRITE_PREFIX);
    ReadableConfig options = helper.getOptions();
    if (options.get(DedupOptions.ON_AMBIGUOUS_CHANGE)
        == io.icebergcdc.dedup.AmbiguousChangePolicy.DEAD_LETTER) {
      throw new IllegalArgumentException(
          "option '"
              + DedupOptions.ON_AMBIGUOUS_CHANGE.key()
              + "' = DEAD_LETTER needs a dead-letter output, which the SQL connector does not"
              + " have yet; leave it at FAIL");
    }
    ObjectIdentifier flinkName = context.getObjectIdentifier();
    TableIdentifier table =
        TableIdentifier.of(
            options.getOptional(DATABASE).orElse(flinkName.getDatabaseName()),
            options.getOptional(TABLE).orElse(flinkName.getObjectName()));
    Configuration sinkOptions = sinkOptions(options, table);
    // This write's own write properties: write.* keys and their aliases, from the WITH clause or
    // a hint, over the table's.
    Map<String, String> writeProperties = new HashMap<>();
    context
        .getCatalogTable()
        .getOptions()
        .forEach(
            (key, value) -> {
              if (isWriteProperty(key)) {
                writeProperties.put(key, value);
              }
            });
    return new IcebergCdcDynamicSink(
        catalogLoader(options, context.getCatalogTable().getOptions()),
        table,
        context.getCatalogTable().getResolvedSchema(),
        context.getCatalogTable().getPartitionKeys(),
        options.getOptional(SEQUENCE_FIELD).orElse(null),
        options.get(FORMAT_VERSION),
        sinkOptions,
        writeProperties);
  }

  /**
   * The sink and dedup options of a table's options, with a uid prefix of the table's own unless
   * one is given (several sinks of one statement set need uids of their own).
   */
  static Configuration sinkOptions(ReadableConfig options, TableIdentifier table) {
    Configuration sinkOptions = new Configuration();
    for (ConfigOption<?> option : SinkOptions.all()) {
      copy(options, sinkOptions, option);
    }
    if (!sinkOptions.contains(SinkOptions.UID_PREFIX)) {
      sinkOptions.set(SinkOptions.UID_PREFIX, "iceberg-cdc-" + table);
    }
    return sinkOptions;
  }

  /** Whether a table option is a write property of this write: a write.* key or an alias. */
  static boolean isWriteProperty(String key) {
    return key.startsWith(WRITE_PREFIX)
        || io.icebergcdc.sink.WriteProperties.ALIASES.containsKey(key);
  }

  private static <T> void copy(ReadableConfig from, Configuration to, ConfigOption<T> option) {
    from.getOptional(option).ifPresent(value -> to.set(option, value));
  }

  /** The Iceberg catalog the options describe, checked. */
  static CatalogLoader catalogLoader(ReadableConfig options, Map<String, String> all) {
    return catalog(options, all).loader();
  }

  static CatalogDefinition catalog(ReadableConfig options, Map<String, String> all) {
    CatalogDefinition.Builder catalog =
        CatalogDefinition.builder()
            .name(options.get(CatalogDefinition.CATALOG_NAME))
            .impl(options.getOptional(CatalogDefinition.CATALOG_IMPL).orElse(null))
            .uri(options.getOptional(CatalogDefinition.URI).orElse(null))
            .warehouse(options.getOptional(CatalogDefinition.WAREHOUSE).orElse(null));
    if (options.getOptional(CatalogDefinition.CATALOG_IMPL).isEmpty()) {
      catalog.type(options.get(CatalogDefinition.CATALOG_TYPE));
    }
    all.forEach(
        (key, value) -> {
          if (key.startsWith(CatalogDefinition.PROPERTY_PREFIX)) {
            catalog.property(key.substring(CatalogDefinition.PROPERTY_PREFIX.length()), value);
          }
        });
    try {
      return catalog.build();
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("table option: " + e.getMessage(), e);
    }
  }
}
