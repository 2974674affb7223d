package io.icebergcdc.sink.table;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.configuration.ReadableConfig;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.catalog.ResolvedSchema;
import org.apache.flink.table.connector.ChangelogMode;
import org.apache.flink.table.connector.ProviderContext;
import org.apache.flink.table.connector.RowLevelModificationScanContext;
import org.apache.flink.table.connector.source.DataStreamScanProvider;
import org.apache.flink.table.connector.source.DynamicTableSource;
import org.apache.flink.table.connector.source.ScanTableSource;
import org.apache.flink.table.connector.source.abilities.SupportsFilterPushDown;
import org.apache.flink.table.connector.source.abilities.SupportsLimitPushDown;
import org.apache.flink.table.connector.source.abilities.SupportsProjectionPushDown;
import org.apache.flink.table.connector.source.abilities.SupportsRowLevelModificationScan;
import org.apache.flink.table.connector.source.abilities.SupportsSourceWatermark;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.expressions.ResolvedExpression;
import org.apache.flink.table.types.DataType;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.flink.FlinkReadOptions;
import org.apache.iceberg.flink.TableLoader;
import org.apache.iceberg.flink.source.IcebergTableSource;

/**
 * Iceberg's Flink source of an {@code iceberg-cdc} table (a catalog table or a connector table),
 * planned with this jar's context class loader ({@link ContextClassLoader}): the planner asks it
 * for its scan in the SQL client, where Iceberg loads the table and its file IO by class name. Its
 * push-downs and read options ({@code 'streaming'}, {@code 'snapshot-id'}, ...) are Iceberg's.
 *
 * <p>For the scan of an {@code UPDATE} or {@code DELETE} it reads the snapshot that is current when
 * the statement is planned, and tells the sink which one ({@link ReadSnapshot}), so that the
 * statement's commit fails on changes committed after its read.
 */
final class CatalogTableSource
    implements ScanTableSource,
        SupportsProjectionPushDown,
        SupportsFilterPushDown,
        SupportsLimitPushDown,
        SupportsSourceWatermark,
        SupportsRowLevelModificationScan {

  private final TableLoader loader;
  private final ResolvedSchema schema;
  private final Map<String, String> options;
  private final ReadableConfig config;
  private IcebergTableSource iceberg;

  CatalogTableSource(
      TableLoader loader,
      ResolvedSchema schema,
      Map<String, String> options,
      ReadableConfig config) {
    this(loader, schema, options, config, new IcebergTableSource(loader, schema, options, config));
  }

  private CatalogTableSource(
      TableLoader loader,
      ResolvedSchema schema,
      Map<String, String> options,
      ReadableConfig config,
      IcebergTableSource iceberg) {
    this.loader = loader;
    this.schema = schema;
    this.options = options;
    this.config = config;
    this.iceberg = iceberg;
  }

  /**
   * Pins the scan of a row-level statement to the table's current snapshot. The planner asks for
   * this before it pushes projections and filters down, so the source made here receives them.
   */
  @Override
  public RowLevelModificationScanContext applyRowLevelModificationScan(
      RowLevelModificationType type, RowLevelModificationScanContext previous) {
    if (previous instanceof ReadSnapshot read) {
      return read;
    }
    Long snapshotId = ContextClassLoader.ofThisJar(this::currentSnapshotId);
    if (snapshotId != null) {
      Map<String, String> pinned = new HashMap<>(options);
      pinned.put(FlinkReadOptions.SNAPSHOT_ID.key(), Long.toString(snapshotId));
      iceberg = new IcebergTableSource(loader, schema, pinned, config);
    }
    return new ReadSnapshot(snapshotId);
  }

  private Long currentSnapshotId() {
    try (TableLoader open = loader.clone()) {
      open.open();
      Snapshot current = open.loadTable().currentSnapshot();
      return current == null ? null : current.snapshotId();
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  @Override
  public ChangelogMode getChangelogMode() {
    return iceberg.getChangelogMode();
  }

  @Override
  public ScanRuntimeProvider getScanRuntimeProvider(ScanContext context) {
    ScanRuntimeProvider provider =
        ContextClassLoader.ofThisJar(() -> iceberg.getScanRuntimeProvider(context));
    if (!(provider instanceof DataStreamScanProvider scan)) {
      return provider;
    }
    // The planner builds the source's stream later, from the provider: that too needs the table.
    return new DataStreamScanProvider() {
      @Override
      public DataStream<RowData> produceDataStream(
          ProviderContext providerContext, StreamExecutionEnvironment env) {
        DataStream<RowData> rows =
            ContextClassLoader.ofThisJar(() -> scan.produceDataStream(providerContext, env));
        return rows.map(new ReleasingJobClassLoader<>())
            .returns(rows.getType())
            .setParallelism(rows.getParallelism())
            .name(rows.getTransformation().getName());
      }

      @Override
      public boolean isBounded() {
        return scan.isBounded();
      }
    };
  }

  @Override
  public DynamicTableSource copy() {
    return new CatalogTableSource(
        loader, schema, options, config, (IcebergTableSource) iceberg.copy());
  }

  @Override
  public String asSummaryString() {
    return iceberg.asSummaryString();
  }

  @Override
  public boolean supportsNestedProjection() {
    return iceberg.supportsNestedProjection();
  }

  @Override
  public void applyProjection(int[][] projectedFields, DataType producedDataType) {
    iceberg.applyProjection(projectedFields, producedDataType);
  }

  @Override
  public Result applyFilters(List<ResolvedExpression> filters) {
    return iceberg.applyFilters(filters);
  }

  @Override
  public void applyLimit(long limit) {
    iceberg.applyLimit(limit);
  }

  @Override
  public void applySourceWatermark() {
    iceberg.applySourceWatermark();
  }
}
