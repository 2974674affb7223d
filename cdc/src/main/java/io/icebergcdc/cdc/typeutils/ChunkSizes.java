package io.icebergcdc.cdc.typeutils;

/**
 * Sizes of the chunks of heap memory in which operators hold serialized rows for a while: the first
 * chunk small, each next one four times as large as the one before up to {@link #MAX} (or as large
 * as a longer record), so that little data takes little memory and much data few chunks.
 */
public final class ChunkSizes {

  /**
   * The size of a first chunk: small, as a writer of hundreds of tables holds one for each table
   * (its pending changes) and one for each small file it holds rows of; at 64 KiB, such chunks took
   * a sixth of the heap of a job of 300 small tables.
   */
  public static final int FIRST = 4 << 10;

  /**
   * Just under 8 MiB, so that with G1's regions of up to 8 MiB (heaps below 32 GiB) a full chunk is
   * a humongous object that fills whole regions: allocated outside the young generation, it is not
   * copied by each young collection while it lives, as chunks of the young generation would be.
   */
  public static final int MAX = (8 << 20) - 64;

  private ChunkSizes() {}

  /**
   * The size of the chunk that follows one of {@code previous} bytes (0 for the first chunk), for a
   * record of {@code needed} bytes.
   */
  public static int next(int previous, int needed) {
    return Math.max(needed, previous == 0 ? FIRST : (int) Math.min(MAX, 4L * previous));
  }
}
