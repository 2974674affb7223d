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
 * each run of consecutive records that carry table changes, at or before the position a checkpoint
 * restores, becomes one record holding each table's last state in the run, at the run's last
 * position.
 *
 * <p>Debezium recovers a record that carries table changes by putting each changed table in place
 * (or removing it), without its DDL parser: a run of them leaves each table it names as the last of
 * them left it and every other table untouched, which is what the one record does. A record without
 * table changes (a statement Debezium replays through its DDL parser, such as the {@code CREATE
 * TABLE} statements recorded where the log starts, or a database's DDL) is kept as it is, where it
 * is, and ends a run. Records past the position are kept too: a restore at that position skips
 * them, and the connector records their DDL again when it reads it.
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
    HistoryRecord stop = new HistoryRecord(Document.create(SOURCE, source, POSITION, position));
    List<String> compacted = new ArrayList<>(records.size());
    List<Document> run = new ArrayList<>();
    int later = 0;
    for (String json : records) {
      Document record = read(json);
      boolean atOrBefore =
          source.equals(record.getDocument(SOURCE))
              && comparator.isAtOrBefore(new HistoryRecord(record), stop);
      Array changes = record.getArray(TABLE_CHANGES);
      if (atOrBefore && changes != null && !changes.isEmpty()) {
        run.add(record);
      } else {
        fold(run, compacted);
      }
      compacted.add(json);
      later = atOrBefore ? 0 : later + 1;
    }
    fold(run, compacted);
    return new Compacted(compacted, compacted.size() - later);
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
        if (change.getType() == TableChangeType.DROP) {
          last.put(change.getId(), null);
        } else {
          if (change.getPreviousId() != null) {
            last.put(change.getPreviousId(), null);
          }
          last.put(change.getId(), change);
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
