package io.icebergcdc.dedup;

import io.icebergcdc.cdc.RowKey;
import io.icebergcdc.cdc.TableKey;
import java.io.Serializable;
import org.apache.flink.metrics.MetricGroup;

/**
 * The part of an operator's keys, state and metrics that belongs to one table's dedup (and writer),
 * for an operator that hosts several tables: its stream is keyed by {@link TableKey}, (table,
 * primary key), while the dedup of each table sees the primary keys of its own table only.
 *
 * <p>An operator of one table uses {@link #WHOLE}: its keys are the primary keys, and its state and
 * metric names are those of earlier releases, so its savepoints restore. An operator of several
 * tables gives each its {@link #of scope}: the keyed state the tables share (its keys tell their
 * entries apart), operator state and metrics named per table, and the in-memory index of each in
 * the operator's raw keyed state, which has one stream per key group for the whole operator: the
 * operator writes and reads it for all its tables ({@link KeyedDedup#writeIndex}).
 */
public interface TableScope extends Serializable {

  /** The scope of an operator that hosts one table. */
  TableScope WHOLE = new Whole();

  /** The scope of {@code table} in an operator that hosts several. */
  static TableScope of(String table) {
    return new OfTable(table);
  }

  /** The key of the operator's keyed state for {@code key}, a primary key of this table. */
  Object stateKey(Object key);

  /** The primary key in {@code stateKey}, a key of the operator's keyed state of this table. */
  Object keyOf(Object stateKey);

  /** Whether {@code stateKey}, a key of the operator's keyed state, is one of this table's. */
  boolean holds(Object stateKey);

  /** The name of operator state {@code name} of this table. */
  String stateName(String name);

  /** Where this table's metrics go, within the operator's {@code group}. */
  MetricGroup metrics(MetricGroup group);

  /**
   * Whether the dedup writes and reads its in-memory index in the operator's raw keyed state
   * itself; else the operator does it for all its tables, through {@link KeyedDedup#writeIndex},
   * {@link KeyedDedup#readIndex} and {@link KeyedDedup#indexRestored}.
   */
  boolean ownsRawKeyedState();

  /**
   * The serializer of this table's primary keys, where the operator's keyed state serializes its
   * keys with {@code operatorKeys}.
   */
  org.apache.flink.api.common.typeutils.TypeSerializer<?> keySerializer(
      org.apache.flink.api.common.typeutils.TypeSerializer<?> operatorKeys);

  /** The scope of an operator of one table. */
  final class Whole implements TableScope {
    private static final long serialVersionUID = 1L;

    private Whole() {}

    @Override
    public Object stateKey(Object key) {
      return key;
    }

    @Override
    public Object keyOf(Object stateKey) {
      return stateKey;
    }

    @Override
    public boolean holds(Object stateKey) {
      return true;
    }

    @Override
    public String stateName(String name) {
      return name;
    }

    @Override
    public MetricGroup metrics(MetricGroup group) {
      return group;
    }

    @Override
    public boolean ownsRawKeyedState() {
      return true;
    }

    @Override
    public org.apache.flink.api.common.typeutils.TypeSerializer<?> keySerializer(
        org.apache.flink.api.common.typeutils.TypeSerializer<?> operatorKeys) {
      return operatorKeys;
    }

    private Object readResolve() {
      return WHOLE;
    }
  }

  /**
   * The scope of one table of several: the operator's keys are {@link TableKey}s, the table's
   * primary keys {@link RowKey}s.
   */
  final class OfTable implements TableScope {
    private static final long serialVersionUID = 1L;

    private final String table;

    private OfTable(String table) {
      this.table = java.util.Objects.requireNonNull(table, "table");
    }

    @Override
    public Object stateKey(Object key) {
      return new TableKey(table, (RowKey) key);
    }

    @Override
    public Object keyOf(Object stateKey) {
      return ((TableKey) stateKey).key();
    }

    @Override
    public boolean holds(Object stateKey) {
      return ((TableKey) stateKey).table().equals(table);
    }

    @Override
    public String stateName(String name) {
      return table + "/" + name;
    }

    @Override
    public MetricGroup metrics(MetricGroup group) {
      return group.addGroup("table", table);
    }

    @Override
    public boolean ownsRawKeyedState() {
      return false;
    }

    @Override
    public org.apache.flink.api.common.typeutils.TypeSerializer<?> keySerializer(
        org.apache.flink.api.common.typeutils.TypeSerializer<?> operatorKeys) {
      return io.icebergcdc.cdc.typeutils.RowKeySerializer.INSTANCE;
    }

    @Override
    public String toString() {
      return "table " + table;
    }
  }
}
