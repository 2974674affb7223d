package io.icebergcdc.bench;

import io.icebergcdc.dedup.Dedup;
import java.util.Locale;

/**
 * Prints the heap per key of the dedup's in-memory key index at several sizes:
 *
 * <pre>bash bench/java.sh IndexMemory [keys ...]</pre>
 */
public final class IndexMemory {

  private IndexMemory() {}

  public static void main(String[] args) {
    int[] sizes =
        args.length == 0
            ? new int[] {250_000, 1_000_000, 2_500_000}
            : java.util.Arrays.stream(args).mapToInt(Integer::parseInt).toArray();
    for (int keys : sizes) {
      System.out.printf(
          Locale.ROOT,
          "%,d keys: %.0f bytes of heap per key%n",
          keys,
          Dedup.indexHeapBytesPerKey(keys));
    }
  }
}
