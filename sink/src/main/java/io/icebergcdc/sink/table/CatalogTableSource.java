package io.icebergcdc.sink.table;

import java.util.List;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.connector.ChangelogMode;
import org.apache.flink.table.connector.ProviderContext;
import org.apache.flink.table.connector.source.DataStreamScanProvider;
import org.apache.flink.table.connector.source.DynamicTableSource;
import org.apache.flink.table.connector.source.ScanTableSource;
import org.apache.flink.table.connector.source.abilities.SupportsFilterPushDown;
import org.apache.flink.table.connector.source.abilities.SupportsLimitPushDown;
import org.apache.flink.table.connector.source.abilities.SupportsProjectionPushDown;
import org.apache.flink.table.connector.source.abilities.SupportsSourceWatermark;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.expressions.ResolvedExpression;
import org.apache.flink.table.types.DataType;
import org.apache.iceberg.flink.source.IcebergTableSource;

/**
 * Iceberg's Flink source of a catalog table, planned with this jar's context class loader ({@link
 * ContextClassLoader}): the planner asks it for its scan in the SQL client, where Iceberg loads the
 * table and its file IO by class name. Its push-downs are Iceberg's.
 */
final class CatalogTableSource
    implements ScanTableSource,
        SupportsProjectionPushDown,
        SupportsFilterPushDown,
        SupportsLimitPushDown,
        SupportsSourceWatermark {

  private final IcebergTableSource iceberg;

  CatalogTableSource(IcebergTableSource iceberg) {
    this.iceberg = iceberg;
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
        return ContextClassLoader.ofThisJar(() -> scan.produceDataStream(providerContext, env));
      }

      @Override
      public boolean isBounded() {
        return scan.isBounded();
      }
    };
  }

  @Override
  public DynamicTableSource copy() {
    return new CatalogTableSource((IcebergTableSource) iceberg.copy());
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
