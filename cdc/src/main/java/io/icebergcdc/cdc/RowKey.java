package io.icebergcdc.cdc;

import java.util.Arrays;

/**
 * The primary key of a row, in a canonical binary encoding: two keys are equal exactly when their
 * key columns hold equal values. It is the key of the dedup's keyed state and of the distribution
 * to writers, so its {@link #hashCode()} depends only on the bytes and is the same in every JVM.
 *
 * <p>Built by {@link ChangeSchema#keyOf}; the bytes are not meant to be read back.
 */
public final class RowKey {

  private final byte[] bytes;
  private final long hash64;

  public RowKey(byte[] bytes) {
    this.bytes = bytes;
    this.hash64 = hash64(bytes, bytes.length);
  }

  /**
   * FNV-1a over the bytes, finished with MurmurHash3's 64-bit mix. {@link Arrays#hashCode(byte[])}
   * would not do: for the big-endian numbers most keys are, it folds hundreds of thousands of keys
   * onto a few thousand hash codes, and the hash tables of the heap state backend degrade. The hash
   * code also decides a key's key group, so this function is part of the state format.
   */
  public static long hash64(byte[] bytes, int length) {
    long h = 0xcbf29ce484222325L;
    for (int i = 0; i < length; i++) {
      h ^= bytes[i] & 0xff;
      h *= 0x100000001b3L;
    }
    h ^= h >>> 33;
    h *= 0xff51afd7ed558ccdL;
    h ^= h >>> 33;
    h *= 0xc4ceb9fe1a85ec53L;
    h ^= h >>> 33;
    return h;
  }

  /** The encoded key; callers must not modify the array. */
  public byte[] bytes() {
    return bytes;
  }

  @Override
  public boolean equals(Object o) {
    return this == o || (o instanceof RowKey && Arrays.equals(bytes, ((RowKey) o).bytes));
  }

  @Override
  public int hashCode() {
    return (int) hash64;
  }

  /** The 64-bit hash of the bytes, of which {@link #hashCode()} is the lower half. */
  public long hash64() {
    return hash64;
  }

  @Override
  public String toString() {
    StringBuilder sb = new StringBuilder("RowKey[");
    for (byte b : bytes) {
      sb.append(Character.forDigit((b >> 4) & 0xF, 16)).append(Character.forDigit(b & 0xF, 16));
    }
    return sb.append(']').toString();
  }
}
