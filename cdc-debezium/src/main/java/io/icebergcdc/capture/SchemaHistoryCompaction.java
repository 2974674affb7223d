package io.icebergcdc.capture;

import io.debezium.document.Array;
import io.debezium.document.Document;
import io.debezium.document.DocumentReader;
import io.debezium.document.DocumentWriter;
import io.debezium.relational.TableId;
import io.debezium.relational.history.HistoryRecord;
import io.debezium.relational.history.HistoryRecordComparator;
import io.debezium.relational.history.JsonTableChangeSerializer;
import io.debezium.relational.history.TableChanges;
import io.debezium.relational.history.TableChanges.TableChange;
import io.debezium.relational.history.TableChanges.TableChangeType;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Keeps a MySQL or MariaDB connector's schema history from growing with every DDL of the database:
 * each run of consecutive records that carry table changes, at or before a position every restore
 * starts at or after (the offsets of the last completed checkpoint, {@link
 * StateSchemaHistory#recordsForCheckpoint}), becomes one record holding each table's last state in
 * the run, at the run's last position.
 *
 * <p>Debezium recovers a record that carries table changes by putting each changed table in place
 * (or removing it), without its DDL parser: a run of them leaves each table it names as the last of
 * them left it and every other table untouched, which is what the one record does. A record without
 * table changes (a statement Debezium replays through its DDL parser: a database's DDL, or the
 * {@code CREATE TABLE} statements that {@code MySqlLogStart} records where the log starts; the
 * connector's own records of table DDL carry their changes) is kept as it is, where it is, and ends
 * a run. Records past the position are kept too: a restore at that position skips them, and the
 * connector records their DDL again when it reads it. A table dropped keeps a drop in the record,
 * as a statement kept before it may have created a table of that name.
 */
final class SchemaHistoryCompaction {

  private static final String SOURCE = "source";
  private static final String POSITION = "position";
  private static final String DDL = "ddl";
  private static final String TABLE_CHANGES = "tableChanges";

  private final HistoryRecordComparator comparator;
  private final boolean useCatalogBeforeSchema;
  private final JsonTableChangeSerializer serializer = new JsonTableChangeSerializer();

  /**
   * @param comparator the connector's order of positions, as Debezium gives it to the history
   * @param useCatalogBeforeSchema how the connector names tables (true for MySQL and MariaDB)
   */
  SchemaHistoryCompaction(HistoryRecordComparator comparator, boolean useCatalogBeforeSchema) {
    this.comparator = comparator;
    this.useCatalogBeforeSchema = useCatalogBeforeSchema;
  }

  /**
   * A compacted history.
   *
   * @param records the records, oldest first
   * @param settled how many of the first records are at or before the position compacted at: a
   *     later compaction at a later position can fold only what follows them with them
   */
  record Compacted(List<String> records, int settled) {}

  /**
   * The records, oldest first, with each run of table changes at or before {@code source}'s {@code
   * position} folded into one record.
   */
  Compacted compact(List<String> records, Document source, Document position) {
    // A record folds only if it is at or before both the offsets as the store holds them and the
    // position Debezium's offset loader gives back from them, without the server's id and the
    // event's time, which its recovery compares with: Debezium 3.5 takes every record of a log
    // without GTIDs for one at or before the latter (the comparator reads a timestamp the position
    // lacks), the former compares binlog files and positions.
    Document restored = position.clone();
    restored.remove("server_id");
    restored.remove("ts_sec");
    List<HistoryRecord> stops =
        List.of(
            new HistoryRecord(Document.create(SOURCE, source, POSITION, position)),
            new HistoryRecord(Document.create(SOURCE, source, POSITION, restored)));
    List<String> compacted = new ArrayList<>(records.size());
    List<Document> run = new ArrayList<>();
    int afterStop = 0;
    for (String json : records) {
      Document record = read(json);
      boolean atOrBefore =
          source.equals(record.getDocument(SOURCE))
              && stops.stream()
                  .allMatch(stop -> comparator.isAtOrBefore(new HistoryRecord(record), stop));
      Array changes = record.getArray(TABLE_CHANGES);
      if (atOrBefore && changes != null && !changes.isEmpty()) {
        run.add(record);
      } else {
        fold(run, compacted);
      }
      compacted.add(json);
      afterStop = atOrBefore ? 0 : afterStop + 1;
    }
    fold(run, compacted);
    return new Compacted(compacted, compacted.size() - afterStop);
  }

  /** Replaces the run's records, the last of {@code compacted}, with one, if there are several. */
  private void fold(List<Document> run, List<String> compacted) {
    if (run.size() > 1) {
      compacted.subList(compacted.size() - run.size(), compacted.size()).clear();
      compacted.add(write(folded(run)));
    }
    run.clear();
  }

  /** One record that leaves every table as the run's records, applied in turn, leave it. */
  private Document folded(List<Document> run) {
    // A table's last state, or null where the run last removed it (dropped, or renamed away).
    Map<TableId, TableChange> last = new LinkedHashMap<>();
    for (Document record : run) {
      for (TableChange change :
          serializer.deserialize(record.getArray(TABLE_CHANGES), useCatalogBeforeSchema)) {
        // Each name moved to the end, so that the record applies the names in the order of their
        // last changes: where the connector's tables ignore case, two spellings of a name are one
        // table, and the later change must come last.
        if (change.getType() == TableChangeType.DROP) {
          putLast(last, change.getId(), null);
        } else {
          if (change.getPreviousId() != null) {
            putLast(last, change.getPreviousId(), null);
          }
          putLast(last, change.getId(), change);
        }
      }
    }
    TableChanges folded = new TableChanges();
    last.forEach(
        (id, change) -> {
          if (change == null) {
            folded.drop(id);
          } else {
            // Put in place as it is: the rename's removal of its old name is a drop of its own.
            folded.create(change.getTable());
          }
        });
    Document record = run.get(run.size() - 1).clone();
    // The statements are those of the run's records; Debezium reads the changes, not the DDL.
    record.remove(DDL);
    record.setArray(TABLE_CHANGES, serializer.serialize(folded));
    return record;
  }

  private static void putLast(Map<TableId, TableChange> last, TableId id, TableChange change) {
    last.remove(id);
    last.put(id, change);
  }

  private static Document read(String json) {
    try {
      return DocumentReader.defaultReader().read(json);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read schema history record " + json, e);
    }
  }

  private static String write(Document record) {
    try {
      return DocumentWriter.defaultWriter().write(record);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write schema history record", e);
    }
  }
}
