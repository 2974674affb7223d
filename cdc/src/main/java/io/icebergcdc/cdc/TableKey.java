package io.icebergcdc.cdc;

import java.util.Objects;

/**
 * The key of a stream that carries the changes of several tables: the table's name and the primary
 * key. Its {@link #hashCode()} depends only on the two and is the same in every JVM: it decides the
 * key group, so it is part of the state format.
 */
public final class TableKey {

  private final String table;
  private final RowKey key;

  public TableKey(String table, RowKey key) {
    this.table = Objects.requireNonNull(table, "table");
    this.key = Objects.requireNonNull(key, "key");
  }

  public String table() {
    return table;
  }

  public RowKey key() {
    return key;
  }

  @Override
  public boolean equals(Object o) {
    return this == o
        || (o instanceof TableKey that && key.equals(that.key) && table.equals(that.table));
  }

  @Override
  public int hashCode() {
    return 31 * table.hashCode() + key.hashCode();
  }

  @Override
  public String toString() {
    return table + "/" + key;
  }
}
