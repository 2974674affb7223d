package io.icebergcdc.sink.table;

import io.icebergcdc.commit.BoundedWrite;
import io.icebergcdc.commit.Overwrite;
import io.icebergcdc.dedup.DedupOptions;
import io.icebergcdc.sink.CatalogDefinition;
import io.icebergcdc.sink.SinkOptions;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.ReadableConfig;
import org.apache.flink.table.catalog.ObjectIdentifier;
import org.apache.flink.table.connector.sink.DynamicTableSink;
import org.apache.flink.table.connector.source.DynamicTableSource;
import org.apache.flink.table.factories.DynamicTableSinkFactory;
import org.apache.flink.table.factories.DynamicTableSourceFactory;
import org.apache.flink.table.factories.FactoryUtil;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.flink.CatalogLoader;
import org.apache.iceberg.flink.FlinkReadOptions;
import org.apache.iceberg.flink.TableLoader;

/**
 * The {@code 'connector' = 'iceberg-cdc'} table: {@code INSERT INTO} such a table applies the
 * query's changelog to an Iceberg table through this project's sink (dedup by sequence, writers
 * with position deletes, one commit per checkpoint), {@code UPDATE} and {@code DELETE} in batch
 * execution change its rows, and {@code SELECT} reads it through Iceberg's Flink source. Options
 * are listed by {@link #requiredOptions} and {@link #optionalOptions}; {@code catalog.*} keys go to
 * the Iceberg catalog as they are.
 */
public final class IcebergCdcTableFactory
    implements DynamicTableSinkFactory, DynamicTableSourceFactory {

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

  static final ConfigOption<String> WRITE_ID =
      ConfigOptions.key(BoundedWrite.WRITE_ID_OPTION)
          .stringType()
          .noDefaultValue()
          .withDescription(
              "the id of a load in batch execution: a load whose write id a snapshot of the table"
                  + " records is not published again");

  static final ConfigOption<String> OVERWRITE_FILTER =
      ConfigOptions.key(Overwrite.FILTER_OPTION)
          .stringType()
          .noDefaultValue()
          .withDescription(
              "for INSERT OVERWRITE: the rows it replaces, as a SQL boolean expression over the"
                  + " table's columns, whether or not the input has rows there; every input row"
                  + " must match it");

  /** Iceberg's read options, for the table's source: its reads are Iceberg's own. */
  static final List<ConfigOption<?>> READ_OPTIONS =
      List.of(
          FlinkReadOptions.SNAPSHOT_ID,
          FlinkReadOptions.TAG,
          FlinkReadOptions.BRANCH,
          FlinkReadOptions.START_TAG,
          FlinkReadOptions.END_TAG,
          FlinkReadOptions.CASE_SENSITIVE_OPTION,
          FlinkReadOptions.AS_OF_TIMESTAMP,
          FlinkReadOptions.STARTING_STRATEGY_OPTION,
          FlinkReadOptions.START_SNAPSHOT_TIMESTAMP,
          FlinkReadOptions.START_SNAPSHOT_ID,
          FlinkReadOptions.END_SNAPSHOT_ID,
          FlinkReadOptions.SPLIT_SIZE_OPTION,
          FlinkReadOptions.SPLIT_LOOKBACK_OPTION,
          FlinkReadOptions.SPLIT_FILE_OPEN_COST_OPTION,
          FlinkReadOptions.STREAMING_OPTION,
          FlinkReadOptions.MONITOR_INTERVAL_OPTION,
          FlinkReadOptions.INCLUDE_COLUMN_STATS_OPTION,
          FlinkReadOptions.MAX_PLANNING_SNAPSHOT_COUNT_OPTION,
          FlinkReadOptions.LIMIT_OPTION,
          FlinkReadOptions.MAX_ALLOWED_PLANNING_FAILURES_OPTION,
          FlinkReadOptions.WATERMARK_COLUMN_OPTION,
          FlinkReadOptions.WATERMARK_COLUMN_TIME_UNIT_OPTION);

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
    options.add(CatalogDefinition.PROPERTIES_FILE);
    options.add(DATABASE);
    options.add(TABLE);
    options.add(SEQUENCE_FIELD);
    options.add(FORMAT_VERSION);
    options.add(COMPRESSION);
    options.add(COMPRESSION_LEVEL);
    options.add(TARGET_FILE_SIZE);
    options.add(WRITE_ID);
    options.add(OVERWRITE_FILTER);
    options.addAll(SinkOptions.all());
    options.addAll(READ_OPTIONS);
    return options;
  }

  @Override
  public DynamicTableSink createDynamicTableSink(Context context) {
    FactoryUtil.TableFactoryHelper helper = FactoryUtil.createTableFactoryHelper(this, context);
    helper.validateExcept(CatalogDefinition.PROPERTY_PREFIX, WRITE_PREFIX);
    ReadableConfig options = helper.getOptions();
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
   * The table's source: Iceberg's own Flink source of the Iceberg table, batch or (with {@code
   * 'streaming' = 'true'}) streaming incremental reads, so that {@code SELECT} works and so do the
   * row-level statements, which scan the table.
   */
  @Override
  public DynamicTableSource createDynamicTableSource(Context context) {
    FactoryUtil.TableFactoryHelper helper = FactoryUtil.createTableFactoryHelper(this, context);
    helper.validateExcept(CatalogDefinition.PROPERTY_PREFIX, WRITE_PREFIX);
    ReadableConfig options = helper.getOptions();
    ObjectIdentifier flinkName = context.getObjectIdentifier();
    TableIdentifier table =
        TableIdentifier.of(
            options.getOptional(DATABASE).orElse(flinkName.getDatabaseName()),
            options.getOptional(TABLE).orElse(flinkName.getObjectName()));
    CatalogLoader catalog = catalogLoader(options, context.getCatalogTable().getOptions());
    return new CatalogTableSource(
        TableLoader.fromCatalog(catalog, table),
        context.getCatalogTable().getResolvedSchema(),
        context.getCatalogTable().getOptions(),
        context.getConfiguration());
  }

  /**
   * The sink and dedup options of a table's options (and those of a bounded write: its write id,
   * the filter of an overwrite), with a uid prefix of the table's own unless one is given (several
   * sinks of one statement set need uids of their own).
   */
  static Configuration sinkOptions(ReadableConfig options, TableIdentifier table) {
    checkOnAmbiguousChange(options, table);
    Configuration sinkOptions = new Configuration();
    for (ConfigOption<?> option : SinkOptions.all()) {
      copy(options, sinkOptions, option);
    }
    copy(options, sinkOptions, WRITE_ID);
    copy(options, sinkOptions, OVERWRITE_FILTER);
    if (!sinkOptions.contains(SinkOptions.UID_PREFIX)) {
      sinkOptions.set(SinkOptions.UID_PREFIX, "iceberg-cdc-" + table);
    }
    return sinkOptions;
  }

  /**
   * Refuses {@code dedup.on-ambiguous-change = DEAD_LETTER}: SQL writes have no dead-letter output,
   * and the change refused would go nowhere.
   */
  static void checkOnAmbiguousChange(ReadableConfig options, TableIdentifier table) {
    if (options.get(DedupOptions.ON_AMBIGUOUS_CHANGE)
        == io.icebergcdc.dedup.AmbiguousChangePolicy.DEAD_LETTER) {
      // The connector's tables and the catalog's alike: the change refused would go nowhere.
      throw new IllegalArgumentException(
          "table "
              + table
              + ": option '"
              + DedupOptions.ON_AMBIGUOUS_CHANGE.key()
              + "' = DEAD_LETTER needs a dead-letter output, which SQL writes do not have yet;"
              + " leave it at FAIL");
    }
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
    String file = options.getOptional(CatalogDefinition.PROPERTIES_FILE).orElse(null);
    if (file != null) {
      try {
        catalog.properties(CatalogDefinition.readPropertiesFile(java.nio.file.Paths.get(file)));
      } catch (java.io.IOException e) {
        throw new IllegalArgumentException(
            "option '"
                + CatalogDefinition.PROPERTIES_FILE.key()
                + "': cannot read "
                + file
                + ": "
                + e.getMessage(),
            e);
      }
    }
    try {
      return catalog.build();
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("table option: " + e.getMessage(), e);
    }
  }
}
