package io.icebergcdc.dedup.internal;

import io.icebergcdc.cdc.RowKey;
import io.icebergcdc.cdc.SourceSequence;
import io.icebergcdc.cdc.typeutils.SourceSequenceCodec;
import io.icebergcdc.dedup.AppliedChange;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.core.memory.DataOutputView;

/**
 * The {@link AppliedChange} of every key of one subtask, in flat arrays on the heap, written to and
 * read from raw keyed state one key group at a time.
 *
 * <p>Flink's heap state keeps a graph of objects per key (the map entry, the key, the value, its
 * sequence and file name) and, at every checkpoint, walks the whole graph to serialize it while
 * copying on write what the task changes meanwhile. Here one key is one slot of ten longs (hash,
 * flags and key length, file, position, fingerprint, three sequence components, and the key's bytes
 * if it has at most 16, as most keys of one or two numbers do; a longer key is kept beside the
 * slot) and a char for its key group: a look-up of a short key touches one or two cache lines, and
 * a snapshot reads no other memory than the slots. It is an open-addressing table with linear
 * probing and backward-shift removal.
 *
 * <p>Deleted keys (tombstones) keep the time they were written in the position's place and expire
 * {@code tombstoneTtlMillis} later: an expired tombstone is not returned, is removed when met, and
 * is not written to snapshots, as Flink's state time-to-live with {@code NeverReturnExpired} and
 * full-snapshot cleanup does.
 *
 * <p>File names and sequence prefixes are stored as numbers into tables of their distinct values.
 * The file table only grows while the job runs; it is rebuilt from the entries on restore.
 *
 * <p>An index that no change reached over a whole checkpoint interval keeps the bytes of its next
 * snapshot, up to {@link #MAX_KEPT_BYTES}, and writes them again at each snapshot until it changes
 * ({@link KeptSnapshot}): the index of a table that is idle is not serialized again at every
 * checkpoint. Such bytes may hold tombstones that have expired since they were written; a restore
 * into an index reads them as expired, which they are (one into keyed state keeps them a time to
 * live longer, as it does a tombstone that expires between a checkpoint and the restore).
 *
 * <p>Not thread-safe: Flink's task thread only, but for {@link #keptBytes}, which a metrics
 * reporter reads.
 */
final class KeyIndex {

  private static final int STRIDE = 10;
  private static final int HASH = 0;
  private static final int META = 1;
  private static final int FILE = 2;
  private static final int POSITION = 3;
  private static final int FINGERPRINT = 4;
  private static final int C0 = 5;
  private static final int K0 = 8;

  /** Keys of up to this many bytes are kept in the slot itself (K0 and K1), big-endian. */
  private static final int INLINE_KEY_BYTES = 16;

  // META: the length plus one of a key kept in the slot, 0 for a longer key (bits 0-7), flags
  // (16-23), sequence kind (24-31), sequence size (32-39), sequence prefix number plus one, 0 for
  // none (40-63).
  private static final int DELETED = 1;
  private static final int SEQUENCED = 2;
  private static final int LOCATED = 4;
  private static final int SEQUENCE_OBJECT = 8;

  /** A key with changes pending and nothing applied yet: no entry until {@link #put}. */
  private static final int RESERVED = 16;

  // FILE: the file number (bits 0-31), the key's pending number, 0 for none (32-63).

  private static final SourceSequence.Kind[] KINDS = SourceSequence.Kind.values();
  private static final float LOAD = 0.6f;

  private final long tombstoneTtlMillis;

  /** How often at most {@link #removeExpiredTombstones} looks through the whole index. */
  static final long TOMBSTONE_SWEEP_INTERVAL_MILLIS = 3_600_000L;

  /** When {@link #removeExpiredTombstones} last looked. */
  private long lastTombstoneSweep;

  private long[] slots;

  /** Keys longer than {@value #INLINE_KEY_BYTES} bytes, by slot: null until there is one. */
  private byte[][] keys;

  /** Per slot, its key group plus one; 0 for a free slot. Compact, so snapshots sweep it fast. */
  private char[] groups;

  /** Sequences of more than three components, which few sources have: null until there is one. */
  private SourceSequence[] longSequences;

  /**
   * The slots a table starts with: an index is kept for each table of each writer subtask, most of
   * them small in a job of a whole database (80 bytes a slot).
   */
  static final int INITIAL_CAPACITY = 16;

  /** The slot of each pending number, less one; moved with its entry. */
  private int[] pendingSlots = new int[INITIAL_CAPACITY];

  /** The highest pending number given since numbers began again from 1. */
  private int highestPending;

  private final BurstRoom pendingNumbersRoom = new BurstRoom(INITIAL_CAPACITY);

  private int mask;
  private int size;
  private int threshold;

  /** The names of the files the entries locate their rows in. */
  private final NameTable files = new NameTable();

  /** How many file names there were after {@link #forgetUnusedFiles} last swept the table. */
  private int filesAfterLastSweep;

  /** The prefixes of the entries' sequences (a binlog file's base name). */
  private final NameTable prefixes = new NameTable();

  private final int entriesPerBatch;

  /** How many times the entries changed: counts every put, removal and pending mark. */
  private long changes;

  /** {@link #changes} when the last snapshot began; -1 before the first. */
  private long changesAtLastSnapshot = -1;

  /** Whether the snapshot being written keeps its bytes: nothing changed since the one before. */
  private boolean keepSnapshot;

  /** The bytes of a snapshot written when {@link #changes} was as it is; or null. */
  private KeptSnapshot kept;

  /** How many calls of {@link #write} wrote {@link #kept} bytes. */
  private long keptWrites;

  /**
   * The entries of the index when the bytes of its snapshot last passed the most kept; -1 if they
   * have not, or it held half as many when a snapshot began since, or a snapshot was kept since:
   * bytes are kept again only once it holds fewer.
   */
  private int entriesWhenTooLarge = -1;

  /**
   * The most bytes of an index's snapshot kept in memory (its part of the checkpoint; about 45
   * bytes an entry for a key of one bigint): the snapshot of a larger index is written afresh each
   * time.
   */
  static final long MAX_KEPT_BYTES = 32L << 20;

  /** The most bytes of a snapshot kept: {@link #MAX_KEPT_BYTES} but in tests. */
  private final long maxKeptBytes;

  KeyIndex(long tombstoneTtlMillis) {
    this(tombstoneTtlMillis, ENTRIES_PER_BATCH);
  }

  /** With snapshots serialized {@code entriesPerBatch} entries at a time, for tests. */
  KeyIndex(long tombstoneTtlMillis, int entriesPerBatch) {
    this(tombstoneTtlMillis, entriesPerBatch, MAX_KEPT_BYTES);
  }

  /** As above, keeping at most {@code maxKeptBytes} of a snapshot, for tests. */
  KeyIndex(long tombstoneTtlMillis, int entriesPerBatch, long maxKeptBytes) {
    this.tombstoneTtlMillis = tombstoneTtlMillis;
    this.entriesPerBatch = entriesPerBatch;
    this.maxKeptBytes = maxKeptBytes;
    allocate(INITIAL_CAPACITY);
  }

  private void allocate(int capacity) {
    slots = new long[capacity * STRIDE];
    keys = keys == null ? null : new byte[capacity][];
    groups = new char[capacity];
    longSequences = longSequences == null ? null : new SourceSequence[capacity];
    mask = capacity - 1;
    threshold = (int) (capacity * LOAD);
  }

  /** The hash of a key's bytes, never 0 (which marks a free slot): that of {@link RowKey}. */
  static long hash(byte[] key) {
    return nonZero(RowKey.hash64(key, key.length));
  }

  /** The hash of a key: that of its bytes, which a {@link RowKey} has already. */
  static long hash(Object key, byte[] bytes) {
    return key instanceof RowKey ? nonZero(((RowKey) key).hash64()) : hash(bytes);
  }

  private static long nonZero(long hash) {
    return hash == 0 ? 1 : hash;
  }

  int size() {
    return size;
  }

  /**
   * The slot of {@code key}; if it has none, {@code -2 - s}, where {@code s} is the free slot it
   * would take.
   */
  private int find(byte[] key, long hash) {
    int slot = (int) hash & mask;
    if (key.length <= INLINE_KEY_BYTES) {
      long tag = key.length + 1;
      long k0 = pack(key, 0);
      long k1 = pack(key, 8);
      while (true) {
        int base = slot * STRIDE;
        long h = slots[base + HASH];
        if (h == 0) {
          return -2 - slot;
        }
        if (h == hash
            && (slots[base + META] & 0xff) == tag
            && slots[base + K0] == k0
            && slots[base + K0 + 1] == k1) {
          return slot;
        }
        slot = (slot + 1) & mask;
      }
    }
    while (true) {
      int base = slot * STRIDE;
      long h = slots[base + HASH];
      if (h == 0) {
        return -2 - slot;
      }
      if (h == hash && (slots[base + META] & 0xff) == 0 && Arrays.equals(keys[slot], key)) {
        return slot;
      }
      slot = (slot + 1) & mask;
    }
  }

  /** Bytes {@code from} to {@code from + 7} of {@code key} as a big-endian long, 0 beyond it. */
  private static long pack(byte[] key, int from) {
    long packed = 0;
    for (int i = from; i < from + 8; i++) {
      packed = (packed << 8) | (i < key.length ? key[i] & 0xff : 0);
    }
    return packed;
  }

  /**
   * Frees {@code slot}, which {@link #reserve} gave a key that is to have no entry after all; the
   * pending numbers of other keys still find their slots.
   */
  void removeReservedAt(int slot) {
    int flags = (int) (slots[slot * STRIDE + META] >>> 16) & 0xff;
    if ((flags & RESERVED) == 0) {
      throw new IllegalStateException("only a reserved slot of the key index is removed unused");
    }
    removeSlot(slot);
  }

  /** The key of {@code slot}. */
  byte[] keyAt(int slot) {
    int base = slot * STRIDE;
    int tag = (int) slots[base + META] & 0xff;
    if (tag == 0) {
      return keys[slot];
    }
    byte[] key = new byte[tag - 1];
    for (int i = 0; i < key.length; i++) {
      key[i] = inlineKeyByte(base, i);
    }
    return key;
  }

  /** Byte {@code i} of the key kept in the slot at {@code base}. */
  private byte inlineKeyByte(int base, int i) {
    return (byte) (slots[base + K0 + (i >> 3)] >>> (56 - 8 * (i & 7)));
  }

  /**
   * Takes a free slot for {@code key}, which has none ({@code found} is what {@link #find} returned
   * for it), growing the table first if it is full.
   */
  private int takeSlot(byte[] key, long hash, int keyGroup, int found) {
    if (size >= threshold) {
      grow();
      found = find(key, hash);
    }
    int slot = -2 - found;
    size++;
    changes++;
    setKey(slot, key);
    slots[slot * STRIDE + HASH] = hash;
    groups[slot] = (char) (keyGroup + 1);
    return slot;
  }

  /** Keeps {@code key} as the key of the free {@code slot}. */
  private void setKey(int slot, byte[] key) {
    int base = slot * STRIDE;
    if (key.length <= INLINE_KEY_BYTES) {
      slots[base + K0] = pack(key, 0);
      slots[base + K0 + 1] = pack(key, 8);
      slots[base + META] = key.length + 1;
    } else {
      if (keys == null) {
        keys = new byte[mask + 1][];
      }
      keys[slot] = key;
      slots[base + META] = 0;
    }
  }

  /** What was applied to {@code key}; null if nothing, or only a tombstone that has expired. */
  AppliedChange get(byte[] key, long hash, long now) {
    int slot = slotOf(key, hash, now);
    return slot < 0 ? null : at(slot);
  }

  /**
   * The slot of {@code key}, valid until the next change of the index; negative if it has none, or
   * only a tombstone that has expired and no pending number (the tombstone is removed then): then
   * what {@link #reserve} takes.
   */
  int slotOf(byte[] key, long hash, long now) {
    int slot = find(key, hash);
    if (slot < 0) {
      return slot;
    }
    if (isExpiredTombstone(slot, now)) {
      removeSlot(slot);
      return -1;
    }
    return slot;
  }

  /**
   * Whether {@code slot} holds a tombstone expired at {@code now} that no pending change holds (a
   * reserved slot holds none: its put rewrites the flags).
   */
  private boolean isExpiredTombstone(int slot, long now) {
    int base = slot * STRIDE;
    return ((slots[base + META] >>> 16) & DELETED) != 0
        && pendingAt(slot) == 0
        && expired(slots[base + POSITION], now);
  }

  /** What was applied to the key of {@code slot}: null if nothing yet (its changes pending). */
  AppliedChange at(int slot) {
    int flags = (int) (slots[slot * STRIDE + META] >>> 16) & 0xff;
    return (flags & RESERVED) != 0 ? null : getAt(slot);
  }

  /** The number {@link #markPendingAt} gave the key of {@code slot}, 0 if none since its put. */
  int pendingAt(int slot) {
    return (int) (slots[slot * STRIDE + FILE] >>> 32);
  }

  /**
   * Gives {@code key}, for which {@link #slotOf} just returned {@code missing} (negative), a slot
   * with nothing applied, and returns it.
   */
  int reserve(byte[] key, long hash, int keyGroup, int missing) {
    // Where slotOf removed an expired tombstone, the free slot it found may have moved.
    int found = missing <= -2 ? missing : find(key, hash);
    if (found >= 0) {
      throw new IllegalStateException("a key reserved in the index already has a slot");
    }
    int slot = takeSlot(key, hash, keyGroup, found);
    slots[slot * STRIDE + META] |= (long) RESERVED << 16;
    return slot;
  }

  /**
   * Gives the key of {@code slot} (from {@link #slotOf} or {@link #reserve}, with no change of the
   * index since) a number above 0, by which the caller finds its pending changes and {@link
   * #slotOfPending} its slot, until the next put of the key. Numbers are given from 1 up after
   * {@link #pendingCleared}, when every pending key was put or released.
   */
  void markPendingAt(int slot, int number) {
    changes++;
    int base = slot * STRIDE;
    slots[base + FILE] = (slots[base + FILE] & 0xffffffffL) | ((long) number << 32);
    highestPending = Math.max(highestPending, number);
    if (number > pendingSlots.length) {
      pendingSlots = Arrays.copyOf(pendingSlots, Math.max(number, 2 * pendingSlots.length));
    }
    pendingSlots[number - 1] = slot;
  }

  /**
   * After every pending key was put or released: numbers begin from 1 again. The room for the
   * numbers of a burst is given back over the quieter rounds after it, idle ones included.
   */
  void pendingCleared() {
    int room = pendingNumbersRoom.after(highestPending, pendingSlots.length);
    highestPending = 0;
    if (room != pendingSlots.length) {
      pendingSlots = new int[room];
    }
  }

  /** The slot of the key that {@code number} was given to and has had no put since. */
  int slotOfPending(int number) {
    // Slots only move within the table, which only grows: a slot once given is still in it.
    if (number > pendingSlots.length || pendingAt(pendingSlots[number - 1]) != number) {
      throw new IllegalStateException("no key in the index has pending number " + number);
    }
    return pendingSlots[number - 1];
  }

  /** Keeps {@link #pendingSlots} right after the entry of {@code slot} moved there. */
  private void movedTo(int slot) {
    int number = pendingAt(slot);
    if (number != 0) {
      pendingSlots[number - 1] = slot;
    }
  }

  private boolean expired(long writtenAt, long now) {
    return now - writtenAt >= tombstoneTtlMillis;
  }

  private SourceSequence sequenceAt(int slot, long meta, int flags) {
    if ((flags & SEQUENCE_OBJECT) != 0) {
      return longSequences[slot];
    }
    int base = slot * STRIDE;
    int prefix = (int) (meta >>> 40);
    return SourceSequence.of(
        KINDS[(int) (meta >>> 24) & 0xff],
        prefix == 0 ? null : prefixes.name(prefix - 1),
        (int) (meta >>> 32) & 0xff,
        slots[base + C0],
        slots[base + C0 + 1],
        slots[base + C0 + 2]);
  }

  /**
   * Records {@code value} for {@code key}; a deleted value is a tombstone written at {@code now}.
   */
  void put(byte[] key, long hash, int keyGroup, AppliedChange value, long now) {
    int slot = find(key, hash);
    if (slot < 0) {
      slot = takeSlot(key, hash, keyGroup, slot);
    }
    putAt(slot, value, now);
  }

  /**
   * Records {@code value} for the key of {@code slot}, which {@link #slotOf} returned with no
   * change of the index since; a deleted value is a tombstone written at {@code now}.
   */
  void putAt(int slot, AppliedChange value, long now) {
    changes++;
    int base = slot * STRIDE;
    int flags = value.deleted() ? DELETED : 0;
    long meta = 0;
    SourceSequence sequence = value.sequence();
    if (longSequences != null) {
      longSequences[slot] = null;
    }
    if (sequence != null) {
      flags |= SEQUENCED;
      slots[base + FINGERPRINT] = value.fingerprint();
      if (sequence.size() > SourceSequence.INLINE_COMPONENTS) {
        flags |= SEQUENCE_OBJECT;
        if (longSequences == null) {
          longSequences = new SourceSequence[mask + 1];
        }
        longSequences[slot] = sequence;
      } else {
        int prefix = sequence.prefix() == null ? 0 : prefixes.numberOf(sequence.prefix()) + 1;
        meta |=
            ((long) sequence.kind().ordinal() << 24)
                | ((long) sequence.size() << 32)
                | ((long) prefix << 40);
        for (int i = 0; i < SourceSequence.INLINE_COMPONENTS; i++) {
          slots[base + C0 + i] = i < sequence.size() ? sequence.component(i) : 0;
        }
      }
    }
    // Clears the key's pending number too.
    slots[base + FILE] = 0;
    if (value.file() != null) {
      flags |= LOCATED;
      slots[base + FILE] = files.numberOf(value.file());
    }
    slots[base + POSITION] = value.deleted() ? now : value.position();
    slots[base + META] = (slots[base + META] & 0xff) | meta | ((long) flags << 16);
  }

  /**
   * Drops the names of files no entry refers to any more, once they are most of the table: files
   * are written at every checkpoint and their rows move on.
   */
  void forgetUnusedFiles() {
    // Each sweep reads the whole table: sweep again only once the names have doubled since.
    if (files.size() < Math.max(1024, 2 * filesAfterLastSweep)) {
      return;
    }
    int[] renumbered = new int[files.size()];
    Arrays.fill(renumbered, -1);
    List<String> used = new ArrayList<>();
    for (int slot = 0; slot <= mask; slot++) {
      int base = slot * STRIDE;
      if (slots[base + HASH] != 0 && ((slots[base + META] >>> 16) & LOCATED) != 0) {
        int file = (int) slots[base + FILE];
        if (renumbered[file] < 0) {
          renumbered[file] = used.size();
          used.add(files.name(file));
        }
      }
    }
    if (used.size() * 2 > files.size()) {
      filesAfterLastSweep = files.size();
      return;
    }
    filesAfterLastSweep = used.size();
    for (int slot = 0; slot <= mask; slot++) {
      int base = slot * STRIDE;
      if (slots[base + HASH] != 0 && ((slots[base + META] >>> 16) & LOCATED) != 0) {
        slots[base + FILE] =
            (slots[base + FILE] & ~0xffffffffL) | renumbered[(int) slots[base + FILE]];
      }
    }
    files.keepOnly(used);
  }

  /** How many file names the index holds. */
  int fileNames() {
    return files.size();
  }

  /**
   * Removes the tombstones that have expired at {@code now} and that no pending change holds, at
   * most once per {@link #TOMBSTONE_SWEEP_INTERVAL_MILLIS} (or per time to live, if shorter): an
   * expired tombstone is otherwise removed only when its key is met again, and the keys of a table
   * whose rows are inserted and deleted once each (a queue, an outbox) are never met again.
   *
   * @return how many were removed
   */
  int removeExpiredTombstones(long now) {
    if (now - lastTombstoneSweep < Math.min(tombstoneTtlMillis, TOMBSTONE_SWEEP_INTERVAL_MILLIS)) {
      return 0;
    }
    lastTombstoneSweep = now;
    int removed = 0;
    int slot = 0;
    while (slot <= mask) {
      if (slots[slot * STRIDE + HASH] != 0 && isExpiredTombstone(slot, now)) {
        // A later entry of the probe run may move into the slot: it is looked at next.
        removeSlot(slot);
        removed++;
      } else {
        slot++;
      }
    }
    return removed;
  }

  /** Forgets {@code key}. */
  void remove(byte[] key, long hash) {
    int slot = find(key, hash);
    if (slot >= 0) {
      removeSlot(slot);
    }
  }

  /**
   * Empties a slot and moves later entries of its probe run back, so that no look-up stops early.
   */
  private void removeSlot(int slot) {
    changes++;
    int gap = slot;
    int next = (gap + 1) & mask;
    while (true) {
      long h = slots[next * STRIDE + HASH];
      if (h == 0) {
        break;
      }
      int home = (int) h & mask;
      // The entry at next may fill the gap if its home is not cyclically within (gap, next].
      boolean movable = gap <= next ? (home <= gap || home > next) : (home <= gap && home > next);
      if (movable) {
        System.arraycopy(slots, next * STRIDE, slots, gap * STRIDE, STRIDE);
        movedTo(gap);
        if (keys != null) {
          keys[gap] = keys[next];
        }
        groups[gap] = groups[next];
        if (longSequences != null) {
          longSequences[gap] = longSequences[next];
        }
        gap = next;
      }
      next = (next + 1) & mask;
    }
    Arrays.fill(slots, gap * STRIDE, gap * STRIDE + STRIDE, 0L);
    if (keys != null) {
      keys[gap] = null;
    }
    groups[gap] = 0;
    if (longSequences != null) {
      longSequences[gap] = null;
    }
    size--;
  }

  private void grow() {
    long[] oldSlots = slots;
    byte[][] oldKeys = keys;
    char[] oldGroups = groups;
    SourceSequence[] oldSequences = longSequences;
    int oldCapacity = mask + 1;
    allocate(oldCapacity * 2);
    for (int old = 0; old < oldCapacity; old++) {
      long h = oldSlots[old * STRIDE + HASH];
      if (h == 0) {
        continue;
      }
      int slot = (int) h & mask;
      while (slots[slot * STRIDE + HASH] != 0) {
        slot = (slot + 1) & mask;
      }
      System.arraycopy(oldSlots, old * STRIDE, slots, slot * STRIDE, STRIDE);
      movedTo(slot);
      if (oldKeys != null) {
        keys[slot] = oldKeys[old];
      }
      groups[slot] = oldGroups[old];
      if (oldSequences != null) {
        longSequences[slot] = oldSequences[old];
      }
    }
  }

  /** Visits every entry, expired tombstones included. */
  interface EntryVisitor {
    void visit(byte[] key, int keyGroup, AppliedChange value) throws Exception;
  }

  void forEach(EntryVisitor visitor) throws Exception {
    for (int slot = 0; slot <= mask; slot++) {
      if (slots[slot * STRIDE + HASH] != 0) {
        visitor.visit(keyAt(slot), keyGroupOf(slot), settledAt(slot));
      }
    }
  }

  /** The entry of {@code slot}, which must have no changes pending. */
  private AppliedChange settledAt(int slot) {
    requireSettled(slot);
    return getAt(slot);
  }

  private void requireSettled(int slot) {
    if (pendingAt(slot) != 0) {
      throw new IllegalStateException(
          "the key index holds changes not yet applied: they are applied before every snapshot");
    }
  }

  private int keyGroupOf(int slot) {
    return groups[slot] - 1;
  }

  private AppliedChange getAt(int slot) {
    long meta = slots[slot * STRIDE + META];
    int flags = (int) (meta >>> 16) & 0xff;
    boolean deleted = (flags & DELETED) != 0;
    SourceSequence sequence = (flags & SEQUENCED) != 0 ? sequenceAt(slot, meta, flags) : null;
    return AppliedChange.of(
        sequence,
        sequence == null ? 0 : slots[slot * STRIDE + FINGERPRINT],
        deleted,
        (flags & LOCATED) != 0 ? files.name((int) slots[slot * STRIDE + FILE]) : null,
        deleted ? 0 : slots[slot * STRIDE + POSITION]);
  }

  /** Starts a key group in the output, as {@code KeyedStateCheckpointOutputStream} does. */
  interface KeyGroupStart {
    void start(int keyGroup) throws IOException;
  }

  /** Entries serialized into memory at a time while a snapshot is written. */
  static final int ENTRIES_PER_BATCH = 1 << 20;

  /**
   * Writes the entries of key groups {@code first} to {@code first + count - 1}, each after
   * starting it, without expired tombstones ({@link KeyIndexSnapshot#write}).
   */
  void write(int first, int count, long now, KeyGroupStart start, DataOutputView out)
      throws IOException {
    write(first, count, now, start, out, false);
  }

  /**
   * As {@link #write(int, int, long, KeyGroupStart, DataOutputView)}; with {@code othersLeft}, the
   * entries of key groups outside the range are left out (another call writes them), else they fail
   * the write. Where the index has not changed since a snapshot that kept its bytes, writes those.
   */
  void write(
      int first, int count, long now, KeyGroupStart start, DataOutputView out, boolean othersLeft)
      throws IOException {
    if (kept != null && kept.writes(changes, othersLeft, first, count)) {
      kept.write(first, count, start, out);
      keptWrites++;
      return;
    }
    KeptSnapshot keeping = null;
    if (keepSnapshot) {
      if (kept == null || !kept.of(changes, othersLeft)) {
        kept = new KeptSnapshot(changes, othersLeft, maxKeptBytes);
      }
      keeping = kept.keeping() ? kept : null;
    }
    new KeyIndexSnapshot(this, entriesPerBatch)
        .write(first, count, now, start, out, othersLeft, keeping);
    if (keeping != null) {
      entriesWhenTooLarge = keeping.keeping() ? -1 : size;
    }
  }

  /**
   * Begins a snapshot, before its calls of {@link #write}: they keep the bytes they write when the
   * index has not changed since the last snapshot began (up to {@link #MAX_KEPT_BYTES}; past them,
   * none), and drop bytes kept before a change.
   */
  void snapshotBegins() {
    // An entry takes 13 bytes at least (its key's length, its flags, its position).
    if (entriesWhenTooLarge >= 0 && size <= entriesWhenTooLarge / 2) {
      // Its entries largely other ones since: they may be smaller.
      entriesWhenTooLarge = -1;
    }
    keepSnapshot =
        changes == changesAtLastSnapshot
            && size <= maxKeptBytes / 13
            && (entriesWhenTooLarge < 0 || size < entriesWhenTooLarge);
    changesAtLastSnapshot = changes;
    if (kept != null && !kept.of(changes)) {
      kept = null;
    }
  }

  /** The bytes of a snapshot kept to be written again; heap the index holds besides its own. */
  long keptBytes() {
    KeptSnapshot bytes = kept;
    return bytes == null ? 0 : bytes.size();
  }

  /** Whether the writes of the snapshot begun last keep its bytes; for tests. */
  boolean keepsSnapshot() {
    return keepSnapshot;
  }

  /** How many calls of {@link #write} wrote bytes kept from an earlier snapshot; for tests. */
  long keptWrites() {
    return keptWrites;
  }

  /** Reads what {@link #write} wrote for {@code keyGroup} and adds it. */
  void read(int keyGroup, DataInputView in, long now) throws IOException {
    KeyIndexSnapshot.read(this, keyGroup, in, now);
  }

  /** The slots of the table, for tests. */
  int capacity() {
    return mask + 1;
  }

  /** The pending numbers there is room for without growing, for tests. */
  int pendingRoom() {
    return pendingSlots.length;
  }

  /** Per slot, its key group plus one, 0 for a free slot: the table itself, not a copy. */
  char[] slotGroups() {
    return groups;
  }

  /** The name of file {@code number}, as {@link #writeEntry} writes it. */
  String fileName(int number) {
    return files.name(number);
  }

  /**
   * Serializes the entry of {@code slot} into its key group's bytes unless it is an expired
   * tombstone ({@link KeyIndexSnapshot}), marking its file's number in {@code used}.
   */
  boolean writeEntry(int slot, long now, DataOutputSerializer buffer, java.util.BitSet used)
      throws IOException {
    int base = slot * STRIDE;
    long meta = slots[base + META];
    int flags = (int) (meta >>> 16) & 0xff;
    requireSettled(slot);
    if ((flags & DELETED) != 0 && expired(slots[base + POSITION], now)) {
      return false;
    }
    int tag = (int) meta & 0xff;
    if (tag == 0) {
      byte[] key = keys[slot];
      buffer.writeInt(key.length);
      buffer.write(key);
    } else {
      int length = tag - 1;
      buffer.writeInt(length);
      int i = 0;
      for (; i + 8 <= length; i += 8) {
        buffer.writeLong(slots[base + K0 + (i >> 3)]);
      }
      for (; i < length; i++) {
        buffer.writeByte(inlineKeyByte(base, i));
      }
    }
    buffer.writeByte(flags & (DELETED | SEQUENCED | LOCATED));
    if ((flags & SEQUENCED) != 0) {
      if ((flags & SEQUENCE_OBJECT) != 0) {
        SourceSequenceCodec.write(longSequences[slot], buffer);
      } else {
        // As SourceSequenceCodec writes it, without making the sequence.
        buffer.writeByte((int) (meta >>> 24) & 0xff);
        int prefix = (int) (meta >>> 40);
        buffer.writeBoolean(prefix != 0);
        if (prefix != 0) {
          buffer.writeUTF(prefixes.name(prefix - 1));
        }
        int size = (int) (meta >>> 32) & 0xff;
        buffer.writeByte(size);
        for (int c = 0; c < size; c++) {
          buffer.writeLong(slots[base + C0 + c]);
        }
      }
      buffer.writeLong(slots[base + FINGERPRINT]);
    }
    if ((flags & LOCATED) != 0) {
      int file = (int) slots[base + FILE];
      used.set(file);
      buffer.writeInt(file);
    }
    buffer.writeLong(slots[base + POSITION]);
    return true;
  }

  /**
   * Reads an entry that {@link #writeEntry} wrote into a key group's bytes and adds it.
   *
   * @param names the file names of the key group, by the number its entries give
   */
  void readEntry(int keyGroup, DataInputView in, Map<Integer, String> names, long now)
      throws IOException {
    byte[] key = new byte[in.readInt()];
    in.readFully(key);
    int flags = in.readByte();
    SourceSequence sequence = null;
    long fingerprint = 0;
    if ((flags & SEQUENCED) != 0) {
      sequence = SourceSequenceCodec.read(in);
      fingerprint = in.readLong();
    }
    String file = null;
    if ((flags & LOCATED) != 0) {
      int number = in.readInt();
      file = names.get(number);
      if (file == null) {
        throw new IOException(
            "the key index's state of key group " + keyGroup + " names no file " + number);
      }
    }
    long position = in.readLong();
    boolean deleted = (flags & DELETED) != 0;
    AppliedChange value =
        AppliedChange.of(sequence, fingerprint, deleted, file, deleted ? 0 : position);
    put(key, hash(key), keyGroup, value, deleted ? position : now);
  }
}
