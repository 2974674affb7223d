package io.icebergcdc.dedup.internal;

import java.io.IOException;
import java.util.BitSet;
import java.util.HashMap;
import java.util.Map;
import org.apache.flink.core.memory.DataOutputView;

/**
 * The bytes of the key groups that a snapshot of a {@link KeyIndex} wrote, kept to be written again
 * while the index does not change: each key group's as {@link KeyIndexSnapshot} wrote it (its own
 * file names included, so later renumbering of the index's files does not touch them), and which
 * key groups were written, those left out without entries included.
 */
final class KeptSnapshot {

  /** The index's count of changes when the bytes were written. */
  private final long changes;

  /** Whether key groups without entries were left out. */
  private final boolean othersLeft;

  /** The key groups written, with bytes or (left out) without. */
  private final BitSet written = new BitSet();

  private final Map<Integer, byte[]> bytes = new HashMap<>();

  /** The most bytes kept; past them, none are. */
  private final long maxBytes;

  /** The bytes kept, or -1 once they passed {@link #maxBytes} and were dropped. */
  private long size;

  KeptSnapshot(long changes, boolean othersLeft, long maxBytes) {
    this.changes = changes;
    this.othersLeft = othersLeft;
    this.maxBytes = maxBytes;
  }

  /** Whether these are the bytes of an index at {@code changes}. */
  boolean of(long changes) {
    return this.changes == changes;
  }

  /** Whether these are the bytes of an index at {@code changes}, written so. */
  boolean of(long changes, boolean othersLeft) {
    return of(changes) && this.othersLeft == othersLeft;
  }

  /** Whether these bytes are the snapshot of key groups {@code first} on, as they are now. */
  boolean writes(long changes, boolean othersLeft, int first, int count) {
    return of(changes, othersLeft) && size >= 0 && written.nextClearBit(first) >= first + count;
  }

  /** Whether bytes are still kept: they have not passed the most kept. */
  boolean keeping() {
    return size >= 0;
  }

  /** The bytes kept. */
  long size() {
    return Math.max(0, size);
  }

  /** Keeps the bytes of {@code keyGroup}, as written, unless that passes the most kept. */
  void keep(int keyGroup, byte[] groupBytes) {
    if (size < 0) {
      return;
    }
    byte[] before = bytes.get(keyGroup);
    // (Kept again where a write that failed midway kept it before.)
    size += groupBytes.length - (before == null ? 0 : before.length);
    if (size > maxBytes) {
      bytes.clear();
      written.clear();
      size = -1;
      return;
    }
    bytes.put(keyGroup, groupBytes);
  }

  /** Records that key groups {@code first} on were written, those without kept bytes left out. */
  void wrote(int first, int count) {
    if (size >= 0) {
      written.set(first, first + count);
    }
  }

  /** Writes the kept bytes of key groups {@code first} on, each after starting it. */
  void write(int first, int count, KeyIndex.KeyGroupStart start, DataOutputView out)
      throws IOException {
    for (int group = first; group < first + count; group++) {
      byte[] groupBytes = bytes.get(group);
      if (groupBytes != null) {
        start.start(group);
        out.write(groupBytes);
      }
    }
  }
}
