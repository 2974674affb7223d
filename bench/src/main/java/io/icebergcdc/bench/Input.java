package io.icebergcdc.bench;

import java.io.Serializable;
import java.math.BigInteger;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.StringData;

/**
 * One generated input: {@code changes} changes of a workload over {@code keys} keys. Change {@code
 * i} sets key {@code (i * 7919) mod keys} (for insert-only, key {@code i}) to a row whose {@code
 * seq} is {@code i}, so every key is updated about {@code changes / keys} times, and the final row
 * of a key is the one of its last change. Every writer of a workload reads the same input.
 */
record Input(Workload workload, long changes, long keys) implements Serializable {

  private static final long STRIDE = 7919;
  private static final Map<Long, Long> INVERSES = new ConcurrentHashMap<>();

  Input {
    if (workload != Workload.INSERTS
        && BigInteger.valueOf(keys).mod(BigInteger.valueOf(STRIDE)).signum() == 0) {
      throw new IllegalArgumentException("the number of keys must not be a multiple of " + STRIDE);
    }
  }

  /** The same workload and keys with a tenth of the changes: the warm-up's input. */
  Input tenth() {
    return new Input(workload, Math.max(1, changes / 10), keys);
  }

  /**
   * As many changes, each a new key: what the append ceiling writes (Iceberg's sink would fold
   * repeated keys of a checkpoint into one row, since the table has a primary key).
   */
  Input appended() {
    return new Input(Workload.INSERTS, changes, changes);
  }

  boolean insertOnly() {
    return workload == Workload.INSERTS;
  }

  long keyOf(long i) {
    return insertOnly() ? i : Math.floorMod(i * STRIDE, keys);
  }

  /** The number of rows of the final table. */
  long finalRows() {
    return insertOnly() ? changes : Math.min(changes, keys);
  }

  /** The first change whose row is final: the final table holds changes from here on. */
  long firstFinalChange() {
    return changes - finalRows();
  }

  /** The change that wrote the final row of a key. */
  long lastChangeOf(long key) {
    if (insertOnly()) {
      return key;
    }
    long inverse =
        INVERSES.computeIfAbsent(
            keys, k -> BigInteger.valueOf(STRIDE).modInverse(BigInteger.valueOf(k)).longValue());
    long first = Math.floorMod(key * inverse, keys);
    return first + keys * ((changes - 1 - first) / keys);
  }

  /** The row that change {@code i} writes. */
  GenericRowData row(long i) {
    long key = keyOf(i);
    StringData payload = StringData.fromString("payload-" + i + "-" + (i * 31 % 1000));
    if (workload == Workload.PARTITIONED) {
      return GenericRowData.of(key, payload, i * 3, i, dayOf(key));
    }
    return GenericRowData.of(key, payload, i * 3, i);
  }

  /** The day of a key, as days since the epoch: each key stays in one partition. */
  static int dayOf(long key) {
    return Workload.FIRST_DAY + (int) (key % Workload.DAYS);
  }

  /** Fails unless the final row of key {@code id} is the one of change {@code seq}. */
  void check(String table, long id, long seq, long amount) {
    long expected = lastChangeOf(id);
    if (seq != expected || amount != 3 * expected) {
      throw new IllegalStateException(
          String.format(
              "%s: key %d holds the row of change %d (amount %d), expected change %d",
              table, id, seq, amount, expected));
    }
  }

  String label() {
    return String.format(Locale.ROOT, "%,d changes over %,d keys", changes, finalRows());
  }
}
