package io.icebergcdc.dedup.internal;

import io.icebergcdc.cdc.SourceSequence;
import io.icebergcdc.dedup.AppliedChange;
import io.icebergcdc.dedup.Dedup;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.nio.ByteBuffer;
import java.util.Random;

/** Measures the heap that the dedup's in-memory key index takes per key ({@link Dedup}). */
public final class IndexFootprint {

  private IndexFootprint() {}

  /**
   * The heap per key of an index of {@code keys} bigint keys as the upsert workload leaves them:
   * live, located in one of a few hundred data files, with a column sequence and a fingerprint.
   * Measured as the heap in use after a full collection, with the index and without.
   */
  public static double bytesPerKey(int keys) {
    MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
    long before = usedAfterCollection(memory);
    KeyIndex index = new KeyIndex(Long.MAX_VALUE);
    Random random = new Random(42);
    String[] files = new String[Math.max(1, keys / 2000)];
    for (int i = 0; i < files.length; i++) {
      files[i] = "#" + Integer.toString(i, 36);
    }
    for (int i = 0; i < keys; i++) {
      byte[] key = ByteBuffer.allocate(8).putLong(random.nextLong()).array();
      index.put(
          key,
          KeyIndex.hash(key),
          random.nextInt(128),
          AppliedChange.live(
              SourceSequence.column(i),
              random.nextLong(),
              files[random.nextInt(files.length)],
              random.nextInt(100_000)),
          0);
    }
    long after = usedAfterCollection(memory);
    if (index.size() != keys) {
      throw new IllegalStateException("the index holds " + index.size() + " keys, not " + keys);
    }
    return (double) (after - before) / keys;
  }

  private static long usedAfterCollection(MemoryMXBean memory) {
    for (int i = 0; i < 3; i++) {
      System.gc();
    }
    return memory.getHeapMemoryUsage().getUsed();
  }
}
