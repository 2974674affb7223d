package io.icebergcdc.cdc;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.ToIntFunction;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;

/**
 * A source table's truncate as copies, one for every key group of its writer: the writers are keyed
 * by the changes' primary keys, and a truncate, which has no key, must reach each writer subtask of
 * its table, so that each deletes the rows of its keys. A copy carries a key of its own, chosen so
 * that the copies' keys fall into every key group, whatever the writer's maximum parallelism: Flink
 * puts a key into key group {@code murmurHash(key.hashCode()) % maxParallelism}, so keys whose
 * murmur hashes take every value modulo 32768 (Flink's largest maximum parallelism) cover every
 * maximum parallelism that is a power of two (Flink's default ones), and the copies cover the
 * router's own maximum parallelism as well, which is the job's where it sets one. A writer applies
 * the first copy it meets and finds the others applied already. A copy's key only routes it: it may
 * have the bytes of a key of the table, which the writer never looks up for a truncate.
 *
 * <p>Computed per truncate (some 400,000 hashes, a few milliseconds): truncates are rare.
 */
public final class TruncateCopies {

  /** The key of a truncate before it is copied: no key of any table (keys are never empty). */
  public static final RowKey NO_KEY = new RowKey(new byte[0]);

  /** Flink's largest maximum parallelism, a power of two. */
  static final int KEY_GROUPS = 1 << 15;

  private TruncateCopies() {}

  /**
   * The copies of {@code truncate} for a writer keyed by {@link TableKey} of the name the truncate
   * carries: the one writer of several tables.
   */
  public static void forTables(
      ChangeEvent truncate, int maxParallelism, Consumer<ChangeEvent> out) {
    int tableHash = 31 * truncate.table().hashCode();
    copies(truncate, key -> tableHash + key.hashCode(), maxParallelism, out);
  }

  /**
   * The copies of {@code truncate} for a writer keyed by {@link RowKey}, or by a key whose hash a
   * truncate's {@link RowKey} gives (a writer distributed by partition).
   */
  public static void forOneTable(
      ChangeEvent truncate, int maxParallelism, Consumer<ChangeEvent> out) {
    copies(truncate, RowKey::hashCode, maxParallelism, out);
  }

  private static void copies(
      ChangeEvent truncate,
      ToIntFunction<RowKey> hash,
      int maxParallelism,
      Consumer<ChangeEvent> out) {
    if (truncate.operation() != Operation.TRUNCATE) {
      throw new IllegalArgumentException("not a truncate: " + truncate.operation());
    }
    for (RowKey key : covering(hash, maxParallelism)) {
      out.accept(truncate.withKey(key));
    }
  }

  /**
   * Keys whose hashes, as Flink assigns key groups, fall into every key group of {@value
   * #KEY_GROUPS} and of {@code maxParallelism}.
   */
  static List<RowKey> covering(ToIntFunction<RowKey> hash, int maxParallelism) {
    boolean ownGroups = maxParallelism > 0 && Integer.bitCount(maxParallelism) != 1;
    boolean[] all = new boolean[KEY_GROUPS];
    boolean[] own = ownGroups ? new boolean[maxParallelism] : new boolean[0];
    int missingAll = KEY_GROUPS;
    int missingOwn = own.length;
    List<RowKey> keys = new ArrayList<>(KEY_GROUPS + own.length);
    for (int i = 0; missingAll > 0 || missingOwn > 0; i++) {
      if (i < 0) {
        throw new IllegalStateException("no keys cover every key group");
      }
      RowKey key =
          new RowKey(new byte[] {(byte) (i >>> 24), (byte) (i >>> 16), (byte) (i >>> 8), (byte) i});
      int keyHash = hash.applyAsInt(key);
      int group = KeyGroupRangeAssignment.computeKeyGroupForKeyHash(keyHash, KEY_GROUPS);
      boolean useful = false;
      if (!all[group]) {
        all[group] = true;
        missingAll--;
        useful = true;
      }
      int ownGroup =
          ownGroups
              ? KeyGroupRangeAssignment.computeKeyGroupForKeyHash(keyHash, maxParallelism)
              : 0;
      if (ownGroups && !own[ownGroup]) {
        own[ownGroup] = true;
        missingOwn--;
        useful = true;
      }
      if (useful) {
        keys.add(key);
      }
    }
    return keys;
  }
}
