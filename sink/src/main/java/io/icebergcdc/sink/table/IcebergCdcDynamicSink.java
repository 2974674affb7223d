package io.icebergcdc.sink.table;

import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.ChangeSchema;
import io.icebergcdc.cdc.typeutils.ChangeEventTypeInfo;
import io.icebergcdc.sink.CdcTables;
import io.icebergcdc.sink.IcebergCdcSink;
import java.util.List;
import java.util.Map;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.DataStreamSink;
import org.apache.flink.table.catalog.ResolvedSchema;
import org.apache.flink.table.connector.ChangelogMode;
import org.apache.flink.table.connector.ProviderContext;
import org.apache.flink.table.connector.sink.DataStreamSinkProvider;
import org.apache.flink.table.connector.sink.DynamicTableSink;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.flink.CatalogLoader;
import org.apache.iceberg.flink.FlinkSchemaUtil;
import org.apache.iceberg.flink.TableLoader;
import org.apache.iceberg.flink.sink.FlinkSink;

/**
 * The sink of an {@code iceberg-cdc} table. With a primary key it takes an upsert changelog
 * (inserts, rows after updates, deletes) and applies it through {@link IcebergCdcSink}; without one
 * it is append-only, through Iceberg's own {@link FlinkSink}. The Iceberg table is created from the
 * Flink table's schema when missing; an existing one must have the same columns and key.
 */
final class IcebergCdcDynamicSink implements DynamicTableSink {

  private final CatalogLoader catalogLoader;
  private final TableIdentifier identifier;
  private final ResolvedSchema flinkSchema;
  private final String sequenceField;
  private final int formatVersion;
  private final Configuration sinkOptions;
  private final Map<String, String> writeProperties;

  IcebergCdcDynamicSink(
      CatalogLoader catalogLoader,
      TableIdentifier identifier,
      ResolvedSchema flinkSchema,
      String sequenceField,
      int formatVersion,
      Configuration sinkOptions,
      Map<String, String> writeProperties) {
    this.writeProperties = Map.copyOf(writeProperties);
    this.catalogLoader = catalogLoader;
    this.identifier = identifier;
    this.flinkSchema = flinkSchema;
    this.sequenceField = sequenceField;
    this.formatVersion = formatVersion;
    this.sinkOptions = sinkOptions;
    if (sequenceField != null && !flinkSchema.getColumnNames().contains(sequenceField)) {
      throw new IllegalArgumentException(
          "option 'sequence.field' names '" + sequenceField + "', which the table does not have");
    }
  }

  private boolean hasPrimaryKey() {
    return flinkSchema.getPrimaryKey().isPresent();
  }

  @Override
  public ChangelogMode getChangelogMode(ChangelogMode requested) {
    return hasPrimaryKey() ? ChangelogMode.upsert() : ChangelogMode.insertOnly();
  }

  @Override
  public SinkRuntimeProvider getSinkRuntimeProvider(Context context) {
    return new DataStreamSinkProvider() {
      @Override
      public DataStreamSink<?> consumeDataStream(
          ProviderContext providerContext, DataStream<RowData> rows) {
        return consume(rows);
      }
    };
  }

  private DataStreamSink<?> consume(DataStream<RowData> rows) {
    Table table = createOrLoad();
    TableLoader loader = TableLoader.fromCatalog(catalogLoader, identifier);
    if (!hasPrimaryKey()) {
      return FlinkSink.forRowData(rows)
          .tableLoader(loader)
          .setAll(
              io.icebergcdc.sink.WriteProperties.effective(
                  identifier.toString(), table.properties(), writeProperties))
          .append();
    }
    ChangeSchema schema = new ChangeSchema(table.schema());
    int sequencePosition = sequenceField == null ? -1 : columnNames(table).indexOf(sequenceField);
    DataStream<ChangeEvent> changes =
        rows.flatMap(
                new RowDataToChangeEvents(
                    schema, identifier.toString(), sequenceField, sequencePosition))
            .returns(ChangeEventTypeInfo.of(schema))
            .name("changelog of " + identifier);
    // The planner keeps what leads to the returned sink: the end of the commit chain. Without a
    // dead-letter output (refused by the factory) the dedup refuses nothing to send elsewhere.
    return IcebergCdcSink.builder()
        .table(loader)
        .options(sinkOptions)
        .writeProperties(writeProperties)
        .build()
        .applyTo(changes)
        .end();
  }

  private static List<String> columnNames(Table table) {
    return table.schema().columns().stream().map(c -> c.name()).toList();
  }

  /** The Iceberg table: created from the Flink schema if missing, else checked against it. */
  private Table createOrLoad() {
    Schema converted = FlinkSchemaUtil.convert(flinkSchema);
    List<String> key = flinkSchema.getPrimaryKey().map(k -> k.getColumns()).orElse(List.of());
    java.util.Set<Integer> keyIds = new java.util.HashSet<>();
    key.forEach(column -> keyIds.add(converted.findField(column).fieldId()));
    Schema schema = new Schema(converted.columns(), keyIds);
    Catalog catalog = catalogLoader.loadCatalog();
    if (!catalog.tableExists(identifier) && key.isEmpty()) {
      return catalog
          .buildTable(identifier, schema)
          .withProperty("format-version", Integer.toString(formatVersion))
          .create();
    }
    Table table =
        key.isEmpty()
            ? catalog.loadTable(identifier)
            : CdcTables.createOrLoad(catalog, identifier, schema, null, formatVersion, key);
    RowType expected = FlinkSchemaUtil.convert(table.schema());
    RowType given = (RowType) flinkSchema.toPhysicalRowDataType().getLogicalType();
    if (!expected.getFieldNames().equals(given.getFieldNames())) {
      throw new IllegalArgumentException(
          "the columns of Flink table "
              + given.getFieldNames()
              + " are not those of Iceberg table "
              + identifier
              + " "
              + expected.getFieldNames());
    }
    for (int i = 0; i < expected.getFieldCount(); i++) {
      LogicalType want = expected.getTypeAt(i);
      LogicalType have = given.getTypeAt(i);
      if (!want.copy(true).equals(have.copy(true)) && want.getTypeRoot() != have.getTypeRoot()) {
        throw new IllegalArgumentException(
            "column '"
                + expected.getFieldNames().get(i)
                + "' is "
                + have
                + " in the Flink table and "
                + want
                + " in Iceberg table "
                + identifier);
      }
    }
    return table;
  }

  @Override
  public DynamicTableSink copy() {
    return new IcebergCdcDynamicSink(
        catalogLoader,
        identifier,
        flinkSchema,
        sequenceField,
        formatVersion,
        sinkOptions,
        writeProperties);
  }

  @Override
  public String asSummaryString() {
    return "iceberg-cdc " + identifier;
  }
}
