package io.icebergcdc.sink.internal;

import io.icebergcdc.cdc.RowKey;

/**
 * A primary key hashed by its Iceberg partition: equal to another when the primary keys are equal,
 * but with the partition's hash, so that Flink sends all keys of a partition to one subtask while
 * keyed state stays per primary key.
 */
public final class PartitionedKey {

  private final int partitionHash;
  private final RowKey key;

  public PartitionedKey(int partitionHash, RowKey key) {
    this.partitionHash = partitionHash;
    this.key = key;
  }

  public int partitionHash() {
    return partitionHash;
  }

  public RowKey key() {
    return key;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof PartitionedKey
        && partitionHash == ((PartitionedKey) o).partitionHash
        && key.equals(((PartitionedKey) o).key);
  }

  @Override
  public int hashCode() {
    return partitionHash;
  }

  @Override
  public String toString() {
    return key + " in partition #" + Integer.toHexString(partitionHash);
  }
}
