package io.icebergcdc.capture;

import static org.assertj.core.api.Assertions.assertThat;

import io.debezium.config.Configuration;
import io.debezium.connector.mariadb.antlr.MariaDbAntlrDdlParser;
import io.debezium.connector.mariadb.gtid.MariaDbGtidSetFactory;
import io.debezium.connector.mariadb.history.MariaDbHistoryRecordComparator;
import io.debezium.document.Document;
import io.debezium.document.DocumentWriter;
import io.debezium.relational.Column;
import io.debezium.relational.Table;
import io.debezium.relational.TableId;
import io.debezium.relational.Tables;
import io.debezium.relational.history.HistoryRecord;
import io.debezium.relational.history.HistoryRecordComparator;
import io.debezium.relational.history.SchemaHistoryListener;
import io.debezium.relational.history.TableChanges;
import java.sql.Types;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * Compacted histories recover, through Debezium's own recovery (its MariaDB comparator of positions
 * and DDL parser), the same tables as the histories whole, at the position compacted at and at any
 * later one.
 */
class SchemaHistoryCompactionTest {

  private static final Map<String, String> SOURCE = Map.of("server", "maria");
  private static final HistoryRecordComparator COMPARATOR =
      new MariaDbHistoryRecordComparator(gtid -> true, new MariaDbGtidSetFactory());

  private final SchemaHistoryCompaction compaction = new SchemaHistoryCompaction(COMPARATOR, true);

  /**
   * A MariaDB binlog position as the connector records it, with its GTID position, its server's id
   * and the event's time.
   */
  private static Map<String, Object> recordedAt(long pos) {
    Map<String, Object> position = withoutGtids(pos);
    position.put("gtids", "0-1-" + pos);
    return position;
  }

  private static Map<String, Object> withoutGtids(long pos) {
    Map<String, Object> position = new LinkedHashMap<>();
    position.put("ts_sec", 1_700_000_000L + pos);
    position.put("file", "mysql-bin.000003");
    position.put("pos", pos);
    position.put("server_id", 1);
    position.put("event", 1);
    return position;
  }

  /** The position a restore at {@code pos} recovers at, as Debezium's offset loader gives it. */
  private static Map<String, Object> restoredAt(long pos) {
    Map<String, Object> position = new LinkedHashMap<>();
    position.put("file", "mysql-bin.000003");
    position.put("pos", pos);
    position.put("gtids", "0-1-" + pos);
    position.put("event", 1);
    return position;
  }

  private static String record(long pos, String ddl, TableChanges changes) throws Exception {
    return DocumentWriter.defaultWriter()
        .write(
            new HistoryRecord(SOURCE, recordedAt(pos), "shop", null, ddl, changes, Instant.now())
                .document());
  }

  private static Table table(String name, int columns) {
    var editor = Table.editor().tableId(id(name));
    editor.addColumn(Column.editor().name("id").type("INT").jdbcType(Types.INTEGER).create());
    for (int i = 1; i < columns; i++) {
      editor.addColumn(
          Column.editor().name("c" + i).type("VARCHAR").jdbcType(Types.VARCHAR).length(i).create());
    }
    return editor.setPrimaryKeyNames("id").create();
  }

  private static TableId id(String name) {
    return new TableId("shop", null, name);
  }

  private static StateSchemaHistory configured(String id) {
    StateSchemaHistory history = new StateSchemaHistory();
    history.configure(
        Configuration.create().with(StateSchemaHistory.ID, id).build(),
        COMPARATOR,
        SchemaHistoryListener.NOOP,
        true);
    return history;
  }

  /** The tables Debezium recovers from {@code records} for a restore at {@code pos}. */
  private static Map<String, Table> recovered(List<String> records, long pos) throws Exception {
    return recovered(records, pos, false);
  }

  private static Map<String, Table> recovered(
      List<String> records, long pos, boolean caseInsensitive) throws Exception {
    String id = UUID.randomUUID().toString();
    StateSchemaHistory.register(id, records);
    try {
      Tables tables = new Tables(caseInsensitive);
      configured(id).recover(Map.of(SOURCE, restoredAt(pos)), tables, new MariaDbAntlrDdlParser());
      Map<String, Table> byId = new TreeMap<>();
      for (TableId table : tables.tableIds()) {
        byId.put(table.toString().toLowerCase(java.util.Locale.ROOT), tables.forTable(table));
      }
      return byId;
    } finally {
      StateSchemaHistory.unregister(id);
    }
  }

  private SchemaHistoryCompaction.Compacted compacted(List<String> records, long pos)
      throws Exception {
    Document position = Document.create();
    recordedAt(pos).forEach(position::set);
    return compaction.compact(records, Document.create("server", "maria"), position);
  }

  @Test
  void aRunOfAltersBecomesOneRecordOfEachTablesLastState() throws Exception {
    List<String> records = new ArrayList<>();
    records.add(record(100, "CREATE TABLE `orders` (`id` int PRIMARY KEY)", null));
    for (int i = 1; i <= 51; i++) {
      records.add(
          record(
              100 + i,
              "ALTER TABLE customers ...",
              new TableChanges().alter(table("customers", i))));
    }
    SchemaHistoryCompaction.Compacted whole = compacted(records, 150);
    List<String> compacted = whole.records();

    // The statement replayed through the DDL parser is kept; the alters up to 150 are one record;
    // the one past 150 is kept as it is, for a restore at 150 skips it.
    assertThat(compacted).hasSize(3);
    assertThat(whole.settled()).isEqualTo(2);
    assertThat(compacted.get(0)).isEqualTo(records.get(0));
    assertThat(compacted.get(2)).isEqualTo(records.get(51));
    assertThat(compacted.get(1)).doesNotContain("ALTER TABLE");
    // Restored at 150 (the position compacted at) or later.
    assertThat(recovered(compacted, 150)).isEqualTo(recovered(records, 150));
    assertThat(recovered(compacted, 150).get("shop.customers").columns()).hasSize(50);
    assertThat(recovered(compacted, 150)).containsKey("shop.orders");
    assertThat(recovered(compacted, 200)).isEqualTo(recovered(records, 200));
    assertThat(recovered(compacted, 200).get("shop.customers").columns()).hasSize(51);
  }

  @Test
  void aTableRenamedAwayAndItsNameCreatedAgainKeepsBoth() throws Exception {
    List<String> records =
        List.of(
            record(10, "CREATE TABLE a", new TableChanges().create(table("a", 2))),
            record(11, "RENAME TABLE a TO b", new TableChanges().rename(table("b", 2), id("a"))),
            record(12, "CREATE TABLE a", new TableChanges().create(table("a", 5))),
            record(13, "CREATE TABLE c", new TableChanges().create(table("c", 1))),
            record(14, "DROP TABLE c", new TableChanges().drop(id("c"))));
    List<String> compacted = compacted(records, 14).records();

    assertThat(compacted).hasSize(1);
    Map<String, Table> tables = recovered(compacted, 14);
    assertThat(tables).isEqualTo(recovered(records, 14));
    assertThat(tables.keySet()).containsExactly("shop.a", "shop.b");
    assertThat(tables.get("shop.a").columns()).hasSize(5);
  }

  /** Where the server ignores the case of table names, two spellings are one table. */
  @Test
  void twoSpellingsOfANameApplyInTheOrderOfTheirLastChanges() throws Exception {
    List<String> records =
        List.of(
            record(10, "CREATE", new TableChanges().create(table("staging", 2))),
            record(11, "DROP", new TableChanges().drop(id("Staging"))),
            record(12, "CREATE", new TableChanges().create(table("staging", 3))));
    List<String> compacted = compacted(records, 12).records();

    assertThat(compacted).hasSize(1);
    assertThat(recovered(compacted, 12, true)).isEqualTo(recovered(records, 12, true));
    assertThat(recovered(compacted, 12, true)).containsKey("shop.staging");
  }

  /**
   * Random histories of creates, alters, renames and drops over a few tables, with statements
   * without table changes between them (tables created and dropped by the DDL parser, under the
   * same names): compacted at a random position, each recovers the same tables as the history
   * whole, at that position and at later ones, and holds a record for each run and each statement.
   */
  @Test
  void randomHistoriesRecoverTheSameTables() throws Exception {
    Random random = new Random(42);
    for (int round = 0; round < 200; round++) {
      List<String> records = new ArrayList<>();
      List<Boolean> withChanges = new ArrayList<>();
      int count = 1 + random.nextInt(60);
      for (int i = 0; i < count; i++) {
        long pos = 1000 + i;
        String name = "t" + random.nextInt(6);
        TableChanges changes =
            switch (random.nextInt(6)) {
              case 0 -> null;
              case 1 -> new TableChanges().create(table(name, 1 + random.nextInt(4)));
              case 2 ->
                  new TableChanges()
                      .rename(table(name, 1 + random.nextInt(4)), id("t" + random.nextInt(6)));
              case 3 -> new TableChanges().drop(id(name));
              case 4 -> null;
              default ->
                  new TableChanges()
                      .alter(table(name, 1 + random.nextInt(4)))
                      .drop(id("t" + random.nextInt(6)));
            };
        String ddl =
            changes != null
                ? "ALTER"
                : random.nextBoolean()
                    ? "CREATE TABLE " + name + " (id int PRIMARY KEY, parsed varchar(3))"
                    : "DROP TABLE IF EXISTS " + name;
        records.add(record(pos, ddl, changes));
        withChanges.add(changes != null);
      }
      long stop = 1000 + random.nextInt(count + 1) - 1;

      // One record for each run of records with changes up to the stop and each other record.
      int expected = 0;
      for (int i = 0; i < count; i++) {
        boolean folds = withChanges.get(i) && 1000 + i <= stop;
        boolean continues = folds && i > 0 && withChanges.get(i - 1);
        expected += continues ? 0 : 1;
      }
      List<String> compacted = compacted(records, stop).records();
      assertThat(compacted).as("round %s", round).hasSize(expected);
      for (long at : new long[] {stop, stop + 1 + random.nextInt(count + 1), 1000 + count}) {
        assertThat(recovered(compacted, at))
            .as("round %s, compacted at %s, recovered at %s", round, stop, at)
            .isEqualTo(recovered(records, at));
      }
      // Compacted again later, as the next checkpoints do.
      List<String> again = compacted(compacted, 1000 + count).records();
      assertThat(recovered(again, 1000 + count)).isEqualTo(recovered(records, 1000 + count));
    }
  }

  /**
   * Without GTIDs, Debezium 3.5's recovery takes every record for one at or before the position it
   * restores at (it compares the times of records of two servers, and reads a time the restored
   * position lacks); compaction folds only the records at or before the stored offsets' file and
   * position, and the compacted history recovers the same tables there.
   */
  @Test
  void positionsWithoutGtidsFoldByFileAndPosition() throws Exception {
    List<String> records = new ArrayList<>();
    for (int i = 1; i <= 30; i++) {
      records.add(
          DocumentWriter.defaultWriter()
              .write(
                  new HistoryRecord(
                          SOURCE,
                          withoutGtids(i),
                          "shop",
                          null,
                          "ALTER",
                          new TableChanges().alter(table("t", i)),
                          Instant.now())
                      .document()));
    }
    Document stop = Document.create();
    withoutGtids(20).forEach(stop::set);
    List<String> compacted =
        compaction.compact(records, Document.create("server", "maria"), stop).records();
    assertThat(compacted).hasSize(11);

    String id = UUID.randomUUID().toString();
    for (List<String> history : List.of(records, compacted)) {
      StateSchemaHistory.register(id, history);
      Tables tables = new Tables();
      Map<String, Object> restored = restoredAt(20);
      restored.remove("gtids");
      configured(id).recover(Map.of(SOURCE, restored), tables, new MariaDbAntlrDdlParser());
      assertThat(tables.forTable(id("t")).columns()).hasSize(30);
      StateSchemaHistory.unregister(id);
    }
  }

  /** A record the connector's history stores, as it does while the connector runs. */
  private static void storeRecord(String id, long pos) throws Exception {
    configured(id)
        .record(
            SOURCE,
            recordedAt(pos),
            "shop",
            null,
            "ALTER",
            new TableChanges().alter(table("customers", 1 + (int) pos % 3)),
            Instant.now());
  }

  /** The engine's offsets at {@code pos}, as its offset store holds them. */
  private static Map<String, String> offsets(long pos) throws Exception {
    Document position = Document.create();
    recordedAt(pos).forEach(position::set);
    return Map.of(
        "[\"engine\",{\"server\":\"maria\"}]", DocumentWriter.defaultWriter().write(position));
  }

  /**
   * A checkpoint compacts at the offsets the engine's store holds, those of the last completed
   * checkpoint, from which Debezium recovers the same history when it restarts the connector within
   * the engine: the records after them are kept, whatever the checkpoint's own offsets.
   */
  @Test
  void aCheckpointCompactsAtTheOffsetsTheEngineHoldsOnceEnoughRecordsCameSince() throws Exception {
    String id = UUID.randomUUID().toString();
    List<String> records = new ArrayList<>();
    for (int i = 1; i <= StateSchemaHistory.COMPACTION_FLOOR + 1; i++) {
      records.add(record(i, "ALTER", new TableChanges().alter(table("customers", 1 + i % 3))));
    }
    StateSchemaHistory.register(id, records);
    try {
      java.util.concurrent.atomic.AtomicReference<Map<String, String>> stored =
          new java.util.concurrent.atomic.AtomicReference<>(Map.of());
      // Not before the connector configures the history (it brings the order of positions), nor
      // before the engine's store holds offsets.
      assertThat(StateSchemaHistory.recordsForCheckpoint(id)).hasSize(records.size());
      configured(id);
      StateSchemaHistory.offsetsFrom(id, stored::get);
      assertThat(StateSchemaHistory.recordsForCheckpoint(id)).hasSize(records.size());

      stored.set(offsets(40));
      List<String> compacted = StateSchemaHistory.recordsForCheckpoint(id);
      assertThat(compacted).hasSize(1 + StateSchemaHistory.COMPACTION_FLOOR + 1 - 40);
      assertThat(recovered(compacted, 40)).isEqualTo(recovered(records, 40));
      assertThat(StateSchemaHistory.records(id)).isEqualTo(compacted);

      // 25 records after 40 and 65 more: compacted again once the store's offsets move.
      for (int i = 1; i <= StateSchemaHistory.COMPACTION_FLOOR + 1; i++) {
        storeRecord(id, 100 + i);
      }
      assertThat(StateSchemaHistory.recordsForCheckpoint(id)).hasSize(91);
      stored.set(offsets(120));
      // Up to 120 one record; 45 after it.
      assertThat(StateSchemaHistory.recordsForCheckpoint(id)).hasSize(46);
      // 45 records since, fewer than the floor: not compacted.
      stored.set(offsets(200));
      assertThat(StateSchemaHistory.recordsForCheckpoint(id)).hasSize(46);
    } finally {
      StateSchemaHistory.unregister(id);
    }
  }
}
