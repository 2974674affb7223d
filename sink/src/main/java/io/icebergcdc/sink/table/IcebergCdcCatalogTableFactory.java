package io.icebergcdc.sink.table;

import io.icebergcdc.commit.BoundedWrite;
import io.icebergcdc.commit.Overwrite;
import io.icebergcdc.sink.CatalogDefinition;
import io.icebergcdc.sink.SinkOptions;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import org.apache.flink.api.common.RuntimeExecutionMode;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.ExecutionOptions;
import org.apache.flink.table.catalog.ObjectIdentifier;
import org.apache.flink.table.catalog.ResolvedCatalogTable;
import org.apache.flink.table.connector.sink.DynamicTableSink;
import org.apache.flink.table.connector.source.DynamicTableSource;
import org.apache.flink.table.factories.DynamicTableSinkFactory;
import org.apache.flink.table.factories.DynamicTableSourceFactory;
import org.apache.iceberg.MetadataTableType;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.flink.TableLoader;

/**
 * The tables of an {@link IcebergCdcCatalog}: written through this project's sink, read through
 * Iceberg's own Flink source.
 *
 * <p>A catalog table's options are the Iceberg table's properties with the statement's hints over
 * them; the write properties of one write are those hints that differ from the table's property, so
 * a hint's {@code 'compression' = 'gzip'} overrides the table's {@code
 * write.parquet.compression-codec} for that write, and an alias conflicts with its full key only
 * where both are hints.
 */
final class IcebergCdcCatalogTableFactory
    implements DynamicTableSinkFactory, DynamicTableSourceFactory {

  private final IcebergCdcCatalog catalog;
  private final CatalogDefinition definition;

  IcebergCdcCatalogTableFactory(IcebergCdcCatalog catalog, CatalogDefinition definition) {
    this.catalog = catalog;
    this.definition = definition;
  }

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
    return Set.of();
  }

  @Override
  public DynamicTableSource createDynamicTableSource(Context context) {
    TableIdentifier identifier = sourceIdentifier(context.getObjectIdentifier());
    return ContextClassLoader.ofThisJar(
        () ->
            new CatalogTableSource(
                TableLoader.fromCatalog(definition.loader(), identifier),
                context.getCatalogTable().getResolvedSchema(),
                context.getCatalogTable().getOptions(),
                context.getConfiguration()));
  }

  @Override
  public DynamicTableSink createDynamicTableSink(Context context) {
    return ContextClassLoader.ofThisJar(() -> sink(context));
  }

  private DynamicTableSink sink(Context context) {
    ObjectIdentifier name = context.getObjectIdentifier();
    TableIdentifier identifier = TableIdentifier.of(name.getDatabaseName(), name.getObjectName());
    Map<String, String> options = context.getCatalogTable().getOptions();
    if (!catalog.catalog().tableExists(identifier)) {
      // A CREATE TABLE ... AS SELECT whose table Flink has not created: an atomic one, which
      // stages its load, or its EXPLAIN, which plans it without staging (and which this sink
      // refuses: it would create the table).
      return stagingSink(context, identifier);
    }
    Map<String, String> tableProperties = tableProperties(identifier);
    Map<String, String> overrides = new HashMap<>();
    options.forEach(
        (key, value) -> {
          if (IcebergCdcTableFactory.isWriteProperty(key)
              && !value.equals(tableProperties.get(key))) {
            overrides.put(key, value);
          }
        });
    Map<String, String> stored = catalogOptions(name);
    if (stored.containsKey(BoundedWrite.WRITE_ID_OPTION)) {
      // Every write would carry it, and each after the first would publish nothing.
      throw new IllegalArgumentException(
          "table "
              + identifier
              + " holds the property '"
              + BoundedWrite.WRITE_ID_OPTION
              + "' = '"
              + stored.get(BoundedWrite.WRITE_ID_OPTION)
              + "', which names one load: every write of the table would carry it, and each"
              + " after the first would publish nothing; remove it (ALTER TABLE ... RESET ('"
              + BoundedWrite.WRITE_ID_OPTION
              + "')) and give each load its own in a hint, /*+ OPTIONS('"
              + BoundedWrite.WRITE_ID_OPTION
              + "' = '...') */");
    }
    checkStoredOptions(identifier, stored);
    checkHints(identifier, options, stored);
    return dynamicSink(context, identifier, tableProperties, overrides);
  }

  /**
   * The sink of a catalog table of {@code context}, its format version as {@code properties} have
   * it, with {@code overrides} of its write properties.
   */
  private IcebergCdcDynamicSink dynamicSink(
      Context context,
      TableIdentifier identifier,
      Map<String, String> properties,
      Map<String, String> overrides) {
    ResolvedCatalogTable table = context.getCatalogTable();
    Configuration config = Configuration.fromMap(table.getOptions());
    return new IcebergCdcDynamicSink(
        definition.loader(),
        identifier,
        table.getResolvedSchema(),
        table.getPartitionKeys(),
        config.getOptional(IcebergCdcTableFactory.SEQUENCE_FIELD).orElse(null),
        Integer.parseInt(
            properties.getOrDefault(
                TableProperties.FORMAT_VERSION,
                Integer.toString(IcebergCdcTableFactory.FORMAT_VERSION.defaultValue()))),
        IcebergCdcTableFactory.sinkOptions(config, identifier),
        overrides);
  }

  /**
   * The sink of an atomic {@code CREATE TABLE ... AS SELECT}: its options are those of the table
   * the statement defines (checked as the catalog checks them when it creates a table), its rows go
   * to a staging table created when the planner applies the staging.
   */
  private DynamicTableSink stagingSink(Context context, TableIdentifier identifier) {
    ResolvedCatalogTable table = context.getCatalogTable();
    IcebergCdcDynamicSink sink = dynamicSink(context, identifier, table.getOptions(), Map.of());
    boolean batch =
        context.getConfiguration().get(ExecutionOptions.RUNTIME_MODE) == RuntimeExecutionMode.BATCH;
    return new StagingSink(
        sink,
        purpose -> StagedCreate.stage(catalog, definition.loader(), identifier, table, purpose),
        batch,
        identifier.toString());
  }

  /**
   * Fails on a hint of a write ({@code /*+ OPTIONS(...) *}{@code /}: an option that the catalog's
   * table does not hold, or holds with another value) that is not an option of a write, naming it:
   * a misspelt {@code overwrite.filter} or {@code write-id} would otherwise change what the
   * statement replaces, or whether a retry publishes it twice, without a word.
   */
  private static void checkHints(
      TableIdentifier identifier, Map<String, String> options, Map<String, String> properties) {
    java.util.Set<String> known = knownOptions();
    Map<String, String> hints = new java.util.TreeMap<>();
    options.forEach(
        (key, value) -> {
          if (!value.equals(properties.get(key))) {
            hints.put(key, value);
          }
        });
    for (String key : hints.keySet()) {
      if (!known.contains(key) && !IcebergCdcTableFactory.isWriteProperty(key)) {
        throw new IllegalArgumentException(
            "unknown option '"
                + key
                + "' given to the write of "
                + identifier
                + "; a write takes "
                + known
                + " and the table's write.* properties");
      }
    }
    SinkOptions.validate(Configuration.fromMap(hints));
  }

  /** The options a write takes, besides the table's {@code write.*} properties. */
  private static java.util.Set<String> knownOptions() {
    java.util.Set<String> known = new java.util.TreeSet<>();
    for (org.apache.flink.configuration.ConfigOption<?> option : SinkOptions.all()) {
      known.add(option.key());
    }
    known.add(IcebergCdcTableFactory.SEQUENCE_FIELD.key());
    known.add(BoundedWrite.WRITE_ID_OPTION);
    known.add(Overwrite.FILTER_OPTION);
    return known;
  }

  /**
   * Fails on a property of the table that was meant as an option of its writes but is none (a
   * misspelt {@code sequence.field} or {@code dedup.tombstone-ttl}, set by {@code CREATE TABLE} or
   * {@code ALTER TABLE ... SET}), naming it: stored, it was ignored at every write without a word.
   * Such a property is one under this connector's prefixes ({@code sink.}, {@code dedup.}, {@code
   * maintenance.}) or one that differs from an option only in its separators. Iceberg's own and
   * other properties are left alone.
   */
  static void checkStoredOptions(TableIdentifier identifier, Map<String, String> properties) {
    checkOptions(identifier, properties, true);
  }

  /**
   * As {@link #checkStoredOptions}, for the properties a table is about to be created or altered
   * with ({@code stored} false): the message names the property as given, not as held.
   */
  static void checkOptions(
      TableIdentifier identifier, Map<String, String> properties, boolean stored) {
    java.util.Set<String> known = knownOptions();
    Map<String, String> bySeparators = new HashMap<>();
    known.forEach(option -> bySeparators.put(withoutSeparators(option), option));
    for (String key : new java.util.TreeSet<>(properties.keySet())) {
      if (known.contains(key) || IcebergCdcTableFactory.isWriteProperty(key)) {
        continue;
      }
      String meant = bySeparators.get(withoutSeparators(key));
      if (meant != null
          || key.startsWith("sink.")
          || key.startsWith("dedup.")
          || key.startsWith("maintenance.")) {
        throw new IllegalArgumentException(
            "table "
                + identifier
                + (stored ? " holds the property '" : ": the property '")
                + key
                + "', which is no option of its writes"
                + (meant == null ? "" : " (did you mean '" + meant + "'?)")
                + "; a write takes "
                + known
                + " and the table's write.* properties"
                + (stored
                    ? ": correct it with ALTER TABLE ... RESET ('" + key + "') and SET"
                    : ", and each write of the table would fail on it"));
      }
    }
  }

  private static String withoutSeparators(String key) {
    return key.replace(".", "")
        .replace("-", "")
        .replace("_", "")
        .toLowerCase(java.util.Locale.ROOT);
  }

  /**
   * The Iceberg table a read names: {@code db.t}, or one of its metadata tables, {@code
   * db.`t$snapshots`}, which Iceberg's catalogs know as {@code db.t.snapshots}.
   */
  static TableIdentifier sourceIdentifier(ObjectIdentifier name) {
    String object = name.getObjectName();
    int dollar = object.indexOf('$');
    if (dollar < 0) {
      return TableIdentifier.of(name.getDatabaseName(), object);
    }
    String metadata = object.substring(dollar + 1);
    if (object.indexOf('$', dollar + 1) >= 0 || MetadataTableType.from(metadata) == null) {
      throw new IllegalArgumentException(
          "table "
              + name.asSummaryString()
              + ": '"
              + metadata
              + "' after '$' is not one of Iceberg's metadata tables "
              + java.util.Arrays.toString(MetadataTableType.values())
                  .toLowerCase(java.util.Locale.ROOT));
    }
    return TableIdentifier.of(
        Namespace.of(name.getDatabaseName(), object.substring(0, dollar)), metadata);
  }

  /** The table's properties, through the catalog this Flink catalog already holds. */
  /** The options the catalog gives the table, without the statement's hints. */
  private Map<String, String> catalogOptions(ObjectIdentifier name) {
    try {
      return catalog.getTable(name.toObjectPath()).getOptions();
    } catch (org.apache.flink.table.catalog.exceptions.TableNotExistException e) {
      throw new IllegalStateException("table " + name.asSummaryString() + " does not exist", e);
    }
  }

  private Map<String, String> tableProperties(TableIdentifier identifier) {
    return catalog.catalog().loadTable(identifier).properties();
  }
}
