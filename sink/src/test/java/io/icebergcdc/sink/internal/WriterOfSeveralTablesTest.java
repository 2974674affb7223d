package io.icebergcdc.sink.internal;

import static io.icebergcdc.cdc.TestChanges.delete;
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

  /** The catalog's {@code io-impl}, or null for its default. */
  private String fileIo;

  private CatalogLoader catalog() {
    Map<String, String> properties = new java.util.HashMap<>();
    properties.put("warehouse", warehouse.toUri().toString());
    if (fileIo != null) {
      properties.put("io-impl", fileIo);
    }
    return CatalogLoader.hadoop("test", new Configuration(), properties);
  }

  private Map<String, Table> tables() {
    Map<String, Table> tables = new TreeMap<>();
    TABLES.forEach((name, id) -> tables.put(name, createTable(id)));
    return tables;
  }

  /** Creates table {@code id}, keyed by {@code id}, of the test changes' schema. */
  private Table createTable(TableIdentifier id) {
    return CdcTables.createOrLoad(
        catalog().loadCatalog(), id, TestChanges.SCHEMA, null, 3, List.of("id"));
  }

  /** Whether {@code change}'s key belongs to the subtask of {@code harness}. */
  private static boolean owns(AbstractStreamOperatorTestHarness<?> harness, ChangeEvent change) {
    return KeyIndexBootstrap.owns(
        new TableKey(change.table(), change.key()), harness.getEnvironment().getTaskInfo());
  }

  /** The most keys per table the in-memory index holds; 0 keeps the entries in keyed state. */
  private long indexMaxKeys = 4_000_000;

  /** Whether a table's writer that starts without state loads the table's rows into its index. */
  private boolean bootstrap;

  /** Whether the harness keeps keyed state in RocksDB rather than on the heap. */
  private boolean rocksDb;

  /** Whether the writer takes the tables that appear while the job runs. */
  private boolean takesNewTables;

  /** The tables whose writers delete by key ({@code sink.delete-mode = EQUALITY}). */
  private final java.util.Set<TableIdentifier> byKey = new java.util.HashSet<>();

  /**
   * Whether the stream hashes the tables that appear by primary key whatever their writers do (as a
   * task that looked before the table's distribution changed would).
   */
  private boolean streamHashesNewTablesByKey;

  /**
   * The build of the writers the harnesses make; null: one for each set of tables ({@link
   * #buildOf}).
   */
  private Long build;

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
    return harness(restore, parallelism, subtask, tables, TestChanges.CHANGE_SCHEMA);
  }

  /** The writer of {@code tables}, each built with {@code schema}, restored from a state. */
  private KeyedOneInputStreamOperatorTestHarness<TableKey, ChangeEvent, ChangeCommittable> harness(
      OperatorSubtaskState restore,
      int parallelism,
      int subtask,
      Map<String, TableIdentifier> tables,
      io.icebergcdc.cdc.ChangeSchema schema)
      throws Exception {
    Map<String, PositionDeltaWriterOperator<?>> writers = new LinkedHashMap<>();
    tables.forEach(
        (name, id) -> {
          PositionDeltaWriterOperator<?> writer = writerOfTable(catalog(), id, schema);
          if (byKey.contains(id)) {
            writer.setDeleteMode(io.icebergcdc.sink.DeleteMode.EQUALITY);
          }
          if (compactionCacheBytes >= 0) {
            writer.setCompactionCacheBytes(compactionCacheBytes);
          }
          writers.put(name, writer);
        });
    CatalogLoader catalog = catalog();
    boolean bootstrapping = bootstrap;
    long maxKeys = indexMaxKeys;
    PositionDeltaWriterOperator.NewTables builds =
        (table, jobSchemaId, restored) -> {
          // As the job builds it: from the table as the catalog has it, named as its identifier,
          // in the schema a restored writer of it was built with, hashed by partition where the
          // table is partitioned.
          TableIdentifier id = TableIdentifier.parse(table);
          Table loaded = catalog.loadCatalog().loadTable(id);
          io.icebergcdc.cdc.ChangeSchema built =
              new io.icebergcdc.cdc.ChangeSchema(
                  jobSchemaId == null ? loaded.schema() : loaded.schemas().get(jobSchemaId));
          return loaded.spec().isUnpartitioned()
              ? writerOf(catalog, id, bootstrapping, maxKeys, built, new RowKeySelector(), 1.0)
              : writerOf(
                  catalog,
                  id,
                  bootstrapping,
                  maxKeys,
                  built,
                  new PartitionedKeySelector(built, loaded.spec()),
                  1.0);
        };
    PositionDeltaWriterOperator.NewTables newTables =
        streamHashesNewTablesByKey ? new HashedByKeyInTheStream(builds) : builds;
    PositionDeltaWriterOperator<TableKey> operator =
        PositionDeltaWriterOperator.ofTables(
            writers,
            takesNewTables ? newTables : null,
            build != null ? build : buildOf(tables.keySet()));
    return harnessOf(operator, restore, parallelism, subtask);
  }

  /**
   * The build of a writer of {@code tables}, here one for each set of tables: a writer of the same
   * tables restored is Flink's restart of the job as it was built, one of other tables a job built
   * again.
   */
  private static long buildOf(java.util.Collection<String> tables) {
    return String.join("\n", new java.util.TreeSet<>(tables)).hashCode();
  }

  /** Tables that appear built as {@code builds} says, hashed by primary key by the stream. */
  private record HashedByKeyInTheStream(PositionDeltaWriterOperator.NewTables builds)
      implements PositionDeltaWriterOperator.NewTables {
    @Override
    public PositionDeltaWriterOperator<?> writerOf(
        String table, Integer jobSchemaId, boolean restored) {
      return builds.writerOf(table, jobSchemaId, restored);
    }

    @Override
    public PartitionedKeySelector partitionerOf(String table) {
      return null;
    }
  }

  /**
   * A harness of {@code operator}, keyed as the operator says its stream is ({@link
   * PositionDeltaWriterOperator#streamKeys}), restored from {@code restore} if not null.
   */
  private KeyedOneInputStreamOperatorTestHarness<TableKey, ChangeEvent, ChangeCommittable>
      harnessOf(
          PositionDeltaWriterOperator<TableKey> operator,
          OperatorSubtaskState restore,
          int parallelism,
          int subtask)
          throws Exception {
    KeyedOneInputStreamOperatorTestHarness<TableKey, ChangeEvent, ChangeCommittable> harness =
        new KeyedOneInputStreamOperatorTestHarness<>(
            operator,
            operator.streamKeys(),
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

  /** The compaction ratio of the writers of the tables the job starts with; 1 compacts none. */
  private double compactionRatio = 1.0;

  /**
   * The compaction cache size of the writers of the tables the job starts with; -1: the default.
   */
  private long compactionCacheBytes = -1;

  private PositionDeltaWriterOperator<?> writerOfTable(
      CatalogLoader catalog, TableIdentifier id, io.icebergcdc.cdc.ChangeSchema schema) {
    return writerOf(
        catalog, id, bootstrap, indexMaxKeys, schema, new RowKeySelector(), compactionRatio);
  }

  /**
   * The writer of table {@code id}, built with {@code schema} (or the table's own if null), keyed
   * by {@code keys}, compacting at {@code compactionRatio}.
   */
  private static <K> PositionDeltaWriterOperator<K> writerOf(
      CatalogLoader catalog,
      TableIdentifier id,
      boolean bootstrap,
      long indexMaxKeys,
      io.icebergcdc.cdc.ChangeSchema schema,
      ChangeKeySelector<K> keys,
      double compactionRatio) {
    io.icebergcdc.cdc.ChangeSchema tableSchema =
        schema != null
            ? schema
            : new io.icebergcdc.cdc.ChangeSchema(catalog.loadCatalog().loadTable(id).schema());
    PositionDeltaWriterOperator<K> writer =
        new PositionDeltaWriterOperator<>(
            TableLoader.fromCatalog(catalog, id),
            tableSchema,
            keys,
            bootstrap,
            Map.of(),
            Duration.ofDays(1),
            io.icebergcdc.dedup.AmbiguousChangePolicy.FAIL,
            compactionRatio);
    writer.setCommittedAs(id.toString());
    writer.setIndexMaxKeys(indexMaxKeys);
    return writer;
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

  /**
   * A table idle over checkpoint intervals while another changes has its index written from the
   * bytes it kept (not serialized again), and a restore from such a snapshot, at the same
   * parallelism and rescaled to two, finds each of its keys where its row is and what sequence was
   * applied to it: an update deletes by position, a stale one is dropped.
   */
  @Test
  void anIdleTablesIndexWrittenFromTheBytesItKeptRestores() throws Exception {
    Map<String, Table> tables = tables();
    OperatorSubtaskState state = null;
    String fileOfB;
    try (var harness = harness(null, 1, 0)) {
      List<ChangeEvent> first = new ArrayList<>();
      for (long id = 1; id <= 20; id++) {
        first.add(of("src.a", insert(id, "a" + id, 10)));
        first.add(of("src.b", insert(id, "b" + id, 10)));
      }
      Map<String, ChangeCommittable> written =
          checkpoint(harness, 1, first.toArray(new ChangeEvent[0]));
      append(tables.get("src.a"), written.get("db.a"));
      append(tables.get("src.b"), written.get("db.b"));
      fileOfB = dataFile(written.get("db.b"), tables.get("src.b"));
      harness.snapshot(1, 1);
      harness.notifyOfCompletedCheckpoint(1);
      // b is idle from here (its index kept at checkpoint 2, written from that at 3 and 4).
      for (long c = 2; c <= 4; c++) {
        Map<String, ChangeCommittable> next =
            checkpoint(harness, c, of("src.a", update(c, "a'" + c, 10 + c)));
        append(tables.get("src.a"), next.get("db.a"));
        state = harness.snapshot(c, c);
        harness.notifyOfCompletedCheckpoint(c);
        // Kept at checkpoint 2, written from them at 3 and 4; a changing index keeps none.
        PositionDeltaWriterOperator<?> writer =
            (PositionDeltaWriterOperator<?>) harness.getOperator();
        assertThat(writer.indexKeptBytes("src.b")).as("checkpoint %s", c).isPositive();
        assertThat(writer.indexKeptWrites("src.b")).as("checkpoint %s", c).isEqualTo(c - 2);
        assertThat(writer.indexKeptBytes("src.a")).as("checkpoint %s", c).isZero();
        assertThat(writer.indexKeptWrites("src.a")).as("checkpoint %s", c).isZero();
      }
    }
    for (int parallelism = 1; parallelism <= 2; parallelism++) {
      long updated = 0;
      for (int subtask = 0; subtask < parallelism; subtask++) {
        OperatorSubtaskState restore =
            parallelism == 1
                ? state
                : AbstractStreamOperatorTestHarness.repartitionOperatorState(
                    state, MAX_PARALLELISM, 1, parallelism, subtask);
        try (var harness = harness(restore, parallelism, subtask)) {
          List<ChangeEvent> mine = new ArrayList<>();
          int owned = 0;
          for (long id = 1; id <= 20; id++) {
            ChangeEvent change = of("src.b", update(id, "b'" + id, 20));
            if (owns(harness, change)) {
              mine.add(of("src.b", update(id, "stale" + id, 5)));
              mine.add(change);
              owned++;
            }
          }
          ChangeCommittable b =
              checkpoint(harness, 5, mine.toArray(new ChangeEvent[0])).get("db.b");
          assertThat(b.stats().updated()).as("subtask %s", subtask).isEqualTo(owned);
          assertThat(b.stats().staleDropped()).as("subtask %s", subtask).isEqualTo(owned);
          assertThat(b.positionDeletes().positions(fileOfB)).hasSize(owned);
          assertThat(b.equalityFallbacks()).isZero();
          updated += owned;
        }
      }
      assertThat(updated).as("parallelism %s", parallelism).isEqualTo(20);
    }
  }

  /**
   * A truncate of one table, as its copies ({@link io.icebergcdc.cdc.TruncateCopies}) reach the two
   * subtasks of the writer: each subtask meets at least one copy and deletes the rows of its keys
   * of that table, drops the changes before the truncate that come after it and applies the table's
   * changes after it; the other table's changes are applied as before. With the entries in the
   * in-memory index, in keyed state and in RocksDB.
   */
  @org.junit.jupiter.params.ParameterizedTest(name = "{0}")
  @org.junit.jupiter.params.provider.ValueSource(strings = {"index", "keyed state", "rocksdb"})
  void aTruncateOfOneTableReachesEverySubtaskAndDeletesOnlyItsRows(String entries)
      throws Exception {
    indexMaxKeys = entries.equals("index") ? 4_000_000 : 0;
    rocksDb = entries.equals("rocksdb");
    // The second subtask starts after the first committed: it reads the tables' keys first, as
    // a writer that starts on a table with rows does by default.
    bootstrap = true;
    Map<String, Table> tables = tables();
    List<ChangeEvent> copies = new ArrayList<>();
    io.icebergcdc.cdc.TruncateCopies.forTables(
        ChangeEvent.truncate("src.a", io.icebergcdc.cdc.SourceSequence.postgresLsn(200), 0L),
        MAX_PARALLELISM,
        copies::add);
    for (int subtask = 0; subtask < 2; subtask++) {
      try (var harness = harness(null, 2, subtask)) {
        List<ChangeEvent> mine = new ArrayList<>();
        for (long id = 1; id <= 20; id++) {
          for (String table : TABLES.keySet()) {
            ChangeEvent change = of(table, insert(id, table + id, 100));
            if (owns(harness, change)) {
              mine.add(change);
            }
          }
        }
        Map<String, ChangeCommittable> written =
            checkpoint(harness, 1, mine.toArray(new ChangeEvent[0]));
        for (String table : TABLES.keySet()) {
          append(tables.get(table), written.get(TABLES.get(table).toString()));
        }
        String fileOfA = dataFile(written.get("db.a"), tables.get("src.a"));
        long keysOfA = mine.stream().filter(c -> c.table().equals("src.a")).count();
        long keysOfB = mine.size() - keysOfA;

        List<ChangeEvent> next = new ArrayList<>();
        for (ChangeEvent copy : copies) {
          if (owns(harness, copy)) {
            next.add(copy);
          }
        }
        assertThat(next).as("copies for subtask %s", subtask).isNotEmpty();
        long newKeysOfA = 0;
        for (long id = 1; id <= 40; id++) {
          ChangeEvent late = of("src.a", update(id, "late" + id, 150));
          ChangeEvent after = of("src.a", insert(id, "after" + id, 300));
          ChangeEvent other = of("src.b", update(id, "b'" + id, 150));
          if (id <= 20 && owns(harness, late)) {
            next.add(late);
          }
          if (id > 20 && owns(harness, after)) {
            next.add(after);
            newKeysOfA++;
          }
          if (id <= 20 && owns(harness, other)) {
            next.add(other);
          }
        }
        Map<String, ChangeCommittable> after =
            checkpoint(harness, 2, next.toArray(new ChangeEvent[0]));

        ChangeCommittable a = after.get("db.a");
        assertThat(a.stats().deleted()).as("rows of a before the truncate").isEqualTo(keysOfA);
        assertThat(a.stats().staleDropped()).as("a's changes before it").isEqualTo(keysOfA);
        assertThat(a.stats().inserted()).isEqualTo(newKeysOfA);
        assertThat(a.positionDeletes().positions(fileOfA)).hasSize((int) keysOfA);
        ChangeCommittable b = after.get("db.b");
        assertThat(b.stats().updated()).isEqualTo(keysOfB);
        assertThat(b.stats().deleted()).isZero();
      }
    }
  }

  /**
   * A table in equality mode written by the operator of several tables beside one that deletes by
   * position: its updates and deletes become equality deletes on the key (not counted as fallbacks)
   * and never positions, a key new to a table the writer started empty needs no delete, and the
   * table, committed as the committer commits it, reads as the reference model of its changes,
   * delivered out of order, twice and late: from one subtask, where a checkpoint is aborted and
   * committed with the next (whose changes of its rows delete them by position), after a restore
   * rescaled to two, and after a start without state on the rows written (with the index's
   * bootstrap asked for, which deleting by key ignores). With the entries in the in-memory index
   * and in keyed state.
   */
  @org.junit.jupiter.params.ParameterizedTest(name = "{0}")
  @org.junit.jupiter.params.provider.ValueSource(strings = {"index", "keyed state"})
  void aTableInEqualityModeIsWrittenWithTheOthersByKey(String entries) throws Exception {
    indexMaxKeys = entries.equals("index") ? 4_000_000 : 0;
    byKey.add(TABLES.get("src.a"));
    Map<String, Table> tables = tables();
    Table a = tables.get("src.a");
    java.util.Random random = new java.util.Random(11);
    Map<Long, String> model = new TreeMap<>();
    long[] sequence = {0};
    List<ChangeEvent> inserts = new ArrayList<>();
    for (long id = 1; id <= 30; id++) {
      inserts.add(of("src.a", insert(id, "a" + id, ++sequence[0])));
      model.put(id, "a" + id);
    }
    inserts.add(of("src.b", insert(1, "b1", 1)));
    List<ChangeEvent> earlier;
    OperatorSubtaskState state;
    try (var harness = harness(null, 1, 0)) {
      Map<String, ChangeCommittable> first =
          checkpoint(harness, 1, delivered(inserts, List.of(), random));
      assertThat(first.get("db.a").deleteFiles()).as("new keys, the table started empty").isEmpty();
      commitByKey(a, first.get("db.a"));
      append(tables.get("src.b"), first.get("db.b"));
      harness.notifyOfCompletedCheckpoint(1);

      earlier = changesOf("src.a", model, sequence, random, 60);
      List<ChangeEvent> second = new ArrayList<>(earlier);
      second.add(of("src.b", update(1, "b1'", 2)));
      Map<String, ChangeCommittable> written =
          checkpoint(harness, 2, delivered(second, inserts, random));
      ChangeCommittable ofA = written.get("db.a");
      assertThat(ofA.stats().staleDropped() + ofA.stats().duplicatesDropped()).isPositive();
      assertByKey(ofA, a);
      assertThat(written.get("db.b").positionDeletes().files())
          .as("the other table deletes by position")
          .hasSize(1);
      assertThat(written.get("db.b").deleteFiles()).isEmpty();

      // Checkpoint 2 aborted after the writer handed its files on: the committer commits them
      // with checkpoint 3's in one snapshot, where an equality delete would not reach their rows.
      // The keys written for it, not known complete, are deleted by position.
      List<ChangeEvent> changes = changesOf("src.a", model, sequence, random, 60);
      ChangeCommittable third =
          checkpoint(harness, 3, delivered(changes, earlier, random)).get("db.a");
      assertThat(third.equalityFallbacks()).isZero();
      assertThat(third.positionDeletes().files())
          .as("rows of the checkpoint not known complete")
          .containsExactlyElementsOf(
              ofA.dataFiles().stream()
                  .map(f -> ContentFileCodec.decodeDataFile(f, a.specs()).location())
                  .toList());
      commitByKey(a, ofA, third);
      harness.notifyOfCompletedCheckpoint(3);
      state = harness.snapshot(3, 3);
    }
    assertThat(rowsOf(a)).isEqualTo(model);

    List<ChangeEvent> later = changesOf("src.a", model, sequence, random, 60);
    List<ChangeCommittable> rescaled = new ArrayList<>();
    for (int subtask = 0; subtask < 2; subtask++) {
      OperatorSubtaskState part =
          AbstractStreamOperatorTestHarness.repartitionOperatorState(
              state, MAX_PARALLELISM, 1, 2, subtask);
      try (var harness = harness(part, 2, subtask)) {
        List<ChangeEvent> mine = new ArrayList<>();
        for (ChangeEvent change : delivered(later, earlier, random)) {
          if (owns(harness, change)) {
            mine.add(change);
          }
        }
        ChangeCommittable ofA =
            checkpoint(harness, 4, mine.toArray(new ChangeEvent[0])).get("db.a");
        assertByKey(ofA, a);
        rescaled.add(ofA);
      }
    }
    for (ChangeCommittable written : rescaled) {
      commitByKey(a, written);
    }
    assertThat(rowsOf(a)).isEqualTo(model);

    bootstrap = true;
    try (var harness = harness(null, 1, 0)) {
      List<ChangeEvent> fourth = changesOf("src.a", model, sequence, random, 60);
      for (long id = 41; id <= 45; id++) {
        fourth.add(of("src.a", insert(id, "new" + id, ++sequence[0])));
        model.put(id, "new" + id);
      }
      ChangeCommittable ofA =
          checkpoint(harness, 5, delivered(fourth, List.of(), random)).get("db.a");
      assertByKey(ofA, a);
      commitByKey(a, ofA);
    }
    assertThat(rowsOf(a)).isEqualTo(model);
  }

  /**
   * {@code count} changes of {@code table} with sequences after {@code sequence}, applied to {@code
   * model} in their order: inserts, updates and deletes of keys 1 to 40.
   */
  private static List<ChangeEvent> changesOf(
      String table, Map<Long, String> model, long[] sequence, java.util.Random random, int count) {
    List<ChangeEvent> changes = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      long id = 1 + random.nextInt(40);
      long at = ++sequence[0];
      if (random.nextInt(4) == 0) {
        changes.add(of(table, io.icebergcdc.cdc.TestChanges.delete(id, at)));
        model.remove(id);
      } else {
        String name = table + id + "@" + at;
        changes.add(of(table, model.containsKey(id) ? update(id, name, at) : insert(id, name, at)));
        model.put(id, name);
      }
    }
    return changes;
  }

  /** {@code changes} shuffled, a fifth of them twice, with a fifth of {@code late} among them. */
  private static ChangeEvent[] delivered(
      List<ChangeEvent> changes, List<ChangeEvent> late, java.util.Random random) {
    List<ChangeEvent> delivered = new ArrayList<>(changes);
    for (ChangeEvent change : changes) {
      if (random.nextInt(5) == 0) {
        delivered.add(change);
      }
    }
    for (ChangeEvent change : late) {
      if (random.nextInt(5) == 0) {
        delivered.add(change);
      }
    }
    java.util.Collections.shuffle(delivered, random);
    return delivered.toArray(new ChangeEvent[0]);
  }

  /** The contribution of a writer by key: equality deletes, no position, no fallback. */
  private static void assertByKey(ChangeCommittable written, Table table) {
    assertThat(written.positionDeletes().isEmpty()).as("positions deleted").isTrue();
    assertThat(written.equalityFallbacks()).as("counted as fallbacks").isZero();
    assertThat(written.deleteFiles())
        .isNotEmpty()
        .allSatisfy(
            file ->
                assertThat(ContentFileCodec.decodeDeleteFile(file, table.specs()).content())
                    .isEqualTo(org.apache.iceberg.FileContent.EQUALITY_DELETES));
  }

  /**
   * Commits writers' contributions to an unpartitioned table in one row delta, as the committer
   * does: their data files, equality deletes and positions (as deletion vectors).
   */
  private static void commitByKey(Table table, ChangeCommittable... contributions)
      throws java.io.IOException {
    table.refresh();
    org.apache.iceberg.RowDelta delta = table.newRowDelta();
    org.apache.iceberg.deletes.BaseDVFileWriter dvs =
        new org.apache.iceberg.deletes.BaseDVFileWriter(
            org.apache.iceberg.io.OutputFileFactory.builderFor(table, 9, 9)
                .format(org.apache.iceberg.FileFormat.PUFFIN)
                .build(),
            path -> null);
    try (dvs) {
      for (ChangeCommittable written : contributions) {
        written
            .dataFiles()
            .forEach(f -> delta.addRows(ContentFileCodec.decodeDataFile(f, table.specs())));
        written
            .deleteFiles()
            .forEach(f -> delta.addDeletes(ContentFileCodec.decodeDeleteFile(f, table.specs())));
        for (String file : written.positionDeletes().files()) {
          for (long position : written.positionDeletes().positions(file)) {
            dvs.delete(file, position, table.spec(), null);
          }
        }
      }
    }
    dvs.result().deleteFiles().forEach(delta::addDeletes);
    delta.commit();
  }

  /** The table's rows as it reads now, names by id. */
  private static Map<Long, String> rowsOf(Table table) throws java.io.IOException {
    table.refresh();
    Map<Long, String> rows = new TreeMap<>();
    try (org.apache.iceberg.io.CloseableIterable<org.apache.iceberg.data.Record> records =
        org.apache.iceberg.data.IcebergGenerics.read(table).build()) {
      for (org.apache.iceberg.data.Record record : records) {
        assertThat(rows.put((Long) record.getField("id"), (String) record.getField("name")))
            .as("one row of key %s", record.getField("id"))
            .isNull();
      }
    }
    return rows;
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
            if (owns(harness, change)) {
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

  /**
   * At a checkpoint where compaction reads several tables (here their first surveys, at the first
   * checkpoint after the writer's first write of each), the operator reads them ahead, together, on
   * threads of its own, and each table's compaction uses that read instead of refreshing the table
   * again; where it reads one table only, that table is read on the task thread, as by a writer of
   * one table.
   */
  @Test
  void theTablesCompactionReadsAtACheckpointAreReadAheadTogether() throws Exception {
    Map<String, Table> tables = tables();
    // Rows committed before the writers below start without state: they survey each table at the
    // first checkpoint after their first write of it, as a table that had no snapshot is not.
    try (var harness = harness(null, 1, 0)) {
      Map<String, ChangeCommittable> first =
          checkpoint(harness, 1, of("src.a", insert(1, "a1", 10)), of("src.b", insert(1, "b1", 5)));
      append(tables.get("src.a"), first.get("db.a"));
      append(tables.get("src.b"), first.get("db.b"));
    }
    try (var harness = harness(null, 1, 0)) {
      PositionDeltaWriterOperator<?> writer =
          (PositionDeltaWriterOperator<?>) harness.getOperator();
      Map<String, ChangeCommittable> written =
          checkpoint(harness, 1, of("src.a", insert(2, "a2", 10)), of("src.b", insert(2, "b2", 5)));
      assertThat(written).containsOnlyKeys("db.a", "db.b");
      // Surveyed once, refreshed once (the read ahead), and that read used.
      assertThat(writer.surveysRefreshesAndReadsAhead("src.a")).containsExactly(1, 1, 1);
      assertThat(writer.surveysRefreshesAndReadsAhead("src.b")).containsExactly(1, 1, 1);
    }
    try (var harness = harness(null, 1, 0)) {
      PositionDeltaWriterOperator<?> writer =
          (PositionDeltaWriterOperator<?>) harness.getOperator();
      checkpoint(harness, 1, of("src.a", insert(3, "a3", 10)));
      assertThat(writer.surveysRefreshesAndReadsAhead("src.a")).containsExactly(1, 1, 0);
      assertThat(writer.surveysRefreshesAndReadsAhead("src.b")).containsExactly(0, 0, 0);
    }
  }

  /**
   * Past {@link PositionDeltaWriterOperator#TABLES_READ_AT_ONCE} such tables, the rest waits for
   * the next batch: here one more than a batch, whose last table (in the order of their names) is a
   * batch of one, read by its compaction itself. Each table is refreshed and surveyed once, and
   * hands on its files once.
   */
  @Test
  void theTablesPastABatchAreReadInTheNext() throws Exception {
    int count = PositionDeltaWriterOperator.TABLES_READ_AT_ONCE + 1;
    Map<String, TableIdentifier> many = new TreeMap<>();
    for (int i = 0; i < count; i++) {
      many.put(String.format("src.t%02d", i), TableIdentifier.of("db", String.format("t%02d", i)));
    }
    Map<String, Table> tables = new TreeMap<>();
    many.forEach((name, id) -> tables.put(name, createTable(id)));
    List<ChangeEvent> first = new ArrayList<>();
    List<ChangeEvent> second = new ArrayList<>();
    many.keySet()
        .forEach(
            name -> {
              first.add(of(name, insert(1, "a", 1)));
              second.add(of(name, insert(2, "b", 2)));
            });
    // Rows committed before the writer below starts without state: see the test above.
    try (var harness = harness(null, 1, 0, many)) {
      checkpoint(harness, 1, first.toArray(ChangeEvent[]::new))
          .forEach(
              (committedAs, committable) ->
                  append(tables.get("src." + committedAs.substring(3)), committable));
    }
    try (var harness = harness(null, 1, 0, many)) {
      PositionDeltaWriterOperator<?> writer =
          (PositionDeltaWriterOperator<?>) harness.getOperator();
      assertThat(checkpoint(harness, 1, second.toArray(ChangeEvent[]::new))).hasSize(count);
      for (String name : many.keySet()) {
        long[] counts = writer.surveysRefreshesAndReadsAhead(name);
        assertThat(counts)
            .as(name)
            .containsExactly(1, 1, name.equals(String.format("src.t%02d", count - 1)) ? 0 : 1);
      }
    }
  }

  /**
   * So are the tables whose compaction the checkpoint's own changes make due: here deletes that
   * take a committed file of each table past the compaction ratio, known only once the checkpoint's
   * changes are written.
   */
  @Test
  void theTablesACheckpointsChangesMakeDueForCompactionAreReadAheadTogether() throws Exception {
    compactionRatio = 0.5;
    Map<String, Table> tables = tables();
    try (var harness = harness(null, 1, 0)) {
      PositionDeltaWriterOperator<?> writer =
          (PositionDeltaWriterOperator<?>) harness.getOperator();
      List<ChangeEvent> inserts = new ArrayList<>();
      for (int key = 1; key <= 4; key++) {
        inserts.add(of("src.a", insert(key, "a", key)));
        inserts.add(of("src.b", insert(key, "b", key)));
      }
      Map<String, ChangeCommittable> first =
          checkpoint(harness, 1, inserts.toArray(ChangeEvent[]::new));
      append(tables.get("src.a"), first.get("db.a"));
      append(tables.get("src.b"), first.get("db.b"));
      harness.notifyOfCompletedCheckpoint(1);
      // The tables started without a snapshot: nothing read at their first checkpoint.
      assertThat(writer.surveysRefreshesAndReadsAhead("src.a")).containsExactly(0, 0, 0);
      assertThat(writer.surveysRefreshesAndReadsAhead("src.b")).containsExactly(0, 0, 0);

      List<ChangeEvent> deletes = new ArrayList<>();
      for (int key = 1; key <= 3; key++) {
        deletes.add(of("src.a", delete(key, 10 + key)));
        deletes.add(of("src.b", delete(key, 10 + key)));
      }
      Map<String, ChangeCommittable> second =
          checkpoint(harness, 2, deletes.toArray(ChangeEvent[]::new));
      assertThat(second.get("db.a").compactedDataFiles()).hasSize(1);
      assertThat(second.get("db.b").compactedDataFiles()).hasSize(1);
      assertThat(writer.surveysRefreshesAndReadsAhead("src.a")).containsExactly(0, 1, 1);
      assertThat(writer.surveysRefreshesAndReadsAhead("src.b")).containsExactly(0, 1, 1);
    }
  }

  @Test
  void theTablesHoldTheirRecentRowsWithinOneCacheSizeTogether() throws Exception {
    tables();
    compactionRatio = 0.5;
    // Room for the first chunk of one file's rows: each table alone could hold its own.
    int file = io.icebergcdc.cdc.typeutils.ChunkSizes.FIRST + RecentRows.FILE_BYTES;
    compactionCacheBytes = file + 100;
    try (var harness = harness(null, 1, 0)) {
      PositionDeltaWriterOperator<?> operator =
          (PositionDeltaWriterOperator<?>) harness.getOneInputOperator();
      checkpoint(harness, 1, of("src.a", insert(1, "a1", 10)));
      assertThat(operator.recentRowsHeld()).isEqualTo(file);
      checkpoint(harness, 2, of("src.b", insert(1, "b1", 5)));
      assertThat(operator.recentRowsHeld())
          .as("a's file forgotten for b's: one cache for both tables")
          .isEqualTo(file);
    }
  }

  /**
   * At a checkpoint the data files of several tables, and the equality deletes of a table that
   * deletes by key, are closed on threads of the operator's, several at once (on object storage,
   * each is uploaded as it closes), then handed on complete.
   */
  @Test
  void theTablesFilesAreClosedOnThreadsOfTheOperatorSeveralAtOnce() throws Exception {
    fileIo = ClosingThreadsFileIO.class.getName();
    ClosingThreadsFileIO.reset();
    byKey.add(TABLES.get("src.b"));
    Map<String, Table> tables = tables();
    Table a = tables.get("src.a");
    Table b = tables.get("src.b");
    String closingThreads = "iceberg-cdc-table-closing-";
    try (var harness = harness(null, 1, 0)) {
      // The closings of a's and b's data files wait for each other: they run at once.
      ClosingThreadsFileIO.meetOnClose(2);
      Map<String, ChangeCommittable> first =
          checkpoint(
              harness,
              1,
              of("src.a", insert(1, "a1", 10)),
              of("src.a", insert(2, "a2", 11)),
              of("src.b", insert(1, "b1", 5)));
      ClosingThreadsFileIO.meetOnClose(0);
      assertThat(first).containsOnlyKeys("db.a", "db.b");
      assertThat(ClosingThreadsFileIO.closedBy(dataFile(first.get("db.a"), a)))
          .startsWith(closingThreads);
      assertThat(ClosingThreadsFileIO.closedBy(dataFile(first.get("db.b"), b)))
          .startsWith(closingThreads);
      commitByKey(a, first.get("db.a"));
      commitByKey(b, first.get("db.b"));
      harness.notifyOfCompletedCheckpoint(1);

      Map<String, ChangeCommittable> second =
          checkpoint(
              harness, 2, of("src.a", update(1, "a1'", 13)), of("src.b", update(1, "b1'", 6)));
      assertThat(second.get("db.b").deleteFiles()).hasSize(1);
      String delete =
          ContentFileCodec.decodeDeleteFile(second.get("db.b").deleteFiles().get(0), b.specs())
              .location();
      assertThat(ClosingThreadsFileIO.closedBy(delete)).startsWith(closingThreads);
      assertThat(ClosingThreadsFileIO.closedBy(dataFile(second.get("db.b"), b)))
          .startsWith(closingThreads);
      commitByKey(a, second.get("db.a"));
      commitByKey(b, second.get("db.b"));
    } finally {
      ClosingThreadsFileIO.reset();
    }
    assertThat(rowsOf(a)).isEqualTo(Map.of(1L, "a1'", 2L, "a2"));
    assertThat(rowsOf(b)).isEqualTo(Map.of(1L, "b1'"));
  }

  /**
   * In the operator of several too, a table's data files of several partitions are closed several
   * at once, on threads of their own.
   */
  @Test
  void aTablesFilesOfSeveralPartitionsAreClosedAtOnce() throws Exception {
    fileIo = ClosingThreadsFileIO.class.getName();
    ClosingThreadsFileIO.reset();
    Table a =
        CdcTables.createOrLoad(
            catalog().loadCatalog(),
            TABLES.get("src.a"),
            TestChanges.SCHEMA,
            "bucket(2, id)",
            3,
            List.of("id"));
    createTable(TABLES.get("src.b"));
    try (var harness = harness(null, 1, 0)) {
      // Keys 1 and 3 are in buckets 0 and 1: two files, whose closings wait for each other.
      ClosingThreadsFileIO.meetOnClose(2);
      ChangeCommittable written =
          checkpoint(harness, 1, of("src.a", insert(1, "a1", 10)), of("src.a", insert(3, "a3", 11)))
              .get("db.a");
      ClosingThreadsFileIO.meetOnClose(0);
      assertThat(written.dataFiles()).hasSize(2);
      for (String file : written.dataFiles()) {
        String location = ContentFileCodec.decodeDataFile(file, a.specs()).location();
        assertThat(ClosingThreadsFileIO.closedBy(location)).startsWith("iceberg-cdc-file-closing-");
      }
      append(a, written);
    } finally {
      ClosingThreadsFileIO.reset();
    }
    assertThat(rowsOf(a)).isEqualTo(Map.of(1L, "a1", 3L, "a3"));
  }

  /**
   * A file whose closing fails on one of those threads fails the checkpoint: nothing of its table
   * is handed on, and as the task ends its files not handed on are removed, here a data file
   * completed at the table's target size before the checkpoint's last, the one that failed, and an
   * equality delete, which fails to close too. A table finished before it, here a, has handed its
   * files on, as a table finished before any failure of a checkpoint does: the committer's, which
   * never commits a checkpoint that did not complete.
   */
  @Test
  void aFileThatFailsToCloseFailsTheCheckpointAndItsTablesFilesAreRemoved() throws Exception {
    fileIo = ClosingThreadsFileIO.class.getName();
    ClosingThreadsFileIO.reset();
    byKey.add(TABLES.get("src.b"));
    Map<String, Table> tables = tables();
    Table a = tables.get("src.a");
    Table b = tables.get("src.b");
    b.updateProperties().set("write.target-file-size-bytes", "1").commit();
    Path dataOfB = warehouse.resolve("db").resolve("b").resolve("data");
    List<Path> committedOfB;
    String handedOnOfA;
    try (var harness = harness(null, 1, 0)) {
      Map<String, ChangeCommittable> first =
          checkpoint(harness, 1, of("src.a", insert(1, "a1", 10)), of("src.b", insert(1, "b1", 5)));
      commitByKey(a, first.get("db.a"));
      commitByKey(b, first.get("db.b"));
      harness.notifyOfCompletedCheckpoint(1);
      committedOfB = regularFiles(dataOfB);

      // b's second data file, after the first completed at 1,000 rows, fails to close, and so
      // does its equality delete, closed as the task ends.
      ClosingThreadsFileIO.failClosing("/db/b/data/", 2);
      harness.getOutput().clear();
      harness.processElement(new StreamRecord<>(of("src.a", insert(2, "a2", 11))));
      harness.processElement(new StreamRecord<>(of("src.b", update(1, "b1'", 6))));
      for (long id = 2; id <= 1500; id++) {
        harness.processElement(new StreamRecord<>(of("src.b", insert(id, "b", 5 + id))));
      }
      assertThatThrownBy(() -> harness.prepareSnapshotPreBarrier(2))
          .hasMessageContaining("cannot close the files of table")
          .hasMessageContaining("injected failure closing")
          .hasMessageContaining("/db/b/data/");
      List<ChangeCommittable> handedOn = harness.extractOutputValues();
      assertThat(handedOn).extracting(ChangeCommittable::table).containsExactly("db.a");
      handedOnOfA = dataFile(handedOn.get(0), a);
      // Its two data files; Parquet writes a file of one row group, as the equality delete's, at
      // its close, which comes as the task ends.
      assertThat(regularFiles(dataOfB))
          .as("b's files written for checkpoint 2 before the task ends")
          .hasSize(committedOfB.size() + 2);
    } finally {
      ClosingThreadsFileIO.reset();
    }
    assertThat(regularFiles(dataOfB)).as("b's files").isEqualTo(committedOfB);
    assertThat(Path.of(java.net.URI.create(handedOnOfA))).as("a's file handed on").exists();
  }

  private static List<Path> regularFiles(Path directory) throws java.io.IOException {
    try (var files = java.nio.file.Files.walk(directory)) {
      return files
          .filter(java.nio.file.Files::isRegularFile)
          .filter(file -> !file.getFileName().toString().endsWith(".crc"))
          .sorted()
          .toList();
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
    createTable(now.get("src.c"));
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
          if (owns(harness, change)) {
            mine.add(change);
          }
        }
        assertThat(mine).isNotEmpty();
        ChangeCommittable b = checkpoint(harness, 3, mine.toArray(new ChangeEvent[0])).get("db.b");
        assertThat(b.stats().updated()).isEqualTo(mine.size());
        assertThat(b.equalityFallbacks()).isZero();
        assertThat(b.deleteFiles()).isEmpty();
        assertThat(positionsDeleted(b)).as("rows of b deleted by position").isEqualTo(mine.size());
      }
    }
  }

  /**
   * A table whose schema changes while the job runs (a column added, an int widened to long): the
   * changes of the new schema carry its id, and the writer writes every change of the checkpoint in
   * it, those kept from before the change and those of the job's schema that come after it
   * included; a value the source did not send is filled from a row of the old schema's file.
   */
  @Test
  void followsATableSchemaChangedWhileTheJobRuns() throws Exception {
    TableIdentifier id = TableIdentifier.of("db", "c");
    Table table = createTableWithQuantity(id);
    io.icebergcdc.cdc.ChangeSchema jobSchema = new io.icebergcdc.cdc.ChangeSchema(table.schema());
    OperatorSubtaskState state;
    try (var harness = writerOf(id, jobSchema, null)) {
      Map<String, ChangeCommittable> one =
          checkpoint(
              harness,
              1,
              change(jobSchema, -1, 1L, "a", 10, 10),
              change(jobSchema, -1, 2L, "b", 20, 11),
              change(jobSchema, -1, 3L, "c", 30, 12),
              change(jobSchema, -1, 5L, "toasted", 50, 13));
      String firstFile = dataFile(one.get("db.c"), table);
      append(table, one.get("db.c"));
      harness.notifyOfCompletedCheckpoint(1);

      addNoteAndWidenQuantity(table);
      int evolved = table.schema().schemaId();
      io.icebergcdc.cdc.ChangeSchema newSchema = new io.icebergcdc.cdc.ChangeSchema(table.schema());
      ChangeEvent toastedUpdate = change(newSchema, evolved, 5L, null, 5_000_000_001L, 24, "n5");
      toastedUpdate =
          toastedUpdate.inSchema(
              evolved,
              null,
              toastedUpdate.after(),
              io.icebergcdc.cdc.ColumnMask.EMPTY.with(1),
              io.icebergcdc.cdc.ColumnMask.EMPTY.with(1));
      Map<String, ChangeCommittable> two =
          checkpoint(
              harness,
              2,
              // Kept from before the writer learns of the change, then the change's first row.
              change(jobSchema, -1, 1L, "a2", 11, 20),
              change(newSchema, evolved, 2L, "b2", 5_000_000_000L, 21, "n2"),
              // Of the job's schema after it (another reader, or a snapshot's chunk).
              change(jobSchema, -1, 3L, "c2", 31, 22),
              change(jobSchema, -1, 4L, "d", 40, 23),
              toastedUpdate);
      ChangeCommittable written = two.get("db.c");
      assertThat(written.positionDeletes().positions(firstFile)).containsExactly(0, 1, 2, 3);
      assertThat(rowsOf(written, table))
          .containsExactly(
              Map.entry(1L, "a2 11 null"),
              Map.entry(2L, "b2 5000000000 n2"),
              Map.entry(3L, "c2 31 null"),
              Map.entry(4L, "d 40 null"),
              Map.entry(5L, "toasted 5000000001 n5"));
      assertThat(written.stats().updated()).isEqualTo(4);
      assertThat(written.stats().inserted()).isEqualTo(1);
      append(table, written);
      harness.notifyOfCompletedCheckpoint(2);
      state = harness.snapshot(2, 2);
    }

    // Restored into the job as it was built (a restart of the same job): the writer starts in the
    // table's later schema, and the job's rows it takes are written in it.
    try (var harness = writerOf(id, jobSchema, state)) {
      Map<String, ChangeCommittable> three =
          checkpoint(
              harness,
              3,
              change(jobSchema, -1, 2L, "b3", 7, 30),
              change(jobSchema, -1, 6L, "f", 60, 31));
      ChangeCommittable written = three.get("db.c");
      assertThat(rowsOf(written, table))
          .containsExactly(Map.entry(2L, "b3 7 null"), Map.entry(6L, "f 60 null"));
      assertThat(written.stats().updated()).isEqualTo(1);
    }
  }

  /**
   * A table of the job's own, built again after it took a column and widened another (a restore
   * into a new build, as after a stop and a resume): a change delivered again after that is the
   * same change, whether it was applied before the schema changed or after, and not an ambiguous
   * one, which failed the job at every restart (its fingerprint hashed the new build's columns).
   */
  @org.junit.jupiter.params.ParameterizedTest(name = "index max keys {0}")
  @org.junit.jupiter.params.provider.ValueSource(longs = {4_000_000, 0})
  void aTableBuiltAgainInItsLaterSchemaTellsChangesDeliveredAgain(long maxKeys) throws Exception {
    indexMaxKeys = maxKeys;
    TableIdentifier id = TableIdentifier.of("db", "c");
    Table table = createTableWithQuantity(id);
    io.icebergcdc.cdc.ChangeSchema built = new io.icebergcdc.cdc.ChangeSchema(table.schema());
    OperatorSubtaskState state;
    try (var harness = writerOf(id, built, null)) {
      append(
          table,
          checkpoint(
                  harness,
                  1,
                  change(built, -1, 1L, "a", 10, 10),
                  change(built, -1, 2L, "b", 20, 11))
              .get("db.c"));
      harness.notifyOfCompletedCheckpoint(1);
      addNoteAndWidenQuantity(table);
      io.icebergcdc.cdc.ChangeSchema evolved = new io.icebergcdc.cdc.ChangeSchema(table.schema());
      int evolvedId = table.schema().schemaId();
      append(
          table,
          checkpoint(harness, 2, change(evolved, evolvedId, 2L, "b2", 5_000_000_000L, 21, "n2"))
              .get("db.c"));
      harness.notifyOfCompletedCheckpoint(2);
      state = harness.snapshot(3, 3);
    }
    // Built again from the table: its parser gives every change in the later schema, the added
    // column null in the changes from before it.
    io.icebergcdc.cdc.ChangeSchema rebuilt = new io.icebergcdc.cdc.ChangeSchema(table.schema());
    try (var harness = writerOf(id, rebuilt, state)) {
      ChangeCommittable again =
          checkpoint(
                  harness,
                  4,
                  inBuild(rebuilt, 1L, "a", 10, 10, null),
                  inBuild(rebuilt, 2L, "b2", 5_000_000_000L, 21, "n2"))
              .get("db.c");
      assertThat(again.stats().duplicatesDropped()).isEqualTo(2);
      assertThat(again.stats().inserted() + again.stats().updated()).isZero();
      // Another change at a position applied is still refused.
      assertThatThrownBy(() -> harness.processElement(inBuild(rebuilt, 1L, "x", 10, 10, null), 5))
          .hasStackTraceContaining("two different changes at the same source position");
    }
  }

  /** An upsert of {@code key} as a job built with {@code schema} reads it: in its rows. */
  private static ChangeEvent inBuild(
      io.icebergcdc.cdc.ChangeSchema schema,
      long key,
      String name,
      long qty,
      long lsn,
      String note) {
    org.apache.flink.table.data.GenericRowData row =
        org.apache.flink.table.data.GenericRowData.of(
            key,
            org.apache.flink.table.data.StringData.fromString(name),
            qty,
            note == null ? null : org.apache.flink.table.data.StringData.fromString(note));
    return new ChangeEvent(
        "src.c",
        io.icebergcdc.cdc.Operation.UPDATE,
        schema.keyOf(row),
        null,
        row,
        io.icebergcdc.cdc.SourceSequence.postgresLsn(lsn),
        lsn);
  }

  /**
   * Creates table {@code id} of columns {@code id} (its key), {@code name} and an int {@code qty}.
   */
  private Table createTableWithQuantity(TableIdentifier id) {
    org.apache.iceberg.Schema schema =
        new org.apache.iceberg.Schema(
            java.util.List.of(
                org.apache.iceberg.types.Types.NestedField.required(
                    1, "id", org.apache.iceberg.types.Types.LongType.get()),
                org.apache.iceberg.types.Types.NestedField.optional(
                    2, "name", org.apache.iceberg.types.Types.StringType.get()),
                org.apache.iceberg.types.Types.NestedField.optional(
                    3, "qty", org.apache.iceberg.types.Types.IntegerType.get())),
            java.util.Set.of(1));
    return CdcTables.createOrLoad(catalog().loadCatalog(), id, schema, null, 3, List.of("id"));
  }

  /**
   * Evolves a table of {@link #createTableWithQuantity}: a {@code note} added, {@code qty} long.
   */
  private static void addNoteAndWidenQuantity(Table table) {
    table
        .updateSchema()
        .addColumn("note", org.apache.iceberg.types.Types.StringType.get())
        .updateColumn("qty", org.apache.iceberg.types.Types.LongType.get())
        .commit();
    table.refresh();
  }

  /**
   * A table whose changes are distributed by partition is written by the writer of several tables
   * (it had an operator of its own before): its keys are hashed by their partition, so that all
   * keys of a partition reach one subtask, and its index finds their rows across a checkpoint and a
   * restore at another parallelism, as a writer of its own does. Kept in the in-memory index and in
   * keyed state.
   */
  @org.junit.jupiter.params.ParameterizedTest(name = "index max keys {0}")
  @org.junit.jupiter.params.provider.ValueSource(longs = {4_000_000, 0})
  void aTableDistributedByPartitionIsWrittenWithTheOthers(long maxKeys) throws Exception {
    TableIdentifier id = TableIdentifier.of("db", "p");
    Table table = createBucketedTable(id);
    io.icebergcdc.cdc.ChangeSchema schema = TestChanges.CHANGE_SCHEMA;
    // As the job keys its stream: by the operator's own account of its tables' writers.
    TableKeySelector keys = partitionedWriter(id, schema, maxKeys, false).streamKeys();
    Map<Long, Integer> subtaskOf = new TreeMap<>();
    Map<Integer, java.util.Set<Integer>> subtasksOfPartition = new TreeMap<>();
    for (long key = 1; key <= 30; key++) {
      TableKey stateKey = keys.getKey(of("src.p", insert(key, "p" + key, key)));
      assertThat(stateKey.hashedApart()).isTrue();
      int subtask =
          org.apache.flink.runtime.state.KeyGroupRangeAssignment.assignKeyToParallelOperator(
              stateKey, MAX_PARALLELISM, 2);
      subtaskOf.put(key, subtask);
      subtasksOfPartition
          .computeIfAbsent(stateKey.hash(), h -> new java.util.TreeSet<>())
          .add(subtask);
    }
    assertThat(subtasksOfPartition).hasSize(3);
    assertThat(subtasksOfPartition.values()).allSatisfy(s -> assertThat(s).hasSize(1));
    assertThat(new java.util.TreeSet<>(subtaskOf.values())).as("both subtasks write").hasSize(2);

    List<OperatorSubtaskState> states = new ArrayList<>();
    for (int subtask = 0; subtask < 2; subtask++) {
      try (var harness = partitionedHarness(id, schema, maxKeys, null, 2, subtask)) {
        List<ChangeEvent> inserts = new ArrayList<>();
        List<ChangeEvent> updates = new ArrayList<>();
        for (Map.Entry<Long, Integer> key : subtaskOf.entrySet()) {
          if (key.getValue() == subtask) {
            inserts.add(of("src.p", insert(key.getKey(), "p" + key.getKey(), 10)));
            updates.add(of("src.p", update(key.getKey(), "p'" + key.getKey(), 11)));
          }
        }
        ChangeCommittable first =
            checkpoint(harness, 1, inserts.toArray(new ChangeEvent[0])).get("db.p");
        assertThat(first.stats().inserted()).isEqualTo(inserts.size());
        append(table, first);
        harness.notifyOfCompletedCheckpoint(1);
        ChangeCommittable second =
            checkpoint(harness, 2, updates.toArray(new ChangeEvent[0])).get("db.p");
        long found = positionsDeleted(second);
        assertThat(found)
            .as("rows of subtask %s found by position", subtask)
            .isEqualTo(updates.size());
        append(table, second);
        harness.notifyOfCompletedCheckpoint(2);
        states.add(harness.snapshot(3, 3));
      }
    }
    OperatorSubtaskState rescaled =
        AbstractStreamOperatorTestHarness.repartitionOperatorState(
            AbstractStreamOperatorTestHarness.repackageState(
                states.toArray(new OperatorSubtaskState[0])),
            MAX_PARALLELISM,
            2,
            1,
            0);
    try (var harness = partitionedHarness(id, schema, maxKeys, rescaled, 1, 0)) {
      List<ChangeEvent> updates = new ArrayList<>();
      for (long key = 1; key <= 30; key++) {
        updates.add(of("src.p", update(key, "p''" + key, 12)));
      }
      ChangeCommittable third =
          checkpoint(harness, 4, updates.toArray(new ChangeEvent[0])).get("db.p");
      long found = positionsDeleted(third);
      assertThat(found).as("rows found by position after the restore").isEqualTo(30);
      assertThat(third.stats().updated()).isEqualTo(30);
      append(table, third);
    }
    // A job without state at two subtasks: each loads the rows of the keys it owns, as the
    // stream hashes them, and finds each of them by position.
    for (int subtask = 0; subtask < 2; subtask++) {
      try (var harness = partitionedHarness(id, schema, maxKeys, true, null, 2, subtask)) {
        List<ChangeEvent> updates = new ArrayList<>();
        for (Map.Entry<Long, Integer> key : subtaskOf.entrySet()) {
          if (key.getValue() == subtask) {
            updates.add(of("src.p", update(key.getKey(), "p'''" + key.getKey(), 13)));
          }
        }
        ChangeCommittable fourth =
            checkpoint(harness, 5, updates.toArray(new ChangeEvent[0])).get("db.p");
        long found = positionsDeleted(fourth);
        assertThat(found)
            .as("rows of subtask %s loaded by a writer without state", subtask)
            .isEqualTo(updates.size());
      }
    }
  }

  /**
   * A table distributed by partition in the writer of several tables, scaled up from one subtask to
   * two: each subtask finds the rows of the keys the stream sends it by position, and a truncate's
   * copies, routed as the stream routes them, delete every row of the table.
   */
  @org.junit.jupiter.params.ParameterizedTest(name = "index max keys {0}, RocksDB {1}")
  @org.junit.jupiter.params.provider.CsvSource({"4000000, false", "0, false", "0, true"})
  void aTableDistributedByPartitionScaledUpFindsItsRowsAndIsTruncated(long maxKeys, boolean rocks)
      throws Exception {
    rocksDb = rocks;
    TableIdentifier id = TableIdentifier.of("db", "p");
    Table table = createBucketedTable(id);
    io.icebergcdc.cdc.ChangeSchema schema = TestChanges.CHANGE_SCHEMA;
    TableKeySelector keys = partitionedWriter(id, schema, maxKeys, false).streamKeys();
    OperatorSubtaskState state;
    try (var harness = partitionedHarness(id, schema, maxKeys, null, 1, 0)) {
      List<ChangeEvent> inserts = new ArrayList<>();
      for (long key = 1; key <= 30; key++) {
        inserts.add(of("src.p", insert(key, "p" + key, 10)));
      }
      append(table, checkpoint(harness, 1, inserts.toArray(new ChangeEvent[0])).get("db.p"));
      harness.notifyOfCompletedCheckpoint(1);
      state = harness.snapshot(2, 2);
    }
    long found = 0;
    long deleted = 0;
    for (int subtask = 0; subtask < 2; subtask++) {
      OperatorSubtaskState part =
          AbstractStreamOperatorTestHarness.repartitionOperatorState(
              state, MAX_PARALLELISM, 1, 2, subtask);
      try (var harness = partitionedHarness(id, schema, maxKeys, part, 2, subtask)) {
        List<ChangeEvent> updates = new ArrayList<>();
        for (long key = 1; key <= 30; key++) {
          ChangeEvent update = of("src.p", update(key, "q" + key, 11));
          if (subtaskOf(keys.getKey(update)) == subtask) {
            updates.add(update);
          }
        }
        assertThat(updates).as("keys of subtask %s", subtask).isNotEmpty();
        ChangeCommittable second =
            checkpoint(harness, 3, updates.toArray(new ChangeEvent[0])).get("db.p");
        found += positionsDeleted(second);
        harness.notifyOfCompletedCheckpoint(3);
        List<ChangeEvent> copies = new ArrayList<>();
        int thisSubtask = subtask;
        io.icebergcdc.cdc.TruncateCopies.forTables(
            ChangeEvent.truncate("src.p", io.icebergcdc.cdc.SourceSequence.postgresLsn(200), 0L),
            MAX_PARALLELISM,
            copy -> {
              if (subtaskOf(keys.getKey(copy)) == thisSubtask) {
                copies.add(copy);
              }
            });
        ChangeCommittable truncated =
            checkpoint(harness, 4, copies.toArray(new ChangeEvent[0])).get("db.p");
        deleted += truncated.stats().deleted();
      }
    }
    assertThat(found).as("rows found by position after scaling up").isEqualTo(30);
    assertThat(deleted).as("rows deleted by the truncate").isEqualTo(30);
  }

  private static int subtaskOf(TableKey key) {
    return org.apache.flink.runtime.state.KeyGroupRangeAssignment.assignKeyToParallelOperator(
        key, MAX_PARALLELISM, 2);
  }

  /** Creates table {@code id} of the test changes' schema, partitioned by a bucket of its key. */
  private Table createBucketedTable(TableIdentifier id) {
    return catalog()
        .loadCatalog()
        .createTable(
            id,
            TestChanges.SCHEMA,
            org.apache.iceberg.PartitionSpec.builderFor(TestChanges.SCHEMA).bucket("id", 3).build(),
            Map.of("format-version", "3"));
  }

  /** The number of rows a contribution deletes by position. */
  private static long positionsDeleted(ChangeCommittable written) {
    long positions = 0;
    for (String file : written.positionDeletes().files()) {
      positions += written.positionDeletes().positions(file).length;
    }
    return positions;
  }

  /** The writer of several tables with table {@code id} alone, distributed by partition. */
  private PositionDeltaWriterOperator<TableKey> partitionedWriter(
      TableIdentifier id, io.icebergcdc.cdc.ChangeSchema schema, long maxKeys, boolean bootstrap) {
    CatalogLoader catalog = catalog();
    PositionDeltaWriterOperator<?> writer =
        new PositionDeltaWriterOperator<>(
            TableLoader.fromCatalog(catalog, id),
            schema,
            new PartitionedKeySelector(schema, catalog.loadCatalog().loadTable(id).spec()),
            bootstrap,
            Map.of(),
            Duration.ofDays(1),
            io.icebergcdc.dedup.AmbiguousChangePolicy.FAIL,
            1.0);
    writer.setCommittedAs(id.toString());
    writer.setIndexMaxKeys(maxKeys);
    return PositionDeltaWriterOperator.ofTables(Map.of("src.p", writer), null);
  }

  /** A harness of {@link #partitionedWriter}, keyed as the operator says. */
  private KeyedOneInputStreamOperatorTestHarness<TableKey, ChangeEvent, ChangeCommittable>
      partitionedHarness(
          TableIdentifier id,
          io.icebergcdc.cdc.ChangeSchema schema,
          long maxKeys,
          OperatorSubtaskState restore,
          int parallelism,
          int subtask)
          throws Exception {
    return partitionedHarness(id, schema, maxKeys, false, restore, parallelism, subtask);
  }

  private KeyedOneInputStreamOperatorTestHarness<TableKey, ChangeEvent, ChangeCommittable>
      partitionedHarness(
          TableIdentifier id,
          io.icebergcdc.cdc.ChangeSchema schema,
          long maxKeys,
          boolean bootstrap,
          OperatorSubtaskState restore,
          int parallelism,
          int subtask)
          throws Exception {
    PositionDeltaWriterOperator<TableKey> operator =
        partitionedWriter(id, schema, maxKeys, bootstrap);
    return harnessOf(operator, restore, parallelism, subtask);
  }

  /**
   * A table's writer state is refused by a writer that hashes its keys otherwise: by primary key
   * where the state's were hashed by partition, and the other way, since the keyed state's keys
   * carry their hash and would be misread. The job ends with the table named, Flink not retrying.
   */
  @Test
  void aStateHashedByPartitionIsRefusedByAWriterThatHashesByKeyAndTheOtherWay() throws Exception {
    TableIdentifier id = TableIdentifier.of("db", "p");
    createBucketedTable(id);
    io.icebergcdc.cdc.ChangeSchema schema = TestChanges.CHANGE_SCHEMA;
    OperatorSubtaskState byPartition;
    try (var harness = partitionedHarness(id, schema, 4_000_000, null, 1, 0)) {
      checkpoint(harness, 1, of("src.p", insert(1, "a", 1)));
      byPartition = harness.snapshot(2, 2);
    }
    OperatorSubtaskState byKey;
    try (var harness = harness(null, 1, 0, Map.of("src.p", id))) {
      checkpoint(harness, 1, of("src.p", insert(1, "a", 1)));
      byKey = harness.snapshot(2, 2);
    }
    assertThatThrownBy(() -> harness(byPartition, 1, 0, Map.of("src.p", id)).close())
        .isInstanceOf(io.icebergcdc.sink.RefusedRestoreException.class)
        .hasMessageContaining("table test.db.p")
        .hasMessageContaining("hashed its keys over the writers by partition (spec 0)")
        .hasMessageContaining("this job hashes them by primary key");
    assertThatThrownBy(() -> partitionedHarness(id, schema, 4_000_000, byKey, 1, 0).close())
        .isInstanceOf(io.icebergcdc.sink.RefusedRestoreException.class)
        .hasMessageContaining("hashed its keys over the writers by primary key")
        .hasMessageContaining("this job hashes them by partition (spec 0)");
    // Each restores into a writer that hashes as it did.
    partitionedHarness(id, schema, 4_000_000, byPartition, 1, 0).close();
    harness(byKey, 1, 0, Map.of("src.p", id)).close();
    // Another engine changed the table's partition spec: its keys would hash otherwise.
    Table table = catalog().loadCatalog().loadTable(id);
    table
        .updateSpec()
        .removeField(org.apache.iceberg.expressions.Expressions.bucket("id", 3))
        .addField(org.apache.iceberg.expressions.Expressions.bucket("id", 5))
        .commit();
    assertThatThrownBy(() -> partitionedHarness(id, schema, 4_000_000, byPartition, 1, 0).close())
        .isInstanceOf(io.icebergcdc.sink.RefusedRestoreException.class)
        .hasMessageContaining("hashed its keys over the writers by partition (spec 0)")
        .hasMessageContaining("this job hashes them by partition (spec 1)")
        .hasMessageContaining("The table's partition spec changed since");
  }

  /** A writer of table {@code id} alone, built with {@code jobSchema}, restored from a state. */
  private KeyedOneInputStreamOperatorTestHarness<TableKey, ChangeEvent, ChangeCommittable> writerOf(
      TableIdentifier id, io.icebergcdc.cdc.ChangeSchema jobSchema, OperatorSubtaskState restore)
      throws Exception {
    return harness(restore, 1, 0, Map.of("src.c", id), jobSchema);
  }

  /**
   * The rows of a contribution's data files, {@code name qty note} by id, in the table's schema.
   */
  private static Map<Long, String> rowsOf(ChangeCommittable written, Table table)
      throws java.io.IOException {
    table.refresh();
    Map<Long, String> rows = new TreeMap<>();
    for (String file : written.dataFiles()) {
      org.apache.iceberg.DataFile data = ContentFileCodec.decodeDataFile(file, table.specs());
      try (org.apache.iceberg.io.CloseableIterable<org.apache.iceberg.data.Record> records =
          org.apache.iceberg.parquet.Parquet.read(table.io().newInputFile(data.location()))
              .project(table.schema())
              .createReaderFunc(
                  fileSchema ->
                      org.apache.iceberg.data.parquet.GenericParquetReaders.buildReader(
                          table.schema(), fileSchema))
              .build()) {
        for (org.apache.iceberg.data.Record record : records) {
          rows.put(
              (Long) record.getField("id"),
              record.getField("name")
                  + " "
                  + record.getField("qty")
                  + " "
                  + record.getField("note"));
        }
      }
    }
    return rows;
  }

  /** An upsert of {@code key} with rows of {@code schema}, whose id the change carries. */
  private static ChangeEvent change(
      io.icebergcdc.cdc.ChangeSchema schema,
      int schemaId,
      long key,
      String name,
      long qty,
      long lsn,
      String... note) {
    org.apache.flink.table.data.GenericRowData row =
        new org.apache.flink.table.data.GenericRowData(schema.schema().columns().size());
    row.setField(0, key);
    row.setField(1, name == null ? null : org.apache.flink.table.data.StringData.fromString(name));
    row.setField(2, schemaId == -1 ? (Object) (int) qty : (Object) qty);
    if (note.length > 0) {
      row.setField(3, org.apache.flink.table.data.StringData.fromString(note[0]));
    }
    ChangeEvent event =
        new ChangeEvent(
            "src.c",
            io.icebergcdc.cdc.Operation.UPDATE,
            schema.keyOf(row),
            null,
            row,
            io.icebergcdc.cdc.SourceSequence.postgresLsn(lsn),
            lsn);
    return schemaId == -1
        ? event
        : event.inSchema(
            schemaId,
            null,
            row,
            io.icebergcdc.cdc.ColumnMask.EMPTY,
            io.icebergcdc.cdc.ColumnMask.EMPTY);
  }

  /**
   * A table that appears while the job runs is written from its first change, as a table added to
   * the job; Flink restores the job as it was built, without the table, and the writer takes the
   * table's state back: its dedup drops a stale change and its index finds a row to update.
   */
  @org.junit.jupiter.params.ParameterizedTest(name = "index max keys {0}")
  @org.junit.jupiter.params.provider.ValueSource(longs = {4_000_000, 0})
  void aTableThatAppearsWhileTheJobRunsIsWrittenAndKeptAcrossRestores(long maxKeys)
      throws Exception {
    indexMaxKeys = maxKeys;
    takesNewTables = true;
    Map<String, Table> tables = tables();
    OperatorSubtaskState state;
    String fileOfC;
    try (var harness = harness(null, 1, 0)) {
      Map<String, ChangeCommittable> first =
          checkpoint(harness, 1, of("src.a", insert(1, "a", 10)));
      append(tables.get("src.a"), first.get("db.a"));
      harness.notifyOfCompletedCheckpoint(1);
      Table c = createTable(TableIdentifier.of("db", "c"));
      Map<String, ChangeCommittable> second =
          checkpoint(harness, 2, of("db.c", insert(1, "c1", 10)), of("db.c", insert(2, "c2", 10)));
      assertThat(second).containsOnlyKeys("db.c");
      assertThat(second.get("db.c").stats().inserted()).isEqualTo(2);
      fileOfC = dataFile(second.get("db.c"), c);
      assertThat(fileOfC).contains("/db/c/");
      append(c, second.get("db.c"));
      state = harness.snapshot(2, 2);
      harness.notifyOfCompletedCheckpoint(2);
    }
    try (var harness = harness(state, 1, 0)) {
      Map<String, ChangeCommittable> after =
          checkpoint(harness, 3, of("db.c", update(1, "c1'", 5)), of("db.c", update(2, "c2'", 11)));
      ChangeCommittable c = after.get("db.c");
      assertThat(c.stats().staleDropped()).isEqualTo(1);
      assertThat(c.stats().updated()).isEqualTo(1);
      assertThat(c.equalityFallbacks()).isZero();
      assertThat(c.positionDeletes().positions(fileOfC)).containsExactly(1);
    }
    // Restored by a job built with other tables (say, its pattern changed), the table's state is
    // dropped as that of any table the job does not write: met again, it starts afresh.
    try (var harness = harness(state, 1, 0, Map.of("src.a", TABLES.get("src.a")))) {
      Map<String, ChangeCommittable> after =
          checkpoint(harness, 3, of("db.c", update(1, "c1'", 5)));
      assertThat(after.get("db.c").stats().staleDropped()).isZero();
    }
    // Restored by a writer that takes no new tables, the table's state is dropped.
    takesNewTables = false;
    try (var harness = harness(state, 1, 0)) {
      assertThatThrownBy(
              () -> harness.processElement(new StreamRecord<>(of("db.c", insert(3, "c", 1)))))
          .hasMessageContaining("db.c");
    }
  }

  /**
   * The writers of a table taken in flight start on each subtask at its first change there, in the
   * schema the table has then: each is restored in its own, not in one subtask's for all.
   */
  @Test
  void eachSubtaskRestoresATableThatAppearedInTheSchemaItsWriterWasBuiltWith() throws Exception {
    takesNewTables = true;
    tables();
    Table c = createTable(TableIdentifier.of("db", "c"));
    int firstSchema = c.schema().schemaId();
    // A key of each subtask's.
    ChangeEvent[] keyOf = new ChangeEvent[2];
    for (int subtask = 0; subtask < 2; subtask++) {
      try (var harness = harness(null, 2, subtask)) {
        for (long id = 1; keyOf[subtask] == null; id++) {
          ChangeEvent change = of("db.c", insert(id, "c" + id, 10));
          if (owns(harness, change)) {
            keyOf[subtask] = change;
          }
        }
      }
    }
    List<OperatorSubtaskState> states = new ArrayList<>();
    ChangeEvent[] written = new ChangeEvent[2];
    for (int subtask = 0; subtask < 2; subtask++) {
      if (subtask == 1) {
        // Subtask 1 meets the table only after it took a column.
        c.updateSchema()
            .addColumn("note", org.apache.iceberg.types.Types.StringType.get())
            .commit();
      }
      c.refresh();
      ChangeEvent change = keyOf[subtask];
      org.apache.flink.table.data.GenericRowData row =
          new org.apache.flink.table.data.GenericRowData(c.schema().columns().size());
      for (int i = 0; i < change.after().getArity(); i++) {
        row.setField(i, ((org.apache.flink.table.data.GenericRowData) change.after()).getField(i));
      }
      written[subtask] =
          change.inSchema(
              c.schema().schemaId(),
              null,
              row,
              io.icebergcdc.cdc.ColumnMask.EMPTY,
              io.icebergcdc.cdc.ColumnMask.EMPTY);
      try (var harness = harness(null, 2, subtask)) {
        checkpoint(harness, 1, written[subtask]);
        states.add(harness.snapshot(1, 1));
      }
    }
    assertThat(c.schema().schemaId()).isNotEqualTo(firstSchema);
    OperatorSubtaskState merged =
        AbstractStreamOperatorTestHarness.repackageState(
            states.toArray(new OperatorSubtaskState[0]));
    for (int subtask = 0; subtask < 2; subtask++) {
      OperatorSubtaskState own =
          AbstractStreamOperatorTestHarness.repartitionOperatorState(
              merged, MAX_PARALLELISM, 2, 2, subtask);
      try (var harness = harness(own, 2, subtask)) {
        ChangeCommittable again = checkpoint(harness, 2, written[subtask]).get("db.c");
        assertThat(again.stats().duplicatesDropped()).as("subtask %s", subtask).isEqualTo(1);
      }
    }
  }

  /**
   * A table whose spec another engine changed to partition by a column outside the key fails the
   * restore naming the table and the spec: a key's delete, which carries only the key, would go to
   * another partition than its row and never apply.
   */
  @Test
  void aTablePartitionedSinceByAColumnOutsideTheKeyFailsTheRestore() throws Exception {
    Map<String, Table> tables = tables();
    OperatorSubtaskState state;
    try (var harness = harness(null, 1, 0)) {
      append(
          tables.get("src.a"), checkpoint(harness, 1, of("src.a", insert(1, "a", 10))).get("db.a"));
      harness.notifyOfCompletedCheckpoint(1);
      state = harness.snapshot(1, 1);
    }
    tables.get("src.a").updateSpec().addField("name").commit();
    assertThatThrownBy(() -> harness(state, 1, 0).close())
        .hasStackTraceContaining("table ")
        .hasStackTraceContaining("db.a is now partitioned by spec 1")
        .hasStackTraceContaining("partition column 'name' is not part of the primary key");
  }

  /**
   * A table that appeared while the job ran is built again at a restore in the schema its writer
   * was first built with, not the table's current one: a change delivered again after the table
   * took a column is the same change (a duplicate), not an ambiguous one, which failed the job at
   * every restart (its fingerprint hashed the current schema's columns).
   */
  @Test
  void aTableThatAppearedIsRestoredInTheSchemaItsWriterWasBuiltWith() throws Exception {
    takesNewTables = true;
    tables();
    OperatorSubtaskState state;
    ChangeEvent first;
    try (var harness = harness(null, 1, 0)) {
      Table c = createTable(TableIdentifier.of("db", "c"));
      ChangeEvent insert = of("db.c", insert(1, "c1", 10));
      // As a source gives the rows of a table that appeared: in its schema, by id.
      first =
          insert.inSchema(
              c.schema().schemaId(),
              null,
              insert.after(),
              io.icebergcdc.cdc.ColumnMask.EMPTY,
              io.icebergcdc.cdc.ColumnMask.EMPTY);
      append(c, checkpoint(harness, 1, first).get("db.c"));
      state = harness.snapshot(1, 1);
      harness.notifyOfCompletedCheckpoint(1);
      c.updateSchema().addColumn("note", org.apache.iceberg.types.Types.StringType.get()).commit();
    }
    try (var harness = harness(state, 1, 0)) {
      ChangeCommittable again = checkpoint(harness, 2, first).get("db.c");
      assertThat(again.stats().duplicatesDropped()).isEqualTo(1);
      assertThat(again.stats().inserted() + again.stats().updated()).isZero();
    }
  }

  /**
   * A table that appeared while the job ran, restored into a writer built again with the same
   * tables (the job started again without it, its source no longer matching it): its state is
   * dropped, not taken back, so a table read again later starts without it.
   */
  @Test
  void aTableThatAppearedIsDroppedByAWriterBuiltAgainWithTheSameTables() throws Exception {
    takesNewTables = true;
    tables();
    build = 1L;
    OperatorSubtaskState state;
    ChangeEvent first;
    try (var harness = harness(null, 1, 0)) {
      Table c = createTable(TableIdentifier.of("db", "c"));
      first = of("db.c", insert(1, "c1", 10));
      append(c, checkpoint(harness, 1, first).get("db.c"));
      state = harness.snapshot(1, 1);
      harness.notifyOfCompletedCheckpoint(1);
    }
    try (var harness = harness(state, 1, 0)) {
      // Flink's restart: the table is taken back, and the change delivered again is a duplicate.
      ChangeCommittable again = checkpoint(harness, 2, first).get("db.c");
      assertThat(again.stats().duplicatesDropped()).isEqualTo(1);
    }
    build = 2L;
    try (var harness = harness(state, 1, 0)) {
      ChangeCommittable anew = checkpoint(harness, 2, first).get("db.c");
      assertThat(anew.stats().duplicatesDropped()).isZero();
      assertThat(anew.stats().inserted()).isEqualTo(1);
    }
  }

  /**
   * A table that appears while the job runs gets a writer only on the subtasks its changes reach:
   * restored, a subtask that had none starts the table afresh, loading its keys' rows from the
   * table, rather than taking the index of the subtask that had one as complete for its keys.
   */
  @Test
  void aSubtaskThatNeverWroteATableThatAppearedStartsItAfreshOnRestore() throws Exception {
    takesNewTables = true;
    bootstrap = true;
    tables();
    // Table c exists with rows of keys 1 to 20 before the job meets it.
    TableIdentifier cId = TableIdentifier.of("db", "c");
    Table c = createTable(cId);
    try (var earlier = harness(null, 1, 0, Map.of("db.c", cId))) {
      List<ChangeEvent> rows = new ArrayList<>();
      for (long id = 1; id <= 20; id++) {
        rows.add(of("db.c", insert(id, "c" + id, 10)));
      }
      append(c, checkpoint(earlier, 1, rows.toArray(new ChangeEvent[0])).get("db.c"));
    }
    // The job of a and b at parallelism 2: a change of c reaches subtask 0 alone.
    ChangeEvent toZero = null;
    ChangeEvent toOne = null;
    List<OperatorSubtaskState> states = new ArrayList<>();
    for (int subtask = 0; subtask < 2; subtask++) {
      try (var harness = harness(null, 2, subtask)) {
        for (long id = 1; id <= 20 && (toZero == null || toOne == null); id++) {
          ChangeEvent change = of("db.c", update(id, "c'" + id, 11));
          boolean owned = owns(harness, change);
          if (owned && subtask == 0 && toZero == null) {
            toZero = change;
          } else if (owned && subtask == 1 && toOne == null) {
            toOne = change;
          }
        }
        if (subtask == 0) {
          Map<String, ChangeCommittable> written = checkpoint(harness, 2, toZero);
          assertThat(written.get("db.c").stats().updated()).isEqualTo(1);
        } else {
          checkpoint(harness, 2, of("src.a", insert(1, "a", 1)));
        }
        states.add(harness.snapshot(2, 2));
      }
    }
    OperatorSubtaskState merged =
        AbstractStreamOperatorTestHarness.repackageState(
            states.toArray(new OperatorSubtaskState[0]));
    OperatorSubtaskState ofOne =
        AbstractStreamOperatorTestHarness.repartitionOperatorState(
            merged, MAX_PARALLELISM, 2, 2, 1);
    try (var harness = harness(ofOne, 2, 1)) {
      ChangeCommittable written = checkpoint(harness, 3, toOne).get("db.c");
      // The key's row, written before the job, is deleted where it is, not left beside the new.
      assertThat(written.stats().updated()).isEqualTo(1);
      assertThat(written.positionDeletes().isEmpty()).isFalse();
      assertThat(written.equalityFallbacks()).isZero();
    }
  }

  /**
   * A table created empty for a topic that appeared, written by one subtask of two: restored at
   * parallelism 1, its index is complete (every row in it is one the job's writers wrote), so a new
   * key is inserted without a delete by key.
   */
  @Test
  void anAppearedTableThatStartedEmptyKeepsItsIndexCompleteThroughARescale() throws Exception {
    takesNewTables = true;
    tables();
    TableIdentifier cId = TableIdentifier.of("db", "c");
    Table c = createTable(cId);
    List<OperatorSubtaskState> states = new ArrayList<>();
    for (int subtask = 0; subtask < 2; subtask++) {
      try (var harness = harness(null, 2, subtask)) {
        List<ChangeEvent> mine = new ArrayList<>();
        for (long id = 1; id <= 20 && subtask == 0; id++) {
          ChangeEvent change = of("db.c", insert(id, "c" + id, 10));
          if (owns(harness, change)) {
            mine.add(change);
          }
        }
        for (long id = 100; ; id++) {
          ChangeEvent change = of("src.a", insert(id, "a", 1));
          if (owns(harness, change)) {
            mine.add(change);
            break;
          }
        }
        Map<String, ChangeCommittable> written =
            checkpoint(harness, 1, mine.toArray(new ChangeEvent[0]));
        if (subtask == 0) {
          append(c, written.get("db.c"));
        }
        states.add(harness.snapshot(1, 1));
      }
    }
    OperatorSubtaskState rescaled =
        AbstractStreamOperatorTestHarness.repartitionOperatorState(
            AbstractStreamOperatorTestHarness.repackageState(
                states.toArray(new OperatorSubtaskState[0])),
            MAX_PARALLELISM,
            2,
            1,
            0);
    try (var harness = harness(rescaled, 1, 0)) {
      ChangeCommittable written =
          checkpoint(harness, 2, of("db.c", insert(500, "new", 11)), of("db.c", update(1, "u", 12)))
              .get("db.c");
      assertThat(written.equalityFallbacks()).isZero();
      assertThat(written.deleteFiles()).isEmpty();
      assertThat(written.stats().updated()).isEqualTo(1);
    }
  }

  /**
   * A table distributed by partition that appears while the job runs is taken in flight: the
   * stream, keyed before the table existed, hashes its keys by their partition as soon as it meets
   * the table (looking it up as its writer is built), so that all keys of a partition reach one
   * subtask, and the writer's index finds their rows across a restore at another parallelism.
   */
  @org.junit.jupiter.params.ParameterizedTest(name = "index max keys {0}")
  @org.junit.jupiter.params.provider.ValueSource(longs = {4_000_000, 0})
  void aTableDistributedByPartitionThatAppearsIsHashedByItsPartitions(long maxKeys)
      throws Exception {
    indexMaxKeys = maxKeys;
    takesNewTables = true;
    tables();
    TableIdentifier id = TableIdentifier.of("db", "p");
    Table table = createBucketedTable(id);
    Map<Long, Integer> subtaskOf = new TreeMap<>();
    List<OperatorSubtaskState> states = new ArrayList<>();
    for (int subtask = 0; subtask < 2; subtask++) {
      try (var harness = harness(null, 2, subtask)) {
        TableKeySelector keys =
            ((PositionDeltaWriterOperator<?>) harness.getOperator()).streamKeys();
        Map<Integer, java.util.Set<Integer>> subtasksOfPartition = new TreeMap<>();
        for (long key = 1; key <= 30; key++) {
          TableKey stateKey = keys.getKey(of("db.p", insert(key, "p" + key, key)));
          assertThat(stateKey.hashedApart()).as("hashed by its partition").isTrue();
          subtaskOf.put(key, subtaskOf(stateKey));
          subtasksOfPartition
              .computeIfAbsent(stateKey.hash(), h -> new java.util.TreeSet<>())
              .add(subtaskOf(stateKey));
        }
        assertThat(subtasksOfPartition).hasSize(3);
        assertThat(subtasksOfPartition.values()).allSatisfy(s -> assertThat(s).hasSize(1));
        List<ChangeEvent> inserts = new ArrayList<>();
        for (Map.Entry<Long, Integer> key : subtaskOf.entrySet()) {
          if (key.getValue() == subtask) {
            inserts.add(of("db.p", insert(key.getKey(), "p" + key.getKey(), 10)));
          }
        }
        ChangeCommittable first =
            checkpoint(harness, 1, inserts.toArray(new ChangeEvent[0])).get("db.p");
        assertThat(first.stats().inserted()).isEqualTo(inserts.size());
        append(table, first);
        harness.notifyOfCompletedCheckpoint(1);
        states.add(harness.snapshot(2, 2));
      }
    }
    assertThat(new java.util.TreeSet<>(subtaskOf.values())).as("both subtasks write").hasSize(2);
    OperatorSubtaskState rescaled =
        AbstractStreamOperatorTestHarness.repartitionOperatorState(
            AbstractStreamOperatorTestHarness.repackageState(
                states.toArray(new OperatorSubtaskState[0])),
            MAX_PARALLELISM,
            2,
            1,
            0);
    try (var harness = harness(rescaled, 1, 0)) {
      List<ChangeEvent> updates = new ArrayList<>();
      for (long key = 1; key <= 30; key++) {
        updates.add(of("db.p", update(key, "p'" + key, 11)));
      }
      ChangeCommittable second =
          checkpoint(harness, 3, updates.toArray(new ChangeEvent[0])).get("db.p");
      assertThat(positionsDeleted(second))
          .as("rows found by position after the restore")
          .isEqualTo(30);
      assertThat(second.stats().updated()).isEqualTo(30);
    }
  }

  /**
   * A change of a table that appeared, hashed by partition, that reaches a subtask which does not
   * own its key (a task that keys the stream hashed it otherwise) fails the task as Flink sets its
   * key, rather than write a key's row on two subtasks; a writer whose table is hashed otherwise by
   * the stream's selector than by the writer itself is refused at the table's first change.
   */
  @Test
  void aChangeOfAnAppearedTableHashedByPartitionElsewhereFailsTheWriter() throws Exception {
    takesNewTables = true;
    tables();
    createBucketedTable(TableIdentifier.of("db", "p"));
    try (var harness = harness(null, 2, 0)) {
      TableKeySelector keys = ((PositionDeltaWriterOperator<?>) harness.getOperator()).streamKeys();
      long notOwned = 1;
      while (subtaskOf(keys.getKey(of("db.p", insert(notOwned, "p", 1)))) == 0) {
        notOwned++;
      }
      long owned = 1;
      while (subtaskOf(keys.getKey(of("db.p", insert(owned, "p", 1)))) != 0) {
        owned++;
      }
      harness.processElement(new StreamRecord<>(of("db.p", insert(owned, "p", 1))));
      long key = notOwned;
      assertThatThrownBy(
              () -> harness.processElement(new StreamRecord<>(of("db.p", insert(key, "p", 1)))))
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("table db.p")
          .hasMessageContaining("does not own its key")
          .hasStackTraceContaining("is not in KeyGroupRange");
      // One of a table the job was built with fails as Flink fails it.
      long notOwnedOfA = 1;
      while (subtaskOf(keys.getKey(of("src.a", insert(notOwnedOfA, "a", 1)))) == 0) {
        notOwnedOfA++;
      }
      long keyOfA = notOwnedOfA;
      assertThatThrownBy(
              () -> harness.processElement(new StreamRecord<>(of("src.a", insert(keyOfA, "a", 1)))))
          .isNotInstanceOf(IllegalStateException.class)
          .hasStackTraceContaining("is not in KeyGroupRange");
    }
    streamHashesNewTablesByKey = true;
    try (var harness = harness(null, 1, 0)) {
      assertThatThrownBy(
              () -> harness.processElement(new StreamRecord<>(of("db.p", insert(1, "p", 1)))))
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("table db.p")
          .hasMessageContaining(
              "by primary key by the stream and by partition spec 0 by its writer");
    }
  }

  /**
   * Changes of one table that appeared while the job runs from two topics (two topics named into
   * one table, read by different readers) fail the job, naming both.
   */
  @Test
  void anAppearedTableFedByTwoSourcesIsRefused() throws Exception {
    takesNewTables = true;
    tables();
    createTable(TableIdentifier.of("db", "c"));
    try (var harness = harness(null, 1, 0)) {
      harness.processElement(
          new StreamRecord<>(of("db.c", insert(1, "c", 1)).withOrigin("shop.public.c/0", 1)));
      harness.processElement(
          new StreamRecord<>(of("db.c", insert(2, "c", 1)).withOrigin("shop.public.c/1", 1)));
      assertThatThrownBy(
              () ->
                  harness.processElement(
                      new StreamRecord<>(
                          of("db.c", insert(3, "c", 1)).withOrigin("other.public.c/0", 1))))
          .isInstanceOf(io.icebergcdc.cdc.RefusedSourceException.class)
          .hasMessageContaining("shop.public.c")
          .hasMessageContaining("other.public.c");
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
