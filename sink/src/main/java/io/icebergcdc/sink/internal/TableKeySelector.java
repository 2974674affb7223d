package io.icebergcdc.sink.internal;

import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.Operation;
import io.icebergcdc.cdc.TableKey;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.flink.api.java.functions.KeySelector;

/**
 * Keys the changes of several tables by (table, primary key), for the writer of several tables: the
 * table is the name the change carries ({@link ChangeEvent#table()}). The keys of a table whose
 * changes are distributed by partition are hashed by their partition ({@link TableKey#hashedBy}),
 * as that table's writer of its own would hash them ({@link PartitionedKeySelector}); a truncate's
 * copies by their keys, as {@link io.icebergcdc.cdc.TruncateCopies#forTables} chose them.
 *
 * <p>A table the selector was not built with (one that appeared while the job runs) is hashed as
 * {@link Hashing} says at its first change, once for the life of this instance: each of the job's
 * tasks that keys the stream (the senders and the writer) asks on its own, and they agree because
 * the answer is the one the source recorded in the table as it took it ({@code
 * io.icebergcdc.sink.KeyHashingPin}), not the table's settings of the moment; the writer checks
 * that its own copy agrees ({@link PositionDeltaWriterOperator}).
 */
public final class TableKeySelector implements KeySelector<ChangeEvent, TableKey> {

  private static final long serialVersionUID = 1L;

  /** How a table that appeared while the job runs is hashed. */
  @FunctionalInterface
  public interface Hashing extends java.io.Serializable {
    /**
     * The partitions {@code table}'s keys are hashed by, or null where by primary key.
     *
     * @throws RuntimeException where the table cannot be read (the task fails and Flink restarts
     *     it)
     */
    PartitionedKeySelector partitionerOf(String table);
  }

  /** The partitions of the tables distributed by partition, by the name their changes carry. */
  private final Map<String, PartitionedKeySelector> byPartition;

  /** The tables the selector was built with, hashed as {@link #byPartition} says. */
  private final Set<String> known;

  /** How the other tables are hashed; null where every table is hashed by primary key. */
  private final Hashing appeared;

  /**
   * How each table met so far is hashed, by its partitions or by primary key if empty: those the
   * selector was built with, then those that appeared as they come. One lookup a change.
   */
  private transient Map<String, Optional<PartitionedKeySelector>> hashing;

  public TableKeySelector() {
    this(Map.of());
  }

  public TableKeySelector(Map<String, PartitionedKeySelector> byPartition) {
    this(byPartition, Set.of(), null);
  }

  /**
   * @param byPartition the partitions of the tables of {@code known} distributed by partition
   * @param known the tables the job was built with
   * @param appeared how a table not in {@code known} is hashed; null: by primary key
   */
  public TableKeySelector(
      Map<String, PartitionedKeySelector> byPartition, Set<String> known, Hashing appeared) {
    this.byPartition = Map.copyOf(byPartition);
    this.known = Set.copyOf(known);
    this.appeared = appeared;
  }

  @Override
  public TableKey getKey(ChangeEvent change) {
    if (change.operation() == Operation.TRUNCATE) {
      return new TableKey(change.table(), change.key());
    }
    PartitionedKeySelector partitions = partitionerOf(change.table());
    if (partitions == null) {
      return new TableKey(change.table(), change.key());
    }
    PartitionedKey key = partitions.getKey(change);
    return TableKey.hashedBy(change.table(), key.key(), key.partitionHash());
  }

  /** How {@code table}'s keys are hashed: by the partitions returned, or by primary key if null. */
  public PartitionedKeySelector partitionerOf(String table) {
    if (hashing == null) {
      hashing = new HashMap<>();
      known.forEach(name -> hashing.put(name, Optional.empty()));
      byPartition.forEach((name, partitions) -> hashing.put(name, Optional.of(partitions)));
    }
    Optional<PartitionedKeySelector> hashed = hashing.get(table);
    if (hashed == null) {
      hashed = Optional.ofNullable(appeared == null ? null : appeared.partitionerOf(table));
      hashing.put(table, hashed);
    }
    return hashed.orElse(null);
  }
}
