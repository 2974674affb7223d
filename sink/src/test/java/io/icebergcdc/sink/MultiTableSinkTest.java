package io.icebergcdc.sink;

import static org.assertj.core.api.Assertions.assertThat;

import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.TableKey;
import io.icebergcdc.cdc.TestChanges;
import io.icebergcdc.cdc.typeutils.ChangeEventTypeInfo;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.apache.flink.api.dag.Transformation;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.transformations.OneInputTransformation;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.flink.CatalogLoader;
import org.apache.iceberg.flink.TableLoader;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class MultiTableSinkTest {

  @TempDir Path warehouse;

  /**
   * The shared writer keys its stream as each table's writer keys its state: a table distributed by
   * partition has its keys hashed by their partition (all keys of a partition on one subtask), one
   * distributed by primary key by its key. Read from the job graph that {@link
   * MultiTableSink#writeTogether} builds, the stream's key selector as Flink applies it.
   */
  @ParameterizedTest
  @EnumSource(Distribution.class)
  void theSharedWritersStreamIsKeyedAsEachTablesDistributionSays(Distribution distribution)
      throws Exception {
    CatalogLoader catalog =
        CatalogLoader.hadoop(
            "test",
            new org.apache.hadoop.conf.Configuration(),
            Map.of("warehouse", warehouse.toUri().toString()));
    TableIdentifier id = TableIdentifier.of("db", "p");
    catalog
        .loadCatalog()
        .createTable(
            id,
            TestChanges.SCHEMA,
            PartitionSpec.builderFor(TestChanges.SCHEMA).bucket("id", 3).build(),
            Map.of("format-version", "3"));
    Configuration options = new Configuration();
    options.set(SinkOptions.DISTRIBUTION, distribution);
    IcebergCdcSink sink =
        IcebergCdcSink.builder()
            .table(TableLoader.fromCatalog(catalog, id))
            .options(options)
            .build();
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
    env.enableCheckpointing(1_000);
    ChangeEvent first = TestChanges.insert(1, "a", 1).withTable("src.p");
    MultiTableSink.Written written =
        MultiTableSink.writeTogether(
            env.fromData(ChangeEventTypeInfo.of(TestChanges.CHANGE_SCHEMA), first),
            Map.of("src.p", sink),
            Map.of("src.p", id.toString()),
            "tables-writer");

    Transformation<?> writer = written.committables().getTransformation();
    @SuppressWarnings("unchecked")
    KeySelector<ChangeEvent, TableKey> keys =
        (KeySelector<ChangeEvent, TableKey>)
            ((OneInputTransformation<?, ?>) writer).getStateKeySelector();
    Set<Integer> hashes = new TreeSet<>();
    boolean hashedApart = false;
    for (long key = 1; key <= 30; key++) {
      TableKey tableKey = keys.getKey(TestChanges.insert(key, "k" + key, key).withTable("src.p"));
      assertThat(tableKey.table()).isEqualTo("src.p");
      hashes.add(tableKey.hash());
      hashedApart |= tableKey.hashedApart();
    }
    if (distribution == Distribution.PARTITION) {
      assertThat(hashes).as("one hash per bucket").hasSize(3);
      assertThat(hashedApart).isTrue();
    } else {
      assertThat(hashes).hasSize(30);
      assertThat(hashedApart).isFalse();
    }
  }
}
