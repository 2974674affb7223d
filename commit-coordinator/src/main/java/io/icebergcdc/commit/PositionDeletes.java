package io.icebergcdc.commit;

import java.util.Arrays;
import java.util.Collections;
import java.util.Map;
import java.util.TreeMap;

/**
 * Rows to delete by position: for each data file location, the positions of its rows. Writers
 * collect them; the committer turns them into position delete files (format version 2) or deletion
 * vectors (format version 3), merging them with what the table already deletes.
 *
 * <p>Immutable; positions per file are sorted and distinct.
 */
public final class PositionDeletes {

  public static final PositionDeletes NONE = new PositionDeletes(Collections.emptyMap());

  private final Map<String, long[]> positions;

  private PositionDeletes(Map<String, long[]> positions) {
    this.positions = positions;
  }

  /** Positions by data file; the arrays are copied, sorted and made distinct. */
  public static PositionDeletes of(Map<String, long[]> positions) {
    if (positions.isEmpty()) {
      return NONE;
    }
    TreeMap<String, long[]> copy = new TreeMap<>();
    positions.forEach((file, pos) -> copy.put(file, sortedDistinct(pos.clone())));
    return new PositionDeletes(Collections.unmodifiableMap(copy));
  }

  /** Data file locations, in order. */
  public java.util.Set<String> files() {
    return positions.keySet();
  }

  /** The sorted positions to delete in {@code file}; the caller must not modify the array. */
  public long[] positions(String file) {
    long[] result = positions.get(file);
    return result == null ? new long[0] : result;
  }

  public boolean isEmpty() {
    return positions.isEmpty();
  }

  /** The number of positions in all files. */
  public long count() {
    long count = 0;
    for (long[] p : positions.values()) {
      count += p.length;
    }
    return count;
  }

  public PositionDeletes plus(PositionDeletes other) {
    if (other.isEmpty()) {
      return this;
    }
    if (isEmpty()) {
      return other;
    }
    TreeMap<String, long[]> merged = new TreeMap<>(positions);
    other.positions.forEach(
        (file, pos) ->
            merged.merge(
                file,
                pos,
                (a, b) -> {
                  long[] both = Arrays.copyOf(a, a.length + b.length);
                  System.arraycopy(b, 0, both, a.length, b.length);
                  return sortedDistinct(both);
                }));
    return new PositionDeletes(Collections.unmodifiableMap(merged));
  }

  private static long[] sortedDistinct(long[] values) {
    Arrays.sort(values);
    int n = 0;
    for (int i = 0; i < values.length; i++) {
      if (i == 0 || values[i] != values[i - 1]) {
        values[n++] = values[i];
      }
    }
    return n == values.length ? values : Arrays.copyOf(values, n);
  }

  @Override
  public boolean equals(Object o) {
    if (!(o instanceof PositionDeletes)) {
      return false;
    }
    Map<String, long[]> other = ((PositionDeletes) o).positions;
    if (!positions.keySet().equals(other.keySet())) {
      return false;
    }
    for (Map.Entry<String, long[]> e : positions.entrySet()) {
      if (!Arrays.equals(e.getValue(), other.get(e.getKey()))) {
        return false;
      }
    }
    return true;
  }

  @Override
  public int hashCode() {
    return positions.keySet().hashCode();
  }

  @Override
  public String toString() {
    return count() + " positions in " + positions.size() + " files";
  }
}
