package io.icebergcdc.sink.internal;

import static io.icebergcdc.cdc.TestChanges.insert;
import static io.icebergcdc.cdc.TestChanges.update;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.TableKey;
import io.icebergcdc.cdc.TestChanges;
import io.icebergcdc.cdc.typeutils.TableKeyTypeInfo;
import io.icebergcdc.commit.ChangeCommittable;
import io.icebergcdc.commit.ChangeCommittableSerializer;
import io.icebergcdc.commit.ContentFileCodec;
import io.icebergcdc.sink.CdcTables;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.flink.core.io.SimpleVersionedSerializerTypeSerializerProxy;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.AbstractStreamOperatorTestHarness;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.flink.CatalogLoader;
import org.apache.iceberg.flink.TableLoader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The dedup and writer of several tables in one operator ({@link
 * PositionDeltaWriterOperator#ofTables}): each table keeps its own files, index and dedup state,
 * whatever keys the others have, through a snapshot, a restore and a rescale.
 */
class WriterOfSeveralTablesTest {

  private static final int MAX_PARALLELISM = 128;

  /** The tables by the name their changes carry. */
  private static final Map<String, TableIdentifier> TABLES =
      Map.of("src.a", TableIdentifier.of("db", "a"), "src.b", TableIdentifier.of("db", "b"));

  @TempDir Path warehouse;

  private CatalogLoader catalog() {
    return CatalogLoader.hadoop(
        "test", new Configuration(), Map.of("warehouse", warehouse.toUri().toString()));
  }

  private Map<String, Table> tables() {
    Map<String, Table> tables = new TreeMap<>();
    TABLES.forEach(
        (name, id) ->
            tables.put(
                name,
                CdcTables.createOrLoad(
                    catalog().loadCatalog(), id, TestChanges.SCHEMA, null, 3, List.of("id"))));
    return tables;
  }

  /** The most keys per table the in-memory index holds; 0 keeps the entries in keyed state. */
  private long indexMaxKeys = 4_000_000;

  /** Whether a table's writer that starts without state loads the table's rows into its index. */
  private boolean bootstrap;

  /** Whether the harness keeps keyed state in RocksDB rather than on the heap. */
  private boolean rocksDb;

  private KeyedOneInputStreamOperatorTestHarness<TableKey, ChangeEvent, ChangeCommittable> harness(
      OperatorSubtaskState restore, int parallelism, int subtask) throws Exception {
    return harness(restore, parallelism, subtask, TABLES);
  }

  private KeyedOneInputStreamOperatorTestHarness<TableKey, ChangeEvent, ChangeCommittable> harness(
      OperatorSubtaskState restore,
      int parallelism,
      int subtask,
      Map<String, TableIdentifier> tables)
      throws Exception {
    Map<String, PositionDeltaWriterOperator<?>> writers = new LinkedHashMap<>();
    tables.forEach(
        (name, id) -> {
          PositionDeltaWriterOperator<?> writer =
              new PositionDeltaWriterOperator<>(
                  TableLoader.fromCatalog(catalog(), id),
                  TestChanges.CHANGE_SCHEMA,
                  new RowKeySelector(),
                  bootstrap,
                  Map.of(),
                  Duration.ofDays(1),
                  io.icebergcdc.dedup.AmbiguousChangePolicy.FAIL,
                  1.0);
          writer.setCommittedAs(id.toString());
          writer.setIndexMaxKeys(indexMaxKeys);
          writers.put(name, writer);
        });
    KeyedOneInputStreamOperatorTestHarness<TableKey, ChangeEvent, ChangeCommittable> harness =
        new KeyedOneInputStreamOperatorTestHarness<>(
            PositionDeltaWriterOperator.ofTables(writers),
            new TableKeySelector(),
            TableKeyTypeInfo.INSTANCE,
            MAX_PARALLELISM,
            parallelism,
            subtask);
    if (rocksDb) {
      harness.setStateBackend(new org.apache.flink.state.rocksdb.EmbeddedRocksDBStateBackend());
    }
    harness.setup(
        new SimpleVersionedSerializerTypeSerializerProxy<>(ChangeCommittableSerializer::new));
    if (restore != null) {
      harness.initializeState(restore);
    }
    harness.open();
    return harness;
  }

  /** {@code change} as a change of the table its changes name {@code table}. */
  private static ChangeEvent of(String table, ChangeEvent change) {
    return new ChangeEvent(
        table,
        change.operation(),
        change.key(),
        change.before(),
        change.after(),
        change.sequence(),
        change.sourceTimestampMillis());
  }

  /** The contributions of a checkpoint, by the table they are tagged with. */
  private static Map<String, ChangeCommittable> checkpoint(
      KeyedOneInputStreamOperatorTestHarness<TableKey, ChangeEvent, ChangeCommittable> harness,
      long id,
      ChangeEvent... changes)
      throws Exception {
    harness.getOutput().clear();
    for (ChangeEvent change : changes) {
      harness.processElement(new StreamRecord<>(change));
    }
    harness.prepareSnapshotPreBarrier(id);
    Map<String, ChangeCommittable> out = new TreeMap<>();
    for (ChangeCommittable committable : harness.extractOutputValues()) {
      assertThat(out.put(committable.table(), committable)).as("one per table").isNull();
    }
    return out;
  }

  private static String dataFile(ChangeCommittable committable, Table table) {
    assertThat(committable.dataFiles()).hasSize(1);
    return ContentFileCodec.decodeDataFile(committable.dataFiles().get(0), table.specs())
        .location();
  }

  private static void append(Table table, ChangeCommittable committable) {
    PositionDeltaWriterOperatorTest.append(table, committable);
  }

  @Test
  void eachTableHasItsOwnFilesIndexAndDedupForTheSameKeys() throws Exception {
    Map<String, Table> tables = tables();
    try (var harness = harness(null, 1, 0)) {
      Map<String, ChangeCommittable> first =
          checkpoint(
              harness,
              1,
              of("src.a", insert(1, "a1", 10)),
              of("src.b", insert(1, "b1", 5)),
              of("src.b", insert(2, "b2", 6)));
      assertThat(first).containsOnlyKeys("db.a", "db.b");
      String fileOfA = dataFile(first.get("db.a"), tables.get("src.a"));
      String fileOfB = dataFile(first.get("db.b"), tables.get("src.b"));
      assertThat(fileOfA).contains("/db/a/");
      assertThat(fileOfB).contains("/db/b/");
      assertThat(first.get("db.a").stats().inserted()).isEqualTo(1);
      assertThat(first.get("db.b").stats().inserted()).isEqualTo(2);
      append(tables.get("src.a"), first.get("db.a"));
      append(tables.get("src.b"), first.get("db.b"));
      harness.notifyOfCompletedCheckpoint(1);

      // Key 1 of b at sequence 7 is newer than b's own, older than a's: it updates b alone.
      Map<String, ChangeCommittable> second =
          checkpoint(harness, 2, of("src.b", update(1, "b1'", 7)), of("src.a", update(1, "a0", 7)));
      assertThat(second.get("db.b").positionDeletes().files()).containsExactly(fileOfB);
      assertThat(second.get("db.b").positionDeletes().positions(fileOfB)).containsExactly(0);
      assertThat(second.get("db.b").stats().updated()).isEqualTo(1);
      assertThat(second.get("db.a").stats().staleDropped()).isEqualTo(1);
      assertThat(second.get("db.a").dataFiles()).isEmpty();
    }
  }

  @org.junit.jupiter.params.ParameterizedTest(name = "{0}")
  @org.junit.jupiter.params.provider.ValueSource(strings = {"index", "keyed state", "rocksdb"})
  void aRestoreAndARescaleKeepEachTablesEntries(String entries) throws Exception {
    long maxKeys = entries.equals("index") ? 4_000_000 : 0;
    indexMaxKeys = maxKeys;
    rocksDb = entries.equals("rocksdb");
    Map<String, Table> tables = tables();
    List<OperatorSubtaskState> states = new ArrayList<>();
    Map<String, String> fileOf = new TreeMap<>();
    for (int subtask = 0; subtask < 2; subtask++) {
      try (var harness = harness(null, 2, subtask)) {
        List<ChangeEvent> mine = new ArrayList<>();
        for (long id = 1; id <= 20; id++) {
          for (String table : TABLES.keySet()) {
            ChangeEvent change = of(table, insert(id, table + id, 100));
            if (KeyIndexBootstrap.owns(
                new TableKey(table, change.key()), harness.getEnvironment().getTaskInfo())) {
              mine.add(change);
            }
          }
        }
        Map<String, ChangeCommittable> written =
            checkpoint(harness, 1, mine.toArray(new ChangeEvent[0]));
        for (String table : TABLES.keySet()) {
          ChangeCommittable committable = written.get(TABLES.get(table).toString());
          append(tables.get(table), committable);
          fileOf.put(table + "/" + subtask, dataFile(committable, tables.get(table)));
        }
        OperatorSubtaskState state = harness.snapshot(1, 1);
        // The entries of both tables: in the in-memory index, which the operator writes to raw
        // keyed state for all its tables (without it, 8 bytes a key group: a format and no
        // table), or in keyed state.
        long rawBytes = state.getRawKeyedState().getStateSize();
        if (maxKeys == 0) {
          assertThat(rawBytes).isLessThanOrEqualTo(8L * MAX_PARALLELISM / 2);
        } else {
          assertThat(rawBytes).isGreaterThan(8L * MAX_PARALLELISM / 2 + 20 * 16);
        }
        states.add(state);
      }
    }
    OperatorSubtaskState merged =
        AbstractStreamOperatorTestHarness.repackageState(
            states.toArray(new OperatorSubtaskState[0]));
    OperatorSubtaskState rescaled =
        AbstractStreamOperatorTestHarness.repartitionOperatorState(
            merged, MAX_PARALLELISM, 2, 1, 0);
    try (var harness = harness(rescaled, 1, 0)) {
      List<ChangeEvent> changes = new ArrayList<>();
      for (long id = 1; id <= 20; id++) {
        changes.add(of("src.a", update(id, "a'" + id, 101)));
        // Older than b's rows: every one stale.
        changes.add(of("src.b", update(id, "b'" + id, 99)));
      }
      Map<String, ChangeCommittable> after =
          checkpoint(harness, 2, changes.toArray(new ChangeEvent[0]));
      ChangeCommittable a = after.get("db.a");
      assertThat(a.stats().updated()).isEqualTo(20);
      assertThat(a.equalityFallbacks()).isZero();
      assertThat(a.deleteFiles()).isEmpty();
      assertThat(a.positionDeletes().files())
          .containsExactlyInAnyOrder(fileOf.get("src.a/0"), fileOf.get("src.a/1"));
      ChangeCommittable b = after.get("db.b");
      assertThat(b.stats().staleDropped()).isEqualTo(20);
      assertThat(b.dataFiles()).isEmpty();
      assertThat(b.positionDeletes().isEmpty()).isTrue();
    }
  }

  @Test
  void aTableTakenOutIsDroppedAndATableAddedStartsEmpty() throws Exception {
    Map<String, Table> tables = tables();
    OperatorSubtaskState state;
    try (var harness = harness(null, 1, 0)) {
      Map<String, ChangeCommittable> written =
          checkpoint(harness, 1, of("src.a", insert(1, "a", 10)), of("src.b", insert(1, "b", 10)));
      append(tables.get("src.a"), written.get("db.a"));
      append(tables.get("src.b"), written.get("db.b"));
      harness.notifyOfCompletedCheckpoint(1);
      state = harness.snapshot(1, 1);
    }
    Map<String, TableIdentifier> now =
        Map.of("src.a", TABLES.get("src.a"), "src.c", TableIdentifier.of("db", "c"));
    CdcTables.createOrLoad(
        catalog().loadCatalog(), now.get("src.c"), TestChanges.SCHEMA, null, 3, List.of("id"));
    try (var harness = harness(state, 1, 0, now)) {
      Map<String, ChangeCommittable> after =
          checkpoint(harness, 2, of("src.a", update(1, "a'", 5)), of("src.c", insert(1, "c", 1)));
      assertThat(after.get("db.a").stats().staleDropped()).isEqualTo(1);
      assertThat(after.get("db.c").stats().inserted()).isEqualTo(1);
      assertThat(after.get("db.c").equalityFallbacks()).isZero();
    }
  }

  /**
   * A table taken out of the job and put back starts again without state: its rows, written while
   * it was in the job the first time, are loaded into its index, each subtask its own keys.
   */
  @org.junit.jupiter.params.ParameterizedTest(name = "index max keys {0}")
  @org.junit.jupiter.params.provider.ValueSource(longs = {4_000_000, 0})
  void aTablePutBackStartsAgainFromItsRows(long maxKeys) throws Exception {
    indexMaxKeys = maxKeys;
    bootstrap = true;
    Map<String, Table> tables = tables();
    OperatorSubtaskState state;
    try (var harness = harness(null, 1, 0)) {
      List<ChangeEvent> changes = new ArrayList<>();
      for (long id = 1; id <= 20; id++) {
        changes.add(of("src.a", insert(id, "a" + id, 10)));
        changes.add(of("src.b", insert(id, "b" + id, 10)));
      }
      Map<String, ChangeCommittable> written =
          checkpoint(harness, 1, changes.toArray(new ChangeEvent[0]));
      append(tables.get("src.a"), written.get("db.a"));
      append(tables.get("src.b"), written.get("db.b"));
      harness.notifyOfCompletedCheckpoint(1);
      state = harness.snapshot(1, 1);
    }
    // Without b: its state is dropped, and so is not in the next snapshot.
    try (var harness = harness(state, 1, 0, Map.of("src.a", TABLES.get("src.a")))) {
      checkpoint(harness, 2, of("src.a", update(1, "a'", 11)));
      state = harness.snapshot(2, 2);
    }
    // b again, at parallelism 2: each subtask loads the rows of its own keys of b.
    OperatorSubtaskState merged = state;
    for (int subtask = 0; subtask < 2; subtask++) {
      OperatorSubtaskState part =
          AbstractStreamOperatorTestHarness.repartitionOperatorState(
              merged, MAX_PARALLELISM, 1, 2, subtask);
      try (var harness = harness(part, 2, subtask)) {
        List<ChangeEvent> mine = new ArrayList<>();
        for (long id = 1; id <= 20; id++) {
          ChangeEvent change = of("src.b", update(id, "b'" + id, 12));
          if (KeyIndexBootstrap.owns(
              new TableKey("src.b", change.key()), harness.getEnvironment().getTaskInfo())) {
            mine.add(change);
          }
        }
        assertThat(mine).isNotEmpty();
        ChangeCommittable b = checkpoint(harness, 3, mine.toArray(new ChangeEvent[0])).get("db.b");
        assertThat(b.stats().updated()).isEqualTo(mine.size());
        assertThat(b.equalityFallbacks()).isZero();
        assertThat(b.deleteFiles()).isEmpty();
        long deleted = 0;
        for (String file : b.positionDeletes().files()) {
          deleted += b.positionDeletes().positions(file).length;
        }
        assertThat(deleted).as("rows of b deleted by position").isEqualTo(mine.size());
      }
    }
  }

  @Test
  void aChangeOfATableItDoesNotWriteFailsNamingIt() throws Exception {
    tables();
    try (var harness = harness(null, 1, 0)) {
      assertThatThrownBy(
              () -> harness.processElement(new StreamRecord<>(of("src.c", insert(1, "c", 1)))))
          .hasMessageContaining("src.c");
    }
  }

  @Test
  void onlyOperatorsOfOneTableTaggedForASharedCommitterJoin() {
    PositionDeltaWriterOperator<?> untagged =
        new PositionDeltaWriterOperator<>(
            TableLoader.fromCatalog(catalog(), TableIdentifier.of("db", "a")),
            TestChanges.CHANGE_SCHEMA,
            new RowKeySelector(),
            false,
            Map.of(),
            Duration.ofDays(1),
            io.icebergcdc.dedup.AmbiguousChangePolicy.FAIL,
            1.0);
    assertThatThrownBy(() -> PositionDeltaWriterOperator.ofTables(Map.of("src.a", untagged)))
        .hasMessageContaining("src.a")
        .hasMessageContaining("not tagged");
  }
}
