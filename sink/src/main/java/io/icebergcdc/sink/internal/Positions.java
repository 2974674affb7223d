package io.icebergcdc.sink.internal;

import io.icebergcdc.commit.PositionDeletes;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;

/** Positions of rows in one data file, unboxed, in the order they were added. */
final class Positions {
  private long[] values = new long[16];
  private int size;

  void add(long position) {
    if (size == values.length) {
      values = Arrays.copyOf(values, size * 2);
    }
    values[size++] = position;
  }

  long[] toArray() {
    return Arrays.copyOf(values, size);
  }

  /** The positions of each file, as a committable carries them. */
  static PositionDeletes of(Map<String, Positions> byFile) {
    Map<String, long[]> positions = new HashMap<>();
    byFile.forEach((file, list) -> positions.put(file, list.toArray()));
    return PositionDeletes.of(positions);
  }
}
