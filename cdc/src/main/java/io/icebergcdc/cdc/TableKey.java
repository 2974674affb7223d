package io.icebergcdc.cdc;

import java.util.Objects;

/**
 * The key of a stream that carries the changes of several tables: the table's name and the primary
 * key. Its {@link #hashCode()} depends only on the table and the key's {@link #hash()} (the primary
 * key's hash, or for a table whose changes are distributed by partition, its partition's) and is
 * the same in every JVM: it decides the key group, so it is part of the state format. Two keys are
 * equal when their tables, primary keys and hashes are.
 */
public final class TableKey {

  private final String table;
  private final RowKey key;
  private final int hash;

  public TableKey(String table, RowKey key) {
    this(table, key, key.hashCode());
  }

  private TableKey(String table, RowKey key, int hash) {
    this.table = Objects.requireNonNull(table, "table");
    this.key = Objects.requireNonNull(key, "key");
    this.hash = hash;
  }

  /**
   * The key of a table whose changes are distributed by partition: hashed by {@code partitionHash},
   * so that all keys of a partition go to one subtask.
   */
  public static TableKey hashedBy(String table, RowKey key, int partitionHash) {
    return new TableKey(table, key, partitionHash);
  }

  /** What the key is hashed by: its primary key's hash, or its partition's. */
  public int hash() {
    return hash;
  }

  /** Whether the key is hashed by something else than its primary key (a partition). */
  public boolean hashedApart() {
    return hash != key.hashCode();
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
        || (o instanceof TableKey that
            && hash == that.hash
            && key.equals(that.key)
            && table.equals(that.table));
  }

  @Override
  public int hashCode() {
    return 31 * table.hashCode() + hash;
  }

  @Override
  public String toString() {
    return table + "/" + key;
  }
}
