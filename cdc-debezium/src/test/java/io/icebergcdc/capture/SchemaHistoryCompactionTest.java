package io.icebergcdc.capture;

import static org.assertj.core.api.Assertions.assertThat;

import io.debezium.config.Configuration;
import io.debezium.connector.mysql.gtid.MySqlGtidSetFactory;
import io.debezium.connector.mysql.history.MySqlHistoryRecordComparator;
import io.debezium.document.Document;
import io.debezium.document.DocumentReader;
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

class SchemaHistoryCompactionTest {

  private static final Map<String, String> SOURCE = Map.of("server", "maria");
  private static final HistoryRecordComparator COMPARATOR =
      new MySqlHistoryRecordComparator(gtid -> true, new MySqlGtidSetFactory());

  private final SchemaHistoryCompaction compaction = new SchemaHistoryCompaction(COMPARATOR, true);

  private static Map<String, Object> position(long pos) {
    Map<String, Object> position = new LinkedHashMap<>();
    position.put("file", "mysql-bin.000003");
    position.put("pos", pos);
    position.put("row", 0);
    position.put("event", 0);
    return position;
  }

  private static String record(long pos, String ddl, TableChanges changes) throws Exception {
    return DocumentWriter.defaultWriter()
        .write(
            new HistoryRecord(SOURCE, position(pos), "shop", null, ddl, changes, Instant.now())
                .document());
  }

  private static Table table(String name, int columns) {
    var editor = Table.editor().tableId(new TableId("shop", null, name));
    editor.addColumn(Column.editor().name("id").type("INT").jdbcType(Types.INTEGER).create());
    for (int i = 1; i < columns; i++) {
      editor.addColumn(
          Column.editor().name("c" + i).type("VARCHAR").jdbcType(Types.VARCHAR).length(i).create());
    }
    return editor.setPrimaryKeyNames("id").create();
  }

  /** The tables Debezium recovers from {@code records} for a restore at {@code pos}. */
  private static Map<String, Table> recovered(List<String> records, long pos) throws Exception {
    String id = UUID.randomUUID().toString();
    StateSchemaHistory.register(id, records);
    try {
      StateSchemaHistory history = new StateSchemaHistory();
      history.configure(
          Configuration.create().with(StateSchemaHistory.ID, id).build(),
          COMPARATOR,
          SchemaHistoryListener.NOOP,
          true);
      Tables tables = new Tables();
      history.recover(Map.of(SOURCE, position(pos)), tables, null);
      Map<String, Table> byId = new TreeMap<>();
      for (TableId table : tables.tableIds()) {
        byId.put(table.toString(), tables.forTable(table));
      }
      return byId;
    } finally {
      StateSchemaHistory.unregister(id);
    }
  }

  private List<String> compacted(List<String> records, long pos) throws Exception {
    return compactedWhole(records, pos).records();
  }

  private SchemaHistoryCompaction.Compacted compactedWhole(List<String> records, long pos)
      throws Exception {
    return compaction.compact(
        records,
        Document.create("server", "maria"),
        DocumentReader.defaultReader().read(DocumentWriter.defaultWriter().write(doc(pos))));
  }

  private static Document doc(long pos) {
    Document document = Document.create();
    position(pos).forEach(document::set);
    return document;
  }

  @Test
  void aRunOfAltersBecomesOneRecordOfEachTablesLastState() throws Exception {
    List<String> records = new ArrayList<>();
    records.add(record(100, "CREATE TABLE `orders` (`id` int)", null));
    for (int i = 1; i <= 51; i++) {
      records.add(
          record(
              100 + i,
              "ALTER TABLE customers ...",
              new TableChanges().alter(table("customers", i))));
    }
    SchemaHistoryCompaction.Compacted whole = compactedWhole(records, 150);
    List<String> compacted = whole.records();
    assertThat(whole.settled()).isEqualTo(2);

    // The statement replayed through the DDL parser is kept; the alters up to 150 are one record;
    // the one past 150 is kept as it is, for a restore at 150 skips it.
    assertThat(compacted).hasSize(3);
    assertThat(compacted.get(0)).isEqualTo(records.get(0));
    assertThat(compacted.get(2)).isEqualTo(records.get(51));
    assertThat(compacted.get(1)).doesNotContain("ALTER TABLE");
    // Restored at 150 (the checkpoint's position) or later, never before.
    assertThat(recovered(compacted, 150)).isEqualTo(recovered(records, 150));
    assertThat(recovered(compacted, 150).get("shop.customers").columns()).hasSize(50);
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
    List<String> compacted = compacted(records, 14);

    assertThat(compacted).hasSize(1);
    Map<String, Table> tables = recovered(compacted, 14);
    assertThat(tables).isEqualTo(recovered(records, 14));
    assertThat(tables.keySet()).containsExactly("shop.a", "shop.b");
    assertThat(tables.get("shop.a").columns()).hasSize(5);
  }

  private static TableId id(String name) {
    return new TableId("shop", null, name);
  }

  /**
   * Random histories of creates, alters, renames and drops over a few tables, with statements
   * without table changes between them: compacted at a random position, each recovers the same
   * tables as the history whole, at that position and at any later one.
   */
  @Test
  void randomHistoriesRecoverTheSameTables() throws Exception {
    Random random = new Random(42);
    for (int round = 0; round < 200; round++) {
      List<String> records = new ArrayList<>();
      int count = 1 + random.nextInt(60);
      for (int i = 0; i < count; i++) {
        long pos = 1000 + i;
        String name = "t" + random.nextInt(6);
        switch (random.nextInt(5)) {
          case 0 -> records.add(record(pos, "CREATE DATABASE other", null));
          case 1 ->
              records.add(
                  record(
                      pos,
                      "CREATE",
                      new TableChanges().create(table(name, 1 + random.nextInt(4)))));
          case 2 ->
              records.add(
                  record(
                      pos,
                      "RENAME",
                      new TableChanges()
                          .rename(
                              table(name, 1 + random.nextInt(4)), id("t" + random.nextInt(6)))));
          case 3 -> records.add(record(pos, "DROP", new TableChanges().drop(id(name))));
          default -> {
            TableChanges several = new TableChanges();
            several.alter(table(name, 1 + random.nextInt(4)));
            several.drop(id("t" + random.nextInt(6)));
            records.add(record(pos, "ALTER", several));
          }
        }
      }
      long stop = 1000 + random.nextInt(count + 1) - 1;
      List<String> compacted = compacted(records, stop);
      assertThat(compacted.size()).isLessThanOrEqualTo(records.size());
      for (long at : new long[] {stop, stop + 1 + random.nextInt(count + 1), 1000 + count}) {
        assertThat(recovered(compacted, at))
            .as("round %s, compacted at %s, recovered at %s", round, stop, at)
            .isEqualTo(recovered(records, at));
      }
      // Compacted again later, as the next checkpoints do.
      List<String> again = compacted(compacted, 1000 + count);
      assertThat(recovered(again, 1000 + count)).isEqualTo(recovered(records, 1000 + count));
    }
  }

  /** The engine's offsets at {@code pos}, as the reader holds them. */
  private static Map<String, String> offsets(long pos) throws Exception {
    return Map.of(
        "[\"engine\",{\"server\":\"maria\"}]", DocumentWriter.defaultWriter().write(doc(pos)));
  }

  /** A record the connector's history stores, as it does while the connector runs. */
  private static void storeRecord(String id, long pos) throws Exception {
    StateSchemaHistory history = new StateSchemaHistory();
    history.configure(
        Configuration.create().with(StateSchemaHistory.ID, id).build(),
        COMPARATOR,
        SchemaHistoryListener.NOOP,
        true);
    history.record(
        SOURCE,
        position(pos),
        "shop",
        null,
        "ALTER",
        new TableChanges().alter(table("customers", 1 + (int) pos % 3)),
        Instant.now());
  }

  @Test
  void aCheckpointCompactsOnceTheRecordsSinceTheLastOutnumberTheFloorAndThoseBefore()
      throws Exception {
    String id = UUID.randomUUID().toString();
    List<String> records = new ArrayList<>();
    for (int i = 1; i <= StateSchemaHistory.COMPACTION_FLOOR + 1; i++) {
      records.add(record(i, "ALTER", new TableChanges().alter(table("customers", 1 + i % 3))));
    }
    StateSchemaHistory.register(id, records);
    try {
      Map<String, String> offsets = offsets(StateSchemaHistory.COMPACTION_FLOOR + 1);
      // Not before the connector configures the history: it brings the order of positions.
      assertThat(StateSchemaHistory.recordsFor(id, offsets)).hasSize(records.size());
      new StateSchemaHistory()
          .configure(
              Configuration.create().with(StateSchemaHistory.ID, id).build(),
              COMPARATOR,
              SchemaHistoryListener.NOOP,
              true);
      assertThat(StateSchemaHistory.recordsFor(id, offsets)).hasSize(1);
      assertThat(StateSchemaHistory.records(id)).hasSize(1);

      // Records past the offsets are not folded, and not tried again until the offsets move.
      for (int i = 1; i <= StateSchemaHistory.COMPACTION_FLOOR + 1; i++) {
        storeRecord(id, 100 + i);
      }
      assertThat(StateSchemaHistory.recordsFor(id, offsets)).hasSize(66);
      // At 120: the records up to it folded with the one before them, 45 left after it.
      assertThat(StateSchemaHistory.recordsFor(id, offsets(120))).hasSize(46);
      // 45 records since, fewer than the floor: not compacted.
      assertThat(StateSchemaHistory.recordsFor(id, offsets(200))).hasSize(46);
    } finally {
      StateSchemaHistory.unregister(id);
    }
  }
}
