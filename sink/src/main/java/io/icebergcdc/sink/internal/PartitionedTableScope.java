package io.icebergcdc.sink.internal;

import io.icebergcdc.cdc.TableKey;
import io.icebergcdc.dedup.TableScope;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.metrics.MetricGroup;

/**
 * The scope of a table distributed by partition in the writer of several tables: its primary keys
 * are {@link PartitionedKey}s, as in a writer of its own, and the operator's keys {@link TableKey}s
 * hashed by the partition ({@link TableKeySelector}); its state and metrics are named as any
 * table's ({@link TableScope#of}).
 */
final class PartitionedTableScope implements TableScope {

  private static final long serialVersionUID = 1L;

  private final String table;
  private final TableScope named;

  PartitionedTableScope(String table) {
    this.table = table;
    this.named = TableScope.of(table);
  }

  @Override
  public Object stateKey(Object key) {
    PartitionedKey partitioned = (PartitionedKey) key;
    return TableKey.hashedBy(table, partitioned.key(), partitioned.partitionHash());
  }

  @Override
  public Object keyOf(Object stateKey) {
    TableKey key = (TableKey) stateKey;
    return new PartitionedKey(key.hash(), key.key());
  }

  @Override
  public boolean holds(Object stateKey) {
    return named.holds(stateKey);
  }

  @Override
  public String stateName(String name) {
    return named.stateName(name);
  }

  @Override
  public MetricGroup metrics(MetricGroup group) {
    return named.metrics(group);
  }

  @Override
  public boolean ownsRawKeyedState() {
    return false;
  }

  @Override
  public TypeSerializer<?> keySerializer(TypeSerializer<?> operatorKeys) {
    return PartitionedKeySerializer.INSTANCE;
  }

  @Override
  public String toString() {
    return named + ", by partition";
  }
}
