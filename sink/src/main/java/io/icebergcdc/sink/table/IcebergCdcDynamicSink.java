package io.icebergcdc.sink.table;

import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.ChangeSchema;
import io.icebergcdc.cdc.typeutils.ChangeEventTypeInfo;
import io.icebergcdc.commit.BoundedWrite;
import io.icebergcdc.commit.Overwrite;
import io.icebergcdc.commit.SnapshotSummaryKeys;
import io.icebergcdc.sink.CatalogDefinition;
import io.icebergcdc.sink.CdcTables;
import io.icebergcdc.sink.IcebergCdcSink;
import io.icebergcdc.sink.SinkOptions;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.DataStreamSink;
import org.apache.flink.table.catalog.Column;
import org.apache.flink.table.catalog.ResolvedSchema;
import org.apache.flink.table.connector.ChangelogMode;
import org.apache.flink.table.connector.ProviderContext;
import org.apache.flink.table.connector.RowLevelModificationScanContext;
import org.apache.flink.table.connector.sink.DataStreamSinkProvider;
import org.apache.flink.table.connector.sink.DynamicTableSink;
import org.apache.flink.table.connector.sink.abilities.SupportsDeletePushDown;
import org.apache.flink.table.connector.sink.abilities.SupportsOverwrite;
import org.apache.flink.table.connector.sink.abilities.SupportsPartitioning;
import org.apache.flink.table.connector.sink.abilities.SupportsRowLevelDelete;
import org.apache.flink.table.connector.sink.abilities.SupportsRowLevelUpdate;
import org.apache.flink.table.connector.sink.abilities.SupportsTruncate;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.expressions.ResolvedExpression;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.table.types.logical.RowType;
import org.apache.iceberg.PartitionField;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.flink.CatalogLoader;
import org.apache.iceberg.flink.FlinkSchemaUtil;
import org.apache.iceberg.flink.TableLoader;

/**
 * The sink of an {@code iceberg-cdc} table. With a primary key it takes an upsert changelog
 * (inserts, rows after updates, deletes) and applies it through {@link IcebergCdcSink}; without one
 * it appends rows. Either way one committer commits each checkpoint, or, in batch execution, the
 * whole input as one snapshot: a merge of the changes with a primary key, an append without, and
 * for {@code INSERT OVERWRITE} a replacement of the table, of the static partition named, or of the
 * partitions the input has rows in. The Iceberg table is created from the Flink table's schema
 * (identity partitions from {@code PARTITIONED BY}) when missing; an existing one must have the
 * same columns and key.
 */
final class IcebergCdcDynamicSink
    implements DynamicTableSink,
        SupportsOverwrite,
        SupportsPartitioning,
        SupportsTruncate,
        SupportsDeletePushDown,
        SupportsRowLevelDelete,
        SupportsRowLevelUpdate {

  private final CatalogLoader catalogLoader;
  private final TableIdentifier identifier;

  /**
   * The Iceberg table the rows go to: {@link #identifier}, or the staging table of an atomic {@code
   * CREATE TABLE ... AS SELECT} ({@link StagingSink}).
   */
  private TableIdentifier written;

  /** The atomic {@code CREATE TABLE ... AS SELECT} this sink loads; or null. */
  private StagedCreate staged;

  private final ResolvedSchema flinkSchema;
  private final List<String> partitionKeys;
  private final String sequenceField;
  private final int formatVersion;
  private final Configuration sinkOptions;
  private final Map<String, String> writeProperties;
  private boolean overwrite;
  private Map<String, String> staticPartition = Map.of();
  private BoundedWrite bounded;

  /**
   * Whether the input is every row the table keeps (a row-level statement on a table without a
   * primary key), replacing all of it.
   */
  private boolean replacesAll;

  private MetadataDelete metadataDelete;

  /** The option {@code overwrite.filter}, or null. */
  private final String overwriteFilter;

  IcebergCdcDynamicSink(
      CatalogLoader catalogLoader,
      TableIdentifier identifier,
      ResolvedSchema flinkSchema,
      List<String> partitionKeys,
      String sequenceField,
      int formatVersion,
      Configuration sinkOptions,
      Map<String, String> writeProperties) {
    this.bounded =
        BoundedWrite.NONE.withWriteId(
            sinkOptions.getOptional(IcebergCdcTableFactory.WRITE_ID).orElse(null));
    this.overwriteFilter =
        sinkOptions.getOptional(IcebergCdcTableFactory.OVERWRITE_FILTER).orElse(null);
    this.writeProperties = Map.copyOf(writeProperties);
    this.catalogLoader = catalogLoader;
    this.identifier = identifier;
    this.written = identifier;
    this.flinkSchema = flinkSchema;
    this.partitionKeys = List.copyOf(partitionKeys);
    this.sequenceField = sequenceField;
    this.formatVersion = formatVersion;
    this.sinkOptions = sinkOptions;
    SequenceField.check(identifier.toString(), flinkSchema, sequenceField);
  }

  private boolean hasPrimaryKey() {
    return flinkSchema.getPrimaryKey().isPresent();
  }

  @Override
  public ChangelogMode getChangelogMode(ChangelogMode requested) {
    return hasPrimaryKey() ? ChangelogMode.upsert() : ChangelogMode.insertOnly();
  }

  @Override
  public void applyOverwrite(boolean overwrite) {
    this.overwrite = overwrite;
  }

  @Override
  public void applyStaticPartition(Map<String, String> partition) {
    this.staticPartition = new LinkedHashMap<>(partition);
  }

  @Override
  public SinkRuntimeProvider getSinkRuntimeProvider(Context context) {
    boolean boundedInput = context.isBounded();
    if (overwriteFilter != null && !overwrite) {
      throw new IllegalArgumentException(
          "option '"
              + Overwrite.FILTER_OPTION
              + "' of "
              + identifier
              + " says what an INSERT OVERWRITE replaces; this write is not one");
    }
    if (overwrite && !boundedInput) {
      throw new IllegalArgumentException(
          "INSERT OVERWRITE of "
              + identifier
              + " needs a bounded input in batch execution ('execution.runtime-mode' = 'batch'):"
              + " it commits once, at the end of its input");
    }
    if (bounded.writeId() != null && !boundedInput) {
      throw new IllegalArgumentException(
          "option '"
              + BoundedWrite.WRITE_ID_OPTION
              + "' of "
              + identifier
              + " names a load, which needs a bounded input in batch execution"
              + " ('execution.runtime-mode' = 'batch'): it commits once, at the end of its input");
    }
    return new DataStreamSinkProvider() {
      @Override
      public DataStreamSink<?> consumeDataStream(
          ProviderContext providerContext, DataStream<RowData> rows) {
        return ContextClassLoader.ofThisJar(() -> consume(rows, boundedInput));
      }
    };
  }

  private DataStreamSink<?> consume(DataStream<RowData> rows, boolean boundedInput) {
    Table table = createOrLoad();
    Optional<RowsAsTableTypes> conversion =
        RowsAsTableTypes.of(
            (RowType) flinkSchema.toPhysicalRowDataType().getLogicalType(),
            FlinkSchemaUtil.convert(table.schema()),
            identifier.toString());
    TableLoader loader = TableLoader.fromCatalog(catalogLoader, written);
    IcebergCdcSink.Builder builder =
        IcebergCdcSink.builder()
            .table(loader)
            .options(sinkOptions)
            .writeProperties(writeProperties)
            .boundedWrite(bounded);
    if (staged != null) {
      builder.afterLastCommit(staged::publish);
    }
    if (replacesAll) {
      builder.overwrite(
          new Overwrite(Overwrite.Scope.TABLE, Map.of(), true, bounded.readSnapshotId()));
    } else if (overwrite) {
      builder.overwrite(overwriteOf(table));
    }
    IcebergCdcSink sink = builder.build();
    if (conversion.isPresent()) {
      rows =
          rows.map(conversion.get())
              .returns(InternalTypeInfo.of(conversion.get().tableType()))
              .name("rows as the types of " + identifier);
    }
    Overwrite replaced = builder.overwrite();
    if (replaced != null && replaced.scope() == Overwrite.Scope.FILTER) {
      rows =
          rows.map(
                  new RowsWithinFilter(
                      table.schema(),
                      replaced.filter(),
                      replaced.filterText(),
                      identifier.toString()))
              .returns(rows.getType())
              .name("rows within " + Overwrite.FILTER_OPTION);
    }
    if (!hasPrimaryKey()) {
      return sink.appendRows(rows);
    }
    ChangeSchema schema = new ChangeSchema(table.schema());
    int sequencePosition = sequenceField == null ? -1 : columnNames(table).indexOf(sequenceField);
    DataStream<ChangeEvent> changes =
        rows.flatMap(
                new RowDataToChangeEvents(
                    schema,
                    identifier.toString(),
                    sequenceField,
                    sequencePosition,
                    boundedInput,
                    overwrite))
            .returns(ChangeEventTypeInfo.of(schema))
            .name("changelog of " + identifier);
    // The planner keeps what leads to the returned sink: the end of the commit chain. Without a
    // dead-letter output (refused by the factory) the dedup refuses nothing to send elsewhere.
    return sink.applyTo(changes).end();
  }

  /**
   * What an {@code INSERT OVERWRITE} replaces: the whole of an unpartitioned table; the partition
   * named in the statement, when it gives a value for every partition column; else the partitions
   * the input has rows in.
   */
  private Overwrite overwriteOf(Table table) {
    boolean allowEmpty = sinkOptions.get(SinkOptions.OVERWRITE_ALLOW_EMPTY_INPUT);
    Long startingSnapshot =
        table.currentSnapshot() == null ? null : table.currentSnapshot().snapshotId();
    if (overwriteFilter != null) {
      return filterOverwrite(table, allowEmpty, startingSnapshot);
    }
    PartitionSpec spec = table.spec();
    if (spec.isUnpartitioned()) {
      return new Overwrite(Overwrite.Scope.TABLE, Map.of(), allowEmpty, startingSnapshot);
    }
    if (!staticPartition.isEmpty() && staticPartition.keySet().containsAll(partitionKeys)) {
      Overwrite overwrite =
          new Overwrite(
              Overwrite.Scope.STATIC_PARTITION, staticPartition, allowEmpty, startingSnapshot);
      try {
        // Fails before anything is written, as the committer would after.
        overwrite.rowFilter(table.schema());
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(
            "INSERT OVERWRITE of "
                + identifier
                + ": "
                + e.getMessage()
                + "; leave the column out of PARTITION (...) to replace the partitions the input"
                + " has rows in",
            e);
      }
      return overwrite;
    }
    return new Overwrite(
        Overwrite.Scope.PARTITIONS_IN_INPUT, Map.of(), allowEmpty, startingSnapshot);
  }

  /**
   * An overwrite of the rows {@code overwrite.filter} matches: checked against the table's columns
   * and files before anything is written. Like Iceberg's overwrite by filter, it removes whole data
   * files, so the filter must match each file it touches wholly, by partition or statistics.
   */
  private Overwrite filterOverwrite(Table table, boolean allowEmpty, Long startingSnapshot) {
    if (!staticPartition.isEmpty()) {
      throw new IllegalArgumentException(
          "INSERT OVERWRITE of "
              + identifier
              + " names a static partition and option '"
              + Overwrite.FILTER_OPTION
              + "'; give one of them");
    }
    org.apache.iceberg.expressions.Expression filter =
        SqlFilter.parse(overwriteFilter, table.schema());
    java.util.Set<Integer> keyIds = table.schema().identifierFieldIds();
    if (!keyIds.isEmpty()) {
      // Rows of the input's keys that lie outside the filter would stay beside their new rows.
      java.util.Set<String> others = new java.util.TreeSet<>();
      for (int id :
          org.apache.iceberg.expressions.Binder.boundReferences(
              table.schema().asStruct(), List.of(filter), true)) {
        if (!keyIds.contains(id)) {
          others.add(table.schema().findColumnName(id));
        }
      }
      if (!others.isEmpty()) {
        throw new IllegalArgumentException(
            "option '"
                + Overwrite.FILTER_OPTION
                + "' = '"
                + overwriteFilter
                + "' of "
                + identifier
                + " names columns "
                + others
                + " outside its primary key "
                + table.schema().identifierFieldNames()
                + ": a key's row outside the filter would stay beside the key's new row; filter on"
                + " the key's columns (as a keyed table's partition columns are)");
      }
    }
    MetadataDelete.partlyMatchedFile(table, filter)
        .ifPresent(
            file -> {
              throw new IllegalArgumentException(
                  "option '"
                      + Overwrite.FILTER_OPTION
                      + "' = '"
                      + overwriteFilter
                      + "' matches some but not all rows of data file "
                      + file
                      + " of "
                      + identifier
                      + ", and an overwrite replaces whole files: filter on the table's partition"
                      + " columns ("
                      + table.spec().fields()
                      + ")");
            });
    return Overwrite.ofFilter(filter, overwriteFilter, allowEmpty, startingSnapshot);
  }

  private static List<String> columnNames(Table table) {
    return table.schema().columns().stream().map(c -> c.name()).toList();
  }

  /**
   * The Iceberg table: created from the Flink schema if missing, else checked against it (its
   * columns' types by {@link RowsAsTableTypes}).
   */
  private Table createOrLoad() {
    Schema converted = FlinkSchemaUtil.convert(flinkSchema);
    List<String> key = flinkSchema.getPrimaryKey().map(k -> k.getColumns()).orElse(List.of());
    java.util.Set<Integer> keyIds = new java.util.HashSet<>();
    key.forEach(column -> keyIds.add(converted.findField(column).fieldId()));
    Schema schema = new Schema(converted.columns(), keyIds);
    Catalog catalog = catalogLoader.loadCatalog();
    if (!written.equals(identifier)) {
      // The staging table, created with the statement's definition.
      return catalog.loadTable(written);
    }
    String partitionBy = partitionKeys.isEmpty() ? null : String.join(",", partitionKeys);
    if (!catalog.tableExists(identifier) && key.isEmpty()) {
      return catalog
          .buildTable(identifier, schema)
          .withPartitionSpec(CdcTables.parsePartitionSpec(schema, partitionBy))
          .withProperty("format-version", Integer.toString(formatVersion))
          .create();
    }
    Table table =
        key.isEmpty()
            ? catalog.loadTable(identifier)
            : CdcTables.createOrLoad(catalog, identifier, schema, partitionBy, formatVersion, key);
    if (key.isEmpty() && !table.schema().identifierFieldIds().isEmpty()) {
      // Rows appended without the key would give a key a second row.
      throw new IllegalArgumentException(
          "Iceberg table "
              + identifier
              + " has the primary key "
              + table.schema().identifierFieldNames()
              + ", which the Flink table does not declare; add PRIMARY KEY ("
              + String.join(", ", table.schema().identifierFieldNames())
              + ") NOT ENFORCED to it, so that its rows upsert by the key");
    }
    if (!partitionKeys.isEmpty()) {
      List<String> identityColumns = new ArrayList<>();
      for (PartitionField field : table.spec().fields()) {
        identityColumns.add(
            field.transform().isIdentity()
                ? table.schema().findColumnName(field.sourceId())
                : field.toString());
      }
      if (!identityColumns.equals(partitionKeys)) {
        throw new IllegalArgumentException(
            "the Flink table is PARTITIONED BY "
                + partitionKeys
                + ", but Iceberg table "
                + identifier
                + " is partitioned by "
                + table.spec().fields()
                + "; declare the Flink table's partition columns as the Iceberg table's identity"
                + " partitions, or leave PARTITIONED BY out");
      }
    }
    return table;
  }

  /**
   * {@code TRUNCATE TABLE}: one snapshot that removes every data file and the delete files with
   * them, a metadata-only delete that reads and writes no data file. A running streaming job's key
   * index still names rows of the removed files; its next change of such a key meets a removed file
   * at commit and falls back to an equality delete, as after any rewrite by another writer.
   */
  @Override
  public void executeTruncation() {
    withTable(
        table -> {
          table
              .newDelete()
              .deleteFromRowFilter(Expressions.alwaysTrue())
              .set(SnapshotSummaryKeys.TRUNCATE, "true")
              .commit();
          return null;
        });
  }

  /**
   * A {@code DELETE} whose {@code WHERE} matches whole data files is a metadata-only delete ({@link
   * MetadataDelete}); else the planner makes it a row-level delete.
   */
  @Override
  public boolean applyDeleteFilters(List<ResolvedExpression> filters) {
    metadataDelete = withTable(table -> MetadataDelete.of(table, filters)).orElse(null);
    return metadataDelete != null;
  }

  @Override
  public Optional<Long> executeDeletion() {
    return withTable(metadataDelete::commit);
  }

  /**
   * A row-level {@code DELETE}: with a primary key, the rows to delete, which the key index turns
   * into position deletes or deletion vectors; without one, the rows that remain, which replace the
   * table's (copy on write).
   */
  @Override
  public RowLevelDeleteInfo applyRowLevelDelete(RowLevelModificationScanContext context) {
    bounded = bounded.withStatement("DELETE", readSnapshotOf(context));
    if (hasPrimaryKey()) {
      return new RowLevelDeleteInfo() {};
    }
    replacesAll = true;
    return new RowLevelDeleteInfo() {
      @Override
      public RowLevelDeleteMode getRowLevelDeleteMode() {
        return RowLevelDeleteMode.REMAINING_ROWS;
      }
    };
  }

  /**
   * A row-level {@code UPDATE}: with a primary key, the updated rows, upserted by key (the key
   * itself cannot be set: that would be a delete and an insert); without one, every row, updated or
   * not, replacing the table's (copy on write).
   */
  @Override
  public RowLevelUpdateInfo applyRowLevelUpdate(
      List<Column> updatedColumns, RowLevelModificationScanContext context) {
    bounded = bounded.withStatement("UPDATE", readSnapshotOf(context));
    if (hasPrimaryKey()) {
      List<String> key = flinkSchema.getPrimaryKey().get().getColumns();
      for (Column column : updatedColumns) {
        if (key.contains(column.getName())) {
          throw new IllegalArgumentException(
              "UPDATE of "
                  + identifier
                  + " sets primary key column '"
                  + column.getName()
                  + "': a row's key cannot change; DELETE the row and INSERT it with its new key");
        }
      }
      return new RowLevelUpdateInfo() {};
    }
    replacesAll = true;
    return new RowLevelUpdateInfo() {
      @Override
      public RowLevelUpdateMode getRowLevelUpdateMode() {
        return RowLevelUpdateMode.ALL_ROWS;
      }
    };
  }

  /**
   * The snapshot the statement's scan read, which its commit checks for later changes; without the
   * scan's word, the table's current one.
   */
  private Long readSnapshotOf(RowLevelModificationScanContext context) {
    if (context instanceof ReadSnapshot read) {
      return read.snapshotId();
    }
    return withTable(
        table -> table.currentSnapshot() == null ? null : table.currentSnapshot().snapshotId());
  }

  private <T> T withTable(java.util.function.Function<Table, T> work) {
    return ContextClassLoader.ofThisJar(
        () -> {
          Catalog catalog = catalogLoader.loadCatalog();
          try {
            return work.apply(catalog.loadTable(identifier));
          } finally {
            CatalogDefinition.close(catalog);
          }
        });
  }

  @Override
  public DynamicTableSink copy() {
    IcebergCdcDynamicSink copy =
        new IcebergCdcDynamicSink(
            catalogLoader,
            identifier,
            flinkSchema,
            partitionKeys,
            sequenceField,
            formatVersion,
            sinkOptions,
            writeProperties);
    copy.overwrite = overwrite;
    copy.staticPartition = staticPartition;
    copy.bounded = bounded;
    copy.replacesAll = replacesAll;
    copy.metadataDelete = metadataDelete;
    copy.written = written;
    copy.staged = staged;
    return copy;
  }

  /**
   * This sink, writing its rows into the staging table of {@code staged}, which it publishes after
   * its last commit.
   */
  IcebergCdcDynamicSink loading(StagedCreate staged) {
    IcebergCdcDynamicSink copy = (IcebergCdcDynamicSink) copy();
    copy.written = staged.staging();
    copy.staged = staged;
    return copy;
  }

  @Override
  public String asSummaryString() {
    return "iceberg-cdc " + identifier;
  }
}
