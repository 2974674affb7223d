package io.icebergcdc.jobs.demo;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;

/**
 * The rows a changelog must leave, computed by replaying the source history in commit order, with
 * no knowledge of how the applier orders or deduplicates; and the comparison of a table with them.
 */
public final class ReferenceModel {

  private final Map<Long, List<Object>> rows = new HashMap<>();

  void upsert(DemoRow row) {
    rows.put(row.id(), row.asIcebergValues());
  }

  void delete(long id) {
    rows.remove(id);
  }

  public int size() {
    return rows.size();
  }

  /**
   * The rows the changelog must leave where another writer deleted {@code deleted} (rows as the
   * table held them then) while it was applied: a key whose deleted row was its final one stays
   * deleted, since no later change brings it back; any other key ends as its final change left it.
   */
  public ReferenceModel afterDeletesByAnotherWriter(Collection<Record> deleted) {
    ReferenceModel result = new ReferenceModel();
    result.rows.putAll(rows);
    for (Record record : deleted) {
      List<Object> values = valuesOf(record);
      if (values.equals(rows.get((Long) values.get(0)))) {
        result.rows.remove((Long) values.get(0));
      }
    }
    return result;
  }

  private static List<Object> valuesOf(Record record) {
    List<Object> values = new ArrayList<>();
    for (String column : DemoRow.COLUMNS) {
      values.add(record.getField(column));
    }
    return values;
  }

  /**
   * Compares the table, read through Iceberg with its deletes applied, with the model.
   *
   * @return the differences, at most {@code limit} of them, with the total count; empty if the
   *     table equals the model row for row
   */
  public List<String> differences(Table table, int limit) {
    Map<Long, List<Object>> actual = new HashMap<>();
    List<String> problems = new ArrayList<>();
    int duplicateKeys = 0;
    try (CloseableIterable<Record> records = IcebergGenerics.read(table).build()) {
      for (Record record : records) {
        List<Object> values = valuesOf(record);
        if (actual.put((Long) values.get(0), values) != null) {
          duplicateKeys++;
          if (problems.size() < limit) {
            problems.add("key " + values.get(0) + " appears more than once");
          }
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    int missing = 0;
    int wrong = 0;
    int extra = 0;
    for (Long id : new TreeSet<>(rows.keySet())) {
      List<Object> got = actual.get(id);
      if (got == null) {
        missing++;
        if (problems.size() < limit) {
          problems.add("missing row " + rows.get(id));
        }
      } else if (!got.equals(rows.get(id))) {
        wrong++;
        if (problems.size() < limit) {
          problems.add("row " + id + " is " + got + ", expected " + rows.get(id));
        }
      }
    }
    for (Long id : new TreeSet<>(actual.keySet())) {
      if (!rows.containsKey(id)) {
        extra++;
        if (problems.size() < limit) {
          problems.add("unexpected row " + actual.get(id));
        }
      }
    }
    if (missing + wrong + extra + duplicateKeys > 0) {
      problems.add(
          String.format(
              "in all: %d missing, %d wrong, %d unexpected, %d duplicated keys; expected %d rows,"
                  + " read %d distinct keys",
              missing, wrong, extra, duplicateKeys, rows.size(), actual.size()));
    }
    return problems;
  }
}
