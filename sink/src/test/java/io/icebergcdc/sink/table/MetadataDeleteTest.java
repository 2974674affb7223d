package io.icebergcdc.sink.table;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.table.api.DataTypes;
import org.apache.flink.table.expressions.CallExpression;
import org.apache.flink.table.expressions.FieldReferenceExpression;
import org.apache.flink.table.expressions.ResolvedExpression;
import org.apache.flink.table.expressions.ValueLiteralExpression;
import org.apache.flink.table.functions.BuiltInFunctionDefinition;
import org.apache.flink.table.functions.BuiltInFunctionDefinitions;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.hadoop.HadoopCatalog;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MetadataDeleteTest {

  private static final Schema SCHEMA =
      new Schema(
          Types.NestedField.required(1, "id", Types.LongType.get()),
          Types.NestedField.optional(2, "region", Types.StringType.get()));

  @TempDir Path dir;
  private Table table;

  @BeforeEach
  void aTableWithAPartitionOfNullRegions() {
    HadoopCatalog catalog = new HadoopCatalog(new Configuration(), dir.toString());
    table =
        catalog.createTable(
            TableIdentifier.of("db", "t"),
            SCHEMA,
            PartitionSpec.builderFor(SCHEMA).identity("region").build());
    var append = table.newAppend();
    for (String region : new String[] {"EU", "US", null}) {
      append.appendFile(file(region));
    }
    append.commit();
  }

  @Test
  void aDeleteOfWholePartitionsLeavesThoseWhereTheFilterIsUnknown() {
    assertThat(regions()).containsExactlyInAnyOrder("EU", "US", null);
    MetadataDelete.of(table, List.of(call(BuiltInFunctionDefinitions.NOT_EQUALS, "EU")))
        .orElseThrow()
        .commit(table);
    assertThat(regions()).containsExactlyInAnyOrder("EU", null);

    MetadataDelete.of(
            table,
            List.of(
                call(
                    BuiltInFunctionDefinitions.NOT,
                    call(BuiltInFunctionDefinitions.GREATER_THAN_OR_EQUAL, "M"))))
        .orElseThrow()
        .commit(table);
    assertThat(regions()).containsExactly((String) null);

    MetadataDelete.of(table, List.of(call(BuiltInFunctionDefinitions.IS_NULL)))
        .orElseThrow()
        .commit(table);
    assertThat(regions()).isEmpty();
  }

  /**
   * Files of an unpartitioned table that the filter matches wholly by their column statistics go
   * whole; a file that the filter splits makes it no metadata delete, and is named.
   */
  @Test
  void filesMatchedWhollyByTheirStatisticsGoWhole() {
    HadoopCatalog catalog = new HadoopCatalog(new Configuration(), dir.toString());
    Table plain = catalog.createTable(TableIdentifier.of("db", "plain"), SCHEMA);
    plain.newAppend().appendFile(fileOfIds(plain, "low", 1, 3)).commit();
    plain.newAppend().appendFile(fileOfIds(plain, "high", 10, 12)).commit();
    ResolvedExpression atLeast10 = idAtLeast(10);
    assertThat(
            MetadataDelete.partlyMatchedFile(
                plain,
                SqlTruth.whereTrue(
                    org.apache.iceberg.expressions.Expressions.greaterThanOrEqual("id", 10L))))
        .isEmpty();
    MetadataDelete.of(plain, List.of(atLeast10)).orElseThrow().commit(plain);
    plain.refresh();
    List<String> left = new ArrayList<>();
    try (CloseableIterable<FileScanTask> tasks = plain.newScan().planFiles()) {
      tasks.forEach(task -> left.add(task.file().location()));
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
    assertThat(left).singleElement().asString().endsWith("low.parquet");

    assertThat(MetadataDelete.of(plain, List.of(idAtLeast(2)))).isEmpty();
    assertThat(
            MetadataDelete.partlyMatchedFile(
                plain, org.apache.iceberg.expressions.Expressions.greaterThanOrEqual("id", 2L)))
        .hasValueSatisfying(file -> assertThat(file).endsWith("low.parquet"));
  }

  private DataFile fileOfIds(Table plain, String name, long low, long high) {
    java.util.Map<Integer, java.nio.ByteBuffer> lower =
        java.util.Map.of(
            1, org.apache.iceberg.types.Conversions.toByteBuffer(Types.LongType.get(), low));
    java.util.Map<Integer, java.nio.ByteBuffer> upper =
        java.util.Map.of(
            1, org.apache.iceberg.types.Conversions.toByteBuffer(Types.LongType.get(), high));
    long rows = high - low + 1;
    return DataFiles.builder(plain.spec())
        .withPath(dir.resolve(name + ".parquet").toString())
        .withFileSizeInBytes(100)
        .withRecordCount(rows)
        .withMetrics(
            new org.apache.iceberg.Metrics(
                rows,
                java.util.Map.of(),
                java.util.Map.of(1, rows),
                java.util.Map.of(1, 0L),
                java.util.Map.of(),
                lower,
                upper))
        .build();
  }

  private static ResolvedExpression idAtLeast(long value) {
    return CallExpression.permanent(
        BuiltInFunctionDefinitions.GREATER_THAN_OR_EQUAL,
        List.of(
            new FieldReferenceExpression("id", DataTypes.BIGINT().notNull(), 0, 0),
            new ValueLiteralExpression(value)),
        DataTypes.BOOLEAN());
  }

  private List<String> regions() {
    table.refresh();
    List<String> regions = new ArrayList<>();
    try (CloseableIterable<FileScanTask> tasks = table.newScan().planFiles()) {
      tasks.forEach(task -> regions.add(task.file().partition().get(0, String.class)));
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
    return regions;
  }

  private DataFile file(String region) {
    org.apache.iceberg.data.GenericRecord partition =
        org.apache.iceberg.data.GenericRecord.create(table.spec().partitionType());
    partition.set(0, region);
    return DataFiles.builder(table.spec())
        .withPath(dir.resolve("data-" + region + ".parquet").toString())
        .withFileSizeInBytes(100)
        .withRecordCount(10)
        .withPartition(partition)
        .build();
  }

  private static ResolvedExpression region() {
    return new FieldReferenceExpression("region", DataTypes.STRING(), 0, 1);
  }

  private static ResolvedExpression call(BuiltInFunctionDefinition function, String literal) {
    return CallExpression.permanent(
        function, List.of(region(), new ValueLiteralExpression(literal)), DataTypes.BOOLEAN());
  }

  private static ResolvedExpression call(
      BuiltInFunctionDefinition function, ResolvedExpression arg) {
    return CallExpression.permanent(function, List.of(arg), DataTypes.BOOLEAN());
  }

  private static ResolvedExpression call(BuiltInFunctionDefinition function) {
    return call(function, region());
  }
}
