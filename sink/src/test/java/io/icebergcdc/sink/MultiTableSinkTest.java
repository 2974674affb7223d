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

  /**
   * A table taken while the job ran, keyed by primary key by the shared writer, that would now be
   * distributed by partition (its {@code write.distribution-mode} changed): taken back from a
   * restored state, it ends the job with a line naming it, which Flink does not retry; met at its
   * first change, it fails the writer as before, so that after Flink's restart the source's check
   * builds the job again with it. Its committer takes it either way, and a table distributed by
   * primary key is taken in flight.
   */
  @org.junit.jupiter.api.Test
  void aTableTakenInFlightThatCanNoLongerBeWrittenWithTheOthersIsRefusedAtTheRestore() {
    CatalogLoader catalog =
        CatalogLoader.hadoop(
            "test",
            new org.apache.hadoop.conf.Configuration(),
            Map.of("warehouse", warehouse.toUri().toString()));
    catalog
        .loadCatalog()
        .createTable(
            TableIdentifier.of("db", "p"),
            TestChanges.SCHEMA,
            PartitionSpec.builderFor(TestChanges.SCHEMA).bucket("id", 3).build(),
            Map.of("format-version", "3", "write.distribution-mode", "hash"));
    NewTables byPartition = new NewTables(catalog, new Configuration(), null, true);
    assertThat(byPartition.takesInFlight("db.p")).isFalse();
    org.assertj.core.api.Assertions.assertThatThrownBy(
            () -> byPartition.writerSinkOf("db.p", null, true))
        .isInstanceOf(RefusedRestoreException.class)
        .hasMessageStartingWith("table db.p, which appeared while the job ran,")
        .hasMessageContaining("is distributed by partition")
        .hasMessageContaining("write.distribution-mode");
    org.assertj.core.api.Assertions.assertThatThrownBy(
            () -> byPartition.writerSinkOf("db.p", null, false))
        .isExactlyInstanceOf(IllegalStateException.class);
    assertThat(byPartition.sinkOf("db.p").tableName()).isNotNull();

    Configuration byKeyOptions = new Configuration();
    byKeyOptions.set(SinkOptions.DISTRIBUTION, Distribution.PRIMARY_KEY);
    NewTables byKey = new NewTables(catalog, byKeyOptions, null, true);
    assertThat(byKey.takesInFlight("db.p")).isTrue();
    assertThat(byKey.writerSinkOf("db.p", null, true).takenInFlight()).isTrue();
  }
}
