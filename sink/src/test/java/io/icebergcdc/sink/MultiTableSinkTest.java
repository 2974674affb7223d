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
    CatalogLoader catalog = catalog();
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
   * A table that appears while the job runs is taken in flight whether its changes are distributed
   * by primary key or by partition, and whether its rows are deleted by position or by key. One the
   * shared writer can no longer write (its primary key dropped since): taken back from a restored
   * state, it ends the job with a line naming it, which Flink does not retry; met at its first
   * change, it fails the writer as before, so that after Flink's restart the source's check builds
   * the job again with it. Its committer takes it either way.
   */
  @org.junit.jupiter.api.Test
  void aTableTakenInFlightThatCanNoLongerBeWrittenWithTheOthersIsRefusedAtTheRestore() {
    CatalogLoader catalog = catalog();
    catalog
        .loadCatalog()
        .createTable(
            TableIdentifier.of("db", "p"),
            TestChanges.SCHEMA,
            PartitionSpec.builderFor(TestChanges.SCHEMA).bucket("id", 3).build(),
            Map.of("format-version", "3", "write.distribution-mode", "hash"));
    NewTables byPartition =
        new NewTables(new SharedCatalog(catalog), new Configuration(), null, true);
    assertThat(byPartition.takesInFlight("db.p")).isTrue();
    assertThat(byPartition.writerSinkOf("db.p", null, true).writesWithOthers()).isTrue();
    Configuration equalityOptions = new Configuration();
    equalityOptions.set(SinkOptions.DELETE_MODE, DeleteMode.EQUALITY);
    NewTables equality = new NewTables(new SharedCatalog(catalog), equalityOptions, null, true);
    assertThat(equality.takesInFlight("db.p")).as("deleting by key").isTrue();
    assertThat(equality.writerSinkOf("db.p", null, true).writesWithOthers()).isTrue();

    catalog
        .loadCatalog()
        .loadTable(TableIdentifier.of("db", "p"))
        .updateSchema()
        .setIdentifierFields(java.util.List.of())
        .commit();
    assertThat(byPartition.takesInFlight("db.p")).isFalse();
    org.assertj.core.api.Assertions.assertThatThrownBy(
            () -> byPartition.writerSinkOf("db.p", null, true))
        .isInstanceOf(RefusedRestoreException.class)
        .hasMessageStartingWith("table db.p, which appeared while the job ran,")
        .hasMessageContaining("no primary key");
    org.assertj.core.api.Assertions.assertThatThrownBy(
            () -> byPartition.writerSinkOf("db.p", null, false))
        .isExactlyInstanceOf(IllegalStateException.class);
    assertThat(byPartition.sinkOf("db.p").tableName()).isNotNull();
  }

  /**
   * A table taken while the job runs keeps the hashing it was taken with, recorded in it: after its
   * distribution mode and its partition spec changed, the writer built for it and the stream still
   * hash its keys by the spec it had (so that a task that meets it later agrees with those that met
   * it before), and taking it again leaves the record as it is. A table not taken that way, and the
   * job's own tables, are hashed as they are now.
   */
  @org.junit.jupiter.api.Test
  void aTableTakenInFlightKeepsTheHashingItWasTakenWith() throws Exception {
    CatalogLoader catalog = catalog();
    org.apache.iceberg.catalog.Catalog tables = catalog.loadCatalog();
    TableIdentifier id = TableIdentifier.of("db", "p");
    org.apache.iceberg.Table table =
        tables.createTable(
            id,
            TestChanges.SCHEMA,
            PartitionSpec.builderFor(TestChanges.SCHEMA).bucket("id", 3).build(),
            Map.of("format-version", "3", "write.distribution-mode", "hash"));
    NewTables newTables =
        new NewTables(new SharedCatalog(catalog), new Configuration(), null, true);
    newTables.pinKeyHashing("db.p");
    table.refresh();
    String pin = table.properties().get(KeyHashingPin.PROPERTY);
    assertThat(pin).startsWith("partition-spec:{\"spec-id\":0,").contains("bucket[3]");

    table
        .updateSpec()
        .removeField(org.apache.iceberg.expressions.Expressions.bucket("id", 3))
        .addField(org.apache.iceberg.expressions.Expressions.bucket("id", 5))
        .commit();
    table.updateProperties().set("write.distribution-mode", "none").commit();
    newTables.pinKeyHashing("db.p");
    table.refresh();
    assertThat(table.properties()).containsEntry(KeyHashingPin.PROPERTY, pin);
    assertThat(table.spec().specId()).isEqualTo(1);
    assertThat(newTables.writerSinkOf("db.p", null, false).keyHashing()).isEqualTo(pin);
    // Its committer, and the check whether it is taken in flight, read the table as it is.
    assertThat(newTables.sinkOf("db.p").keyHashing()).isEqualTo("primary-key");

    // The stream of a writer built before the table appeared hashes it so too.
    TableIdentifier own = TableIdentifier.of("db", "own");
    tables.createTable(
        own, TestChanges.SCHEMA, PartitionSpec.unpartitioned(), Map.of("format-version", "3"));
    KeySelector<ChangeEvent, TableKey> keys = streamKeys(catalog, own, newTables);
    Set<Integer> hashes = new TreeSet<>();
    for (long key = 1; key <= 30; key++) {
      TableKey p = keys.getKey(TestChanges.insert(key, "p", key).withTable("db.p"));
      assertThat(p.hashedApart()).isTrue();
      hashes.add(p.hash());
    }
    assertThat(hashes).as("one hash per bucket of the pinned spec").hasSize(3);

    // The job's own tables are hashed as they are when it is built.
    IcebergCdcSink ownSink =
        IcebergCdcSink.builder()
            .table(TableLoader.fromCatalog(catalog, id))
            .options(new Configuration())
            .build();
    assertThat(ownSink.keyHashing()).isEqualTo("primary-key");
    // A job that takes tables in flight records its own tables' hashing over a record that says
    // otherwise, for the day it takes one back in flight.
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
    env.enableCheckpointing(1_000);
    MultiTableSink.writeTogether(
        env.fromData(
            ChangeEventTypeInfo.of(TestChanges.CHANGE_SCHEMA),
            TestChanges.insert(1, "a", 1).withTable("src.p")),
        Map.of("src.p", ownSink),
        Map.of("src.p", id.toString()),
        "tables-writer",
        newTables);
    table.refresh();
    assertThat(table.properties()).containsEntry(KeyHashingPin.PROPERTY, "primary-key");

    // A record of a spec the table no longer has is read from its JSON.
    table
        .updateProperties()
        .set(
            KeyHashingPin.PROPERTY,
            pin.replace("\"spec-id\":0", "\"spec-id\":7").replace("bucket[3]", "bucket[7]"))
        .commit();
    assertThat(newTables.writerSinkOf("db.p", null, false).keyHashing())
        .contains("\"spec-id\":7")
        .contains("bucket[7]");
    // One that cannot be read ends the job where the source takes the table, naming it.
    table.updateProperties().set(KeyHashingPin.PROPERTY, "primary_key").commit();
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> newTables.pinKeyHashing("db.p"))
        .isInstanceOf(io.icebergcdc.cdc.RefusedSourceException.class)
        .hasMessageContaining("table test.db.p has iceberg-cdc.keys-hashed-by = 'primary_key'")
        .hasMessageContaining("remove the property");
    // Without a record (a table taken by an earlier build), as the table is now.
    table.updateProperties().remove(KeyHashingPin.PROPERTY).commit();
    assertThat(newTables.writerSinkOf("db.p", null, false).keyHashing()).isEqualTo("primary-key");
  }

  /**
   * A table taken in flight, distributed by partition of an int key column that it widened to a
   * long since, is taken back by a restored writer in the schema the writer was built with: its
   * keys' partitions are read as that schema has them (ints), and hash as the stream's look at the
   * table now (longs) hashes them.
   */
  @org.junit.jupiter.api.Test
  void aRestoredWriterOfATableWhoseKeyWasWidenedHashesItsKeysAsTheStreamDoes() throws Exception {
    CatalogLoader catalog = catalog();
    org.apache.iceberg.Schema schema =
        new org.apache.iceberg.Schema(
            java.util.List.of(
                org.apache.iceberg.types.Types.NestedField.required(
                    1, "id", org.apache.iceberg.types.Types.IntegerType.get()),
                org.apache.iceberg.types.Types.NestedField.optional(
                    2, "name", org.apache.iceberg.types.Types.StringType.get())),
            Set.of(1));
    org.apache.iceberg.Table table =
        catalog
            .loadCatalog()
            .createTable(
                TableIdentifier.of("db", "w"),
                schema,
                PartitionSpec.builderFor(schema).identity("id").build(),
                Map.of("format-version", "3", "write.distribution-mode", "hash"));
    NewTables newTables =
        new NewTables(new SharedCatalog(catalog), new Configuration(), null, true);
    newTables.pinKeyHashing("db.w");
    int built = table.schema().schemaId();
    table.updateSchema().updateColumn("id", org.apache.iceberg.types.Types.LongType.get()).commit();
    io.icebergcdc.sink.internal.ChangeKeySelector<?> restored =
        newTables.writerSinkOf("db.w", built, true).keySelector();
    io.icebergcdc.sink.internal.ChangeKeySelector<?> now =
        newTables.writerSinkOf("db.w", null, false).keySelector();
    table.refresh();
    io.icebergcdc.cdc.ChangeSchema before =
        new io.icebergcdc.cdc.ChangeSchema(table.schemas().get(built));
    io.icebergcdc.cdc.ChangeSchema after = new io.icebergcdc.cdc.ChangeSchema(table.schema());
    for (int key : new int[] {1, 7, 42, -5}) {
      org.apache.flink.table.data.GenericRowData ofBefore =
          org.apache.flink.table.data.GenericRowData.of(
              key, org.apache.flink.table.data.StringData.fromString("n"));
      org.apache.flink.table.data.GenericRowData ofAfter =
          org.apache.flink.table.data.GenericRowData.of(
              (long) key, org.apache.flink.table.data.StringData.fromString("n"));
      Object restoredKey = restored.getKey(change(before, ofBefore));
      Object nowKey = now.getKey(change(after, ofAfter));
      assertThat(((io.icebergcdc.sink.internal.PartitionedKey) restoredKey).partitionHash())
          .as("key %s", key)
          .isEqualTo(((io.icebergcdc.sink.internal.PartitionedKey) nowKey).partitionHash());
    }
  }

  private static ChangeEvent change(
      io.icebergcdc.cdc.ChangeSchema schema, org.apache.flink.table.data.RowData row) {
    return new ChangeEvent(
        "db.w",
        io.icebergcdc.cdc.Operation.INSERT,
        schema.keyOf(row),
        null,
        row,
        io.icebergcdc.cdc.SourceSequence.postgresLsn(1),
        0L);
  }

  /**
   * The shared writer's stream, keyed before a table appeared, hashes a table distributed by
   * partition that appears by its partition, and one distributed by primary key by its key.
   */
  @org.junit.jupiter.api.Test
  void theStreamHashesATableThatAppearsAsItsWriterDoes() throws Exception {
    CatalogLoader catalog = catalog();
    org.apache.iceberg.catalog.Catalog tables = catalog.loadCatalog();
    TableIdentifier own = TableIdentifier.of("db", "own");
    tables.createTable(
        own, TestChanges.SCHEMA, PartitionSpec.unpartitioned(), Map.of("format-version", "3"));
    tables.createTable(
        TableIdentifier.of("db", "p"),
        TestChanges.SCHEMA,
        PartitionSpec.builderFor(TestChanges.SCHEMA).bucket("id", 3).build(),
        Map.of("format-version", "3", "write.distribution-mode", "hash"));
    tables.createTable(
        TableIdentifier.of("db", "k"),
        TestChanges.SCHEMA,
        PartitionSpec.unpartitioned(),
        Map.of("format-version", "3"));
    KeySelector<ChangeEvent, TableKey> keys =
        streamKeys(
            catalog,
            own,
            new NewTables(new SharedCatalog(catalog), new Configuration(), null, true));
    Set<Integer> hashesOfP = new TreeSet<>();
    for (long key = 1; key <= 30; key++) {
      TableKey p = keys.getKey(TestChanges.insert(key, "p", key).withTable("db.p"));
      assertThat(p.hashedApart()).isTrue();
      hashesOfP.add(p.hash());
      TableKey k = keys.getKey(TestChanges.insert(key, "k", key).withTable("db.k"));
      assertThat(k.hashedApart()).isFalse();
      assertThat(keys.getKey(TestChanges.insert(key, "o", key).withTable("db.own")).hashedApart())
          .isFalse();
    }
    assertThat(hashesOfP).as("one hash per bucket").hasSize(3);
  }

  /**
   * The key selector of the stream of the shared writer of table {@code own}, which takes the
   * tables that appear as {@code newTables} says, as Flink would ship it to a task: serialized and
   * read back.
   */
  private static KeySelector<ChangeEvent, TableKey> streamKeys(
      CatalogLoader catalog, TableIdentifier own, NewTables newTables) throws Exception {
    IcebergCdcSink sink =
        IcebergCdcSink.builder()
            .table(TableLoader.fromCatalog(catalog, own))
            .options(new Configuration())
            .build();
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
    env.enableCheckpointing(1_000);
    MultiTableSink.Written written =
        MultiTableSink.writeTogether(
            env.fromData(
                ChangeEventTypeInfo.of(TestChanges.CHANGE_SCHEMA),
                TestChanges.insert(1, "a", 1).withTable("db.own")),
            Map.of("db.own", sink),
            Map.of("db.own", own.toString()),
            "tables-writer",
            newTables);
    @SuppressWarnings("unchecked")
    KeySelector<ChangeEvent, TableKey> keys =
        (KeySelector<ChangeEvent, TableKey>)
            ((OneInputTransformation<?, ?>) written.committables().getTransformation())
                .getStateKeySelector();
    return org.apache.flink.util.InstantiationUtil.clone(
        keys, MultiTableSinkTest.class.getClassLoader());
  }

  /** The Hadoop catalog of the test's warehouse. */
  private CatalogLoader catalog() {
    return CatalogLoader.hadoop(
        "test",
        new org.apache.hadoop.conf.Configuration(),
        Map.of("warehouse", warehouse.toUri().toString()));
  }
}
