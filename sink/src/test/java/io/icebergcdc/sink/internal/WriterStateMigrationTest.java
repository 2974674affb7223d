package io.icebergcdc.sink.internal;

import static io.icebergcdc.cdc.TestChanges.insert;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.ChangeStats;
import io.icebergcdc.cdc.TableKey;
import io.icebergcdc.cdc.TestChanges;
import io.icebergcdc.cdc.typeutils.TableKeyTypeInfo;
import io.icebergcdc.commit.ChangeCommittable;
import io.icebergcdc.commit.ChangeCommittableSerializer;
import io.icebergcdc.sink.RefusedRestoreException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.flink.core.io.SimpleVersionedSerializerTypeSerializerProxy;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.apache.flink.streaming.util.OperatorSnapshotUtil;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.flink.CatalogLoader;
import org.apache.iceberg.flink.TableLoader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The key-indexed writer restores the state of the build before tables distributed by partition
 * joined the writer of several tables (0684da9), kept under {@code
 * src/test/resources/snapshot/before-partition-hashing/}, whose writers recorded no account of how
 * they hashed their keys: the writer of several tables as hashed by primary key (the only way it
 * hashed then), refusing to read it as hashed by partition; the writer of one table as its uid says
 * (one uid per distribution). Each restored writer drops the changes it applied before as
 * duplicates: its dedup's state is read, not started afresh.
 */
class WriterStateMigrationTest {

  private static final TableIdentifier ID = TableIdentifier.of("db", "p");
  private static final String BUILD = "before-partition-hashing";
  private static final String SHARED_BY_KEY = "writer-of-several-tables-by-key.snapshot";
  private static final String OWN_BY_PARTITION = "writer-of-one-table-by-partition.snapshot";
  private static final int KEYS = 30;

  @TempDir Path warehouse;

  @Test
  void restoresTheStateOfTheBuildBeforeKeysWereHashedByPartition() throws Exception {
    createTable();
    String write = System.getProperty("writer.write-snapshots");
    if (write != null) {
      writeSnapshots(Path.of(write));
      return;
    }
    OperatorSubtaskState shared = read(SHARED_BY_KEY);
    PositionDeltaWriterOperator<TableKey> byKey =
        PositionDeltaWriterOperator.ofTables(Map.of("src.p", writer(false, true)));
    try (var harness = harness(byKey, byKey.streamKeys(), TableKeyTypeInfo.INSTANCE, shared)) {
      List<ChangeEvent> changes = new ArrayList<>(inserts("src.p", KEYS + 1));
      assertCounts(apply(harness, 2, changes), KEYS, 1);
    }
    PositionDeltaWriterOperator<TableKey> byPartition =
        PositionDeltaWriterOperator.ofTables(Map.of("src.p", writer(true, true)));
    assertThatThrownBy(
            () ->
                harness(byPartition, byPartition.streamKeys(), TableKeyTypeInfo.INSTANCE, shared)
                    .close())
        .isInstanceOf(RefusedRestoreException.class)
        .hasMessageContaining("the restored state hashed its keys over the writers by primary key")
        .hasMessageContaining("this job hashes them by partition (spec 0)");

    try (var harness =
        harness(
            writer(true, false),
            partitioned(),
            PartitionedKeyTypeInfo.INSTANCE,
            read(OWN_BY_PARTITION))) {
      assertCounts(apply(harness, 2, inserts(null, KEYS + 1)), KEYS, 1);
    }
  }

  private static OperatorSubtaskState read(String file) throws Exception {
    return OperatorSnapshotUtil.readStateHandle(
        WriterStateMigrationTest.class.getResource("/snapshot/" + BUILD + "/" + file).getPath());
  }

  private static void assertCounts(List<ChangeStats> stats, long duplicates, long inserted) {
    assertThat(stats.stream().mapToLong(ChangeStats::duplicatesDropped).sum())
        .as("changes applied before the restore, dropped as duplicates")
        .isEqualTo(duplicates);
    assertThat(stats.stream().mapToLong(ChangeStats::inserted).sum()).isEqualTo(inserted);
  }

  /** The table both writers write: keyed by id, partitioned by a bucket of it. */
  private Table createTable() {
    return catalog()
        .loadCatalog()
        .createTable(
            ID,
            TestChanges.SCHEMA,
            org.apache.iceberg.PartitionSpec.builderFor(TestChanges.SCHEMA).bucket("id", 3).build(),
            Map.of("format-version", "3"));
  }

  private CatalogLoader catalog() {
    return CatalogLoader.hadoop(
        "test", new Configuration(), Map.of("warehouse", warehouse.toUri().toString()));
  }

  /** A writer of table db.p, keyed by primary key or by partition. */
  private PositionDeltaWriterOperator<?> writer(boolean byPartition, boolean committedAs) {
    CatalogLoader catalog = catalog();
    io.icebergcdc.cdc.ChangeSchema schema = TestChanges.CHANGE_SCHEMA;
    PositionDeltaWriterOperator<?> writer =
        byPartition
            ? new PositionDeltaWriterOperator<>(
                TableLoader.fromCatalog(catalog, ID),
                schema,
                new PartitionedKeySelector(schema, catalog.loadCatalog().loadTable(ID).spec()),
                false,
                Map.of(),
                Duration.ofDays(1),
                io.icebergcdc.dedup.AmbiguousChangePolicy.FAIL,
                1.0)
            : new PositionDeltaWriterOperator<>(
                TableLoader.fromCatalog(catalog, ID),
                schema,
                new RowKeySelector(),
                false,
                Map.of(),
                Duration.ofDays(1),
                io.icebergcdc.dedup.AmbiguousChangePolicy.FAIL,
                1.0);
    if (committedAs) {
      writer.setCommittedAs(ID.toString());
    }
    return writer;
  }

  private static <K>
      KeyedOneInputStreamOperatorTestHarness<K, ChangeEvent, ChangeCommittable> harness(
          org.apache.flink.streaming.api.operators.OneInputStreamOperator<
                  ChangeEvent, ChangeCommittable>
              operator,
          org.apache.flink.api.java.functions.KeySelector<ChangeEvent, K> keys,
          org.apache.flink.api.common.typeinfo.TypeInformation<K> keyType,
          OperatorSubtaskState restore)
          throws Exception {
    KeyedOneInputStreamOperatorTestHarness<K, ChangeEvent, ChangeCommittable> harness =
        new KeyedOneInputStreamOperatorTestHarness<>(operator, keys, keyType, 128, 1, 0);
    harness.setup(
        new SimpleVersionedSerializerTypeSerializerProxy<>(ChangeCommittableSerializer::new));
    if (restore != null) {
      harness.initializeState(restore);
    }
    harness.open();
    return harness;
  }

  /** The inserts of keys 1 to {@code keys}, each at its own position, of table {@code table}. */
  private static List<ChangeEvent> inserts(String table, int keys) {
    List<ChangeEvent> changes = new ArrayList<>();
    for (long key = 1; key <= keys; key++) {
      ChangeEvent change = insert(key, "p" + key, 100 + key);
      changes.add(table == null ? change : change.withTable(table));
    }
    return changes;
  }

  /** Applies {@code changes} and takes checkpoint {@code id}: the statistics of its output. */
  private static List<io.icebergcdc.cdc.ChangeStats> apply(
      KeyedOneInputStreamOperatorTestHarness<?, ChangeEvent, ChangeCommittable> harness,
      long id,
      List<ChangeEvent> changes)
      throws Exception {
    harness.getOutput().clear();
    for (ChangeEvent change : changes) {
      harness.processElement(new StreamRecord<>(change));
    }
    harness.prepareSnapshotPreBarrier(id);
    List<io.icebergcdc.cdc.ChangeStats> stats = new ArrayList<>();
    for (ChangeCommittable committable : harness.extractOutputValues()) {
      stats.add(committable.stats());
    }
    return stats;
  }

  /**
   * Writes the states this test restores, into {@code dir}: run with {@code
   * -Dwriter.write-snapshots=DIR} on the build whose state is to be kept. This method uses only
   * what that build (0684da9) had; the files were written by a copy of this class there without the
   * reading part, which uses this build's {@code streamKeys} and {@code RefusedRestoreException}.
   */
  private void writeSnapshots(Path dir) throws Exception {
    java.nio.file.Files.createDirectories(dir);
    PositionDeltaWriterOperator<TableKey> shared =
        PositionDeltaWriterOperator.ofTables(Map.of("src.p", writer(false, true)));
    try (var harness = harness(shared, new TableKeySelector(), TableKeyTypeInfo.INSTANCE, null)) {
      apply(harness, 1, inserts("src.p", KEYS));
      OperatorSnapshotUtil.writeStateHandle(
          harness.snapshot(1, 1), dir.resolve(SHARED_BY_KEY).toString());
    }
    PositionDeltaWriterOperator<?> own = writer(true, false);
    try (var harness = harness(own, partitioned(), PartitionedKeyTypeInfo.INSTANCE, null)) {
      apply(harness, 1, inserts(null, KEYS));
      OperatorSnapshotUtil.writeStateHandle(
          harness.snapshot(1, 1), dir.resolve(OWN_BY_PARTITION).toString());
    }
  }

  private PartitionedKeySelector partitioned() {
    return new PartitionedKeySelector(
        TestChanges.CHANGE_SCHEMA, catalog().loadCatalog().loadTable(ID).spec());
  }
}
