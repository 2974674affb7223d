package io.icebergcdc.dedup.internal;

import java.io.IOException;
import java.util.Arrays;
import java.util.BitSet;
import java.util.HashMap;
import java.util.Map;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.core.memory.DataOutputView;

/**
 * A {@link KeyIndex}'s entries in raw keyed state, one key group at a time. A key group is: the
 * format number; the count of file names its entries use, then each as its number and name; the
 * entry count; then the entries as {@link KeyIndex#writeEntry} writes them (the key's length and
 * bytes, a byte of flags, the sequence and fingerprint if sequenced, the file's number if located,
 * and the position; for a tombstone, the time it was written).
 *
 * <p>Key groups are written in batches of consecutive ones of about {@link
 * KeyIndex#ENTRIES_PER_BATCH} entries at most, each entry serialized into a buffer of its key
 * group. A first sweep of the table lists the slots of each batch in the table's order, and each
 * batch then follows its list through memory. Following the table's order, rather than each key
 * group's scattered slots, keeps the snapshot from waiting on memory at every entry, and the lists
 * spare a sweep of the whole table per batch, whose branch on each slot's key group mostly
 * mispredicts (2.5 million entries: 660 ms in batches of 2^18 with a sweep per batch, 455 ms with
 * the lists, 333 ms with them in batches of 2^20).
 */
final class KeyIndexSnapshot {

  /** Format of a key group's bytes; changes need a new number and a reader for the old ones. */
  static final int FORMAT_1 = 1;

  private final KeyIndex index;
  private final int entriesPerBatch;

  KeyIndexSnapshot(KeyIndex index, int entriesPerBatch) {
    this.index = index;
    this.entriesPerBatch = entriesPerBatch;
  }

  /**
   * Writes the entries of key groups {@code first} to {@code first + count - 1}, each after
   * starting it, without expired tombstones; with {@code othersLeft}, the entries of key groups
   * outside the range are left out (another call writes them), else they fail the write. With
   * {@code keeping}, each key group's bytes are kept there as they are written.
   */
  void write(
      int first,
      int count,
      long now,
      KeyIndex.KeyGroupStart start,
      DataOutputView out,
      boolean othersLeft,
      KeptSnapshot keeping)
      throws IOException {
    char[] groups = index.slotGroups();
    int[] entries = new int[count];
    int inRange = 0;
    for (char group : groups) {
      if (group != 0) {
        if (othersLeft && !inRange(group, first, count)) {
          continue;
        }
        entries[keyGroupIndex(group, first, count)]++;
        inRange++;
      }
    }
    // Key groups in batches of consecutive ones; per batch, its slots in the table's order.
    int[] batchOf = new int[count];
    int[] batchStart = new int[count + 1];
    int batches = 0;
    for (int from = 0; from < count; batches++) {
      long batch = entries[from];
      int to = from + 1;
      while (to < count && batch + entries[to] <= entriesPerBatch) {
        batch += entries[to++];
      }
      Arrays.fill(batchOf, from, to, batches);
      batchStart[batches + 1] = to;
      from = to;
    }
    int[] slotsFrom = new int[batches + 1];
    for (int g = 0; g < count; g++) {
      slotsFrom[batchOf[g] + 1] += entries[g];
    }
    for (int b = 0; b < batches; b++) {
      slotsFrom[b + 1] += slotsFrom[b];
    }
    int[] order = new int[inRange];
    int[] next = Arrays.copyOf(slotsFrom, batches);
    for (int slot = 0; slot < groups.length; slot++) {
      char group = groups[slot];
      if (group != 0 && (!othersLeft || inRange(group, first, count))) {
        order[next[batchOf[group - 1 - first]]++] = slot;
      }
    }
    for (int b = 0; b < batches; b++) {
      int from = batchStart[b];
      int groupsInBatch = batchStart[b + 1] - from;
      DataOutputSerializer[] buffers = new DataOutputSerializer[groupsInBatch];
      int[] written = new int[groupsInBatch];
      BitSet[] used = new BitSet[groupsInBatch];
      for (int g = 0; g < groupsInBatch; g++) {
        buffers[g] = new DataOutputSerializer(Math.max(64, entries[from + g] * 48));
        used[g] = new BitSet();
      }
      for (int i = slotsFrom[b]; i < slotsFrom[b + 1]; i++) {
        int slot = order[i];
        int g = groups[slot] - 1 - first - from;
        if (index.writeEntry(slot, now, buffers[g], used[g])) {
          written[g]++;
        }
      }
      for (int g = 0; g < groupsInBatch; g++) {
        if (othersLeft && written[g] == 0) {
          // A writer of several indexes' parts leaves out those without entries.
          buffers[g] = null;
          continue;
        }
        start.start(first + from + g);
        if (keeping == null || !keeping.keeping()) {
          writeGroup(out, used[g], written[g], buffers[g]);
        } else {
          DataOutputSerializer group = new DataOutputSerializer(buffers[g].length() + 64);
          writeGroup(group, used[g], written[g], buffers[g]);
          byte[] bytes = group.getCopyOfBuffer();
          keeping.keep(first + from + g, bytes);
          out.write(bytes);
        }
        buffers[g] = null;
      }
    }
    if (keeping != null) {
      keeping.wrote(first, count);
    }
  }

  /** Writes a key group: its format, the names of the files it uses, its entries. */
  private void writeGroup(DataOutputView out, BitSet used, int entries, DataOutputSerializer buffer)
      throws IOException {
    out.writeInt(FORMAT_1);
    out.writeInt(used.cardinality());
    for (int file = used.nextSetBit(0); file >= 0; file = used.nextSetBit(file + 1)) {
      out.writeInt(file);
      out.writeUTF(index.fileName(file));
    }
    out.writeInt(entries);
    out.write(buffer.getSharedBuffer(), 0, buffer.length());
  }

  /** Reads what {@link #write} wrote for {@code keyGroup} into {@code index}. */
  static void read(KeyIndex index, int keyGroup, DataInputView in, long now) throws IOException {
    int format = in.readInt();
    if (format != FORMAT_1) {
      throw new IOException(
          "unknown format " + format + " of the key index's state of key group " + keyGroup);
    }
    int fileCount = in.readInt();
    Map<Integer, String> names = new HashMap<>(fileCount * 2);
    for (int i = 0; i < fileCount; i++) {
      names.put(in.readInt(), in.readUTF());
    }
    int count = in.readInt();
    for (int i = 0; i < count; i++) {
      index.readEntry(keyGroup, in, names, now);
    }
  }

  private static boolean inRange(char group, int first, int count) {
    int index = group - 1 - first;
    return index >= 0 && index < count;
  }

  private static int keyGroupIndex(char group, int first, int count) {
    int index = group - 1 - first;
    if (index < 0 || index >= count) {
      throw new IllegalStateException(
          "the key index holds key group "
              + (group - 1)
              + ", not of this subtask's range "
              + first
              + " to "
              + (first + count - 1));
    }
    return index;
  }
}
