package io.icebergcdc.dedup.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.icebergcdc.cdc.GoldenFiles;
import io.icebergcdc.cdc.SourceSequence;
import io.icebergcdc.dedup.AppliedChange;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.junit.jupiter.api.Test;

class KeyIndexTest {

  private static final long TTL = 1000;

  private static byte[] key(long id) {
    return ByteBuffer.allocate(8).putLong(id).array();
  }

  /** A random entry: live with or without location, loaded, or a tombstone. */
  private static AppliedChange randomEntry(Random random) {
    SourceSequence sequence =
        switch (random.nextInt(4)) {
          case 0 -> SourceSequence.postgresLsn(random.nextLong(), random.nextLong());
          case 1 ->
              SourceSequence.mysqlBinlog(
                  "mysql-bin.00000" + random.nextInt(10), random.nextInt(100), random.nextLong());
          case 2 -> SourceSequence.of(SourceSequence.Kind.COLUMN, null, new long[] {1, 2, 3, 4});
          default -> SourceSequence.column(random.nextLong());
        };
    return switch (random.nextInt(4)) {
      case 0 -> AppliedChange.loaded("f" + random.nextInt(50), random.nextInt(1 << 20));
      case 1 -> new AppliedChange(sequence, random.nextLong(), true);
      case 2 -> AppliedChange.live(sequence, random.nextLong(), null, 0);
      default ->
          AppliedChange.live(
              sequence, random.nextLong(), "f" + random.nextInt(50), random.nextInt(1 << 20));
    };
  }

  @Test
  void keepsWhatARandomMixOfPutsAndRemovesLeavesAsAHashMapDoes() {
    Random random = new Random(42);
    KeyIndex index = new KeyIndex(Long.MAX_VALUE);
    Map<Long, AppliedChange> model = new HashMap<>();
    for (int i = 0; i < 200_000; i++) {
      long id = random.nextInt(20_000);
      byte[] key = key(id);
      if (random.nextInt(5) == 0) {
        index.remove(key, KeyIndex.hash(key));
        model.remove(id);
      } else {
        AppliedChange value = randomEntry(random);
        index.put(key, KeyIndex.hash(key), (int) (id % 128), value, 0);
        model.put(id, value);
      }
    }
    assertThat(index.size()).isEqualTo(model.size());
    for (long id = 0; id < 20_000; id++) {
      byte[] key = key(id);
      assertThat(index.get(key, KeyIndex.hash(key), 0)).as("key %d", id).isEqualTo(model.get(id));
    }
  }

  @Test
  void keysOfAnyLengthAreKeptInOrBesideTheirSlotsAndSurviveASnapshot() throws Exception {
    Random random = new Random(5);
    KeyIndex index = new KeyIndex(Long.MAX_VALUE);
    Map<ByteBuffer, AppliedChange> model = new HashMap<>();
    // Lengths around the 16 bytes kept in the slot, and keys that differ only by trailing zeros.
    List<byte[]> keys = new ArrayList<>();
    for (int length = 0; length <= 40; length++) {
      for (int variant = 0; variant < 200; variant++) {
        byte[] key = new byte[length];
        random.nextBytes(key);
        keys.add(key);
      }
    }
    keys.add(new byte[] {1});
    keys.add(new byte[] {1, 0});
    keys.add(new byte[16]);
    keys.add(new byte[17]);
    for (int i = 0; i < 100_000; i++) {
      byte[] key = keys.get(random.nextInt(keys.size()));
      if (random.nextInt(10) == 0) {
        index.remove(key, KeyIndex.hash(key));
        model.remove(ByteBuffer.wrap(key));
      } else {
        AppliedChange value = randomEntry(random);
        index.put(key, KeyIndex.hash(key), 3, value, 0);
        model.put(ByteBuffer.wrap(key), value);
      }
    }
    assertThat(index.size()).isEqualTo(model.size());
    for (byte[] key : keys) {
      assertThat(index.get(key, KeyIndex.hash(key), 0))
          .as("key of %d bytes", key.length)
          .isEqualTo(model.get(ByteBuffer.wrap(key)));
    }
    Map<ByteBuffer, AppliedChange> visited = new HashMap<>();
    index.forEach((key, group, value) -> visited.put(ByteBuffer.wrap(key), value));
    assertThat(visited).isEqualTo(model);

    KeyIndex restored = new KeyIndex(Long.MAX_VALUE);
    restored.read(3, new DataInputDeserializer(write(index, 3, 1, 0).get(3)), 0);
    Map<ByteBuffer, AppliedChange> read = new HashMap<>();
    restored.forEach((key, group, value) -> read.put(ByteBuffer.wrap(key), value));
    assertThat(read).isEqualTo(model);
  }

  @Test
  void keysWhoseHashesCollideAreKeptApart() {
    KeyIndex index = new KeyIndex(Long.MAX_VALUE);
    AppliedChange a = AppliedChange.loaded("a", 1);
    AppliedChange b = AppliedChange.loaded("b", 2);
    index.put(key(1), 7, 0, a, 0);
    index.put(key(2), 7, 0, b, 0);
    assertThat(index.get(key(1), 7, 0)).isEqualTo(a);
    assertThat(index.get(key(2), 7, 0)).isEqualTo(b);
    index.remove(key(1), 7);
    assertThat(index.get(key(1), 7, 0)).isNull();
    assertThat(index.get(key(2), 7, 0)).isEqualTo(b);

    // Kept in their slots as the same two longs: only their lengths tell them apart.
    index.put(new byte[] {1}, 9, 0, a, 0);
    index.put(new byte[] {1, 0}, 9, 0, b, 0);
    assertThat(index.get(new byte[] {1}, 9, 0)).isEqualTo(a);
    assertThat(index.get(new byte[] {1, 0}, 9, 0)).isEqualTo(b);
    // Longer than a slot holds, and equal in their first 16 bytes.
    byte[] long1 = new byte[20];
    byte[] long2 = new byte[20];
    long2[19] = 1;
    index.put(long1, 9, 0, a, 0);
    index.put(long2, 9, 0, b, 0);
    assertThat(index.get(long1, 9, 0)).isEqualTo(a);
    assertThat(index.get(long2, 9, 0)).isEqualTo(b);
  }

  @Test
  void pendingNumbersFindTheirKeysAfterEntriesMoveByGrowthAndRemoval() {
    KeyIndex index = new KeyIndex(TTL);
    // Tombstones first in the probe run of hash 7, then keys of the same hash behind them.
    for (int i = 0; i < 4; i++) {
      index.put(key(1000 + i), 7, 0, new AppliedChange(SourceSequence.column(i), i, true), 0);
    }
    List<byte[]> keys = new ArrayList<>();
    List<Long> hashes = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      index.put(key(i), 7, 0, AppliedChange.loaded("f", i), 0);
    }
    int number = 0;
    for (int i = 0; i < 3; i++) {
      int slot = index.slotOf(key(i), 7, 0);
      assertThat(slot).isNotNegative();
      index.markPendingAt(slot, ++number);
      keys.add(key(i));
      hashes.add(7L);
    }
    // Expired now: looking one up removes it and shifts the keys behind it back.
    assertThat(index.slotOf(key(1000), 7, TTL)).isNegative();
    // New keys, reserved, until the table has grown several times.
    for (long i = 10; i < 10_000; i++) {
      long hash = KeyIndex.hash(key(i));
      int missing = index.slotOf(key(i), hash, TTL);
      assertThat(missing).isNegative();
      index.markPendingAt(index.reserve(key(i), hash, 0, missing), ++number);
      keys.add(key(i));
      hashes.add(hash);
    }
    // Another expired tombstone whose removal moves pending keys, after the growth.
    assertThat(index.slotOf(key(1001), 7, TTL)).isNegative();

    for (int n = 1; n <= number; n++) {
      int slot = index.slotOfPending(n);
      assertThat(index.pendingAt(slot)).isEqualTo(n);
      assertThat(index.at(slot)).isEqualTo(n <= 3 ? AppliedChange.loaded("f", n - 1) : null);
      index.putAt(slot, AppliedChange.loaded("g", n), TTL);
    }
    for (int n = 1; n <= number; n++) {
      assertThat(index.get(keys.get(n - 1), hashes.get(n - 1), TTL))
          .isEqualTo(AppliedChange.loaded("g", n));
    }
    assertThatThrownBy(() -> index.slotOfPending(1)).isInstanceOf(IllegalStateException.class);
  }

  @Test
  void anIndexStartsSmallAndGivesBackTheRoomOfABurstsPendingNumbers() {
    KeyIndex index = new KeyIndex(TTL);
    assertThat(index.capacity()).isEqualTo(KeyIndex.INITIAL_CAPACITY);
    assertThat(index.pendingRoom()).isEqualTo(KeyIndex.INITIAL_CAPACITY);
    int burst = 50_000;
    pendAndPut(index, 0, burst, 1, false);
    int afterBurst = index.pendingRoom();
    assertThat(afterBurst).isGreaterThanOrEqualTo(burst);

    // Quiet rounds of a few keys, some of them new; then idle ones.
    long next = burst;
    for (int round = 0; round < 10; round++) {
      pendAndPut(index, round * 3, 3, round + 2, false);
      pendAndPut(index, next, 5, round + 2, false);
      next += 5;
    }
    for (int round = 0; round < 10; round++) {
      index.pendingCleared();
    }
    assertThat(index.pendingRoom()).isLessThanOrEqualTo(4 * 2 * 8);

    // With the room given back: numbers past it, new keys that grow the table while their
    // numbers are pending, and reserved keys released.
    int capacity = index.capacity();
    int many = capacity;
    pendAndPut(index, next, many, 99, true);
    assertThat(index.capacity()).isGreaterThan(capacity);
    for (long i = 0; i < next + many; i++) {
      byte[] key = key(i);
      AppliedChange entry = index.get(key, KeyIndex.hash(key), 0);
      if (i >= next && (i - next) % 7 == 0) {
        assertThat(entry).as("released key %s", i).isNull();
      } else {
        assertThat(entry).as("key %s", i).isNotNull();
      }
    }
  }

  /**
   * Marks keys {@code from} on pending, numbered from 1, then puts each through its number (with
   * {@code releasing}, every seventh new key is released instead), as a flush does.
   */
  private static void pendAndPut(
      KeyIndex index, long from, int count, long file, boolean releasing) {
    for (int n = 1; n <= count; n++) {
      byte[] key = key(from + n - 1);
      long hash = KeyIndex.hash(key);
      int slot = index.slotOf(key, hash, 0);
      index.markPendingAt(slot >= 0 ? slot : index.reserve(key, hash, 0, slot), n);
    }
    for (int n = 1; n <= count; n++) {
      int slot = index.slotOfPending(n);
      assertThat(index.pendingAt(slot)).isEqualTo(n);
      if (releasing && (n - 1) % 7 == 0) {
        index.removeReservedAt(slot);
      } else {
        index.putAt(slot, AppliedChange.loaded("f" + file, from + n - 1), 0);
      }
    }
    index.pendingCleared();
  }

  @Test
  void aTombstoneExpiresItsTimeToLiveAfterItWasWritten() {
    KeyIndex index = new KeyIndex(TTL);
    byte[] key = key(1);
    AppliedChange deleted = new AppliedChange(SourceSequence.column(5), 9, true);
    index.put(key, KeyIndex.hash(key), 0, deleted, 10_000);
    assertThat(index.get(key, KeyIndex.hash(key), 10_000 + TTL - 1)).isEqualTo(deleted);
    assertThat(index.get(key, KeyIndex.hash(key), 10_000 + TTL)).isNull();
    assertThat(index.size()).isZero();

    AppliedChange live = AppliedChange.live(SourceSequence.column(6), 1, "f", 3);
    index.put(key, KeyIndex.hash(key), 0, live, 0);
    assertThat(index.get(key, KeyIndex.hash(key), Long.MAX_VALUE)).isEqualTo(live);
  }

  /**
   * Expired tombstones of keys never met again leave the index at its sweep, the others stay found
   * whatever the removals moved (colliding hashes, runs that wrap round the table's end), and a
   * tombstone that a pending change holds stays.
   */
  @Test
  void aSweepRemovesTheExpiredTombstonesOfKeysNeverMetAgain() {
    KeyIndex index = new KeyIndex(TTL);
    Map<Long, AppliedChange> kept = new HashMap<>();
    for (long id = 0; id < 3_000; id++) {
      byte[] key = key(id);
      // Few distinct hashes: long probe runs, some round the table's end.
      long hash = id % 7 == 0 ? -1L : KeyIndex.hash(key) & 0xFFFL | 1;
      boolean tombstone = id % 3 != 0;
      long writtenAt = id % 2 == 0 ? 0 : 5 * TTL;
      AppliedChange value =
          tombstone
              ? new AppliedChange(SourceSequence.column(id), id, true)
              : AppliedChange.loaded("f", id);
      index.put(key, hash, 0, value, writtenAt);
      if (!tombstone || writtenAt > 0) {
        kept.put(id, value);
      }
    }
    byte[] held = key(10_000);
    index.put(held, 5, 0, new AppliedChange(SourceSequence.column(1), 1, true), 0);
    index.markPendingAt(index.slotOf(held, 5, 0), 1);

    // At most once per time to live here (shorter than the sweep interval).
    assertThat(index.removeExpiredTombstones(TTL - 1)).as("too early").isZero();
    int removed = index.removeExpiredTombstones(TTL + 1);
    assertThat(removed).isEqualTo(3_000 - kept.size());
    assertThat(index.removeExpiredTombstones(TTL + 2)).isZero();
    assertThat(index.size()).isEqualTo(kept.size() + 1);
    for (long id = 0; id < 3_000; id++) {
      byte[] key = key(id);
      long hash = id % 7 == 0 ? -1L : KeyIndex.hash(key) & 0xFFFL | 1;
      assertThat(index.get(key, hash, 0)).as("key %d", id).isEqualTo(kept.get(id));
    }
    assertThat(index.slotOfPending(1)).isEqualTo(index.slotOf(held, 5, 0));
  }

  @Test
  void eachKeyGroupIsWrittenApartAndReadBackWithoutExpiredTombstones() throws Exception {
    Random random = new Random(7);
    // Small batches, so that the snapshot serializes the key groups in several sweeps.
    KeyIndex index = new KeyIndex(TTL, 3000);
    Map<Long, AppliedChange> model = new HashMap<>();
    for (long id = 0; id < 5_000; id++) {
      AppliedChange value = randomEntry(random);
      byte[] key = key(id);
      // Tombstones of even keys are written long ago and have expired by the snapshot.
      long now = value.deleted() && id % 2 == 0 ? 0 : 100_000;
      index.put(key, KeyIndex.hash(key), 10 + (int) (id % 4), value, now);
      if (!value.deleted() || id % 2 == 1) {
        model.put(id, value);
      }
    }
    Map<Integer, byte[]> groups = write(index, 10, 4, 100_000);

    // Key groups 11 and 13 move to another subtask, as a rescaling does.
    KeyIndex restored = new KeyIndex(TTL);
    for (int group : new int[] {11, 13}) {
      restored.read(group, new DataInputDeserializer(groups.get(group)), 100_000);
    }
    long expected = model.keySet().stream().filter(id -> id % 4 == 1 || id % 4 == 3).count();
    assertThat(restored.size()).isEqualTo(expected);
    for (long id = 0; id < 5_000; id++) {
      byte[] key = key(id);
      AppliedChange value = restored.get(key, KeyIndex.hash(key), 100_000);
      if (id % 4 == 1 || id % 4 == 3) {
        assertThat(value).as("key %d", id).isEqualTo(model.get(id));
      } else {
        assertThat(value).as("key %d", id).isNull();
      }
    }
    restored.forEach(
        (key, keyGroup, value) ->
            assertThat(keyGroup).isEqualTo(10 + (int) (ByteBuffer.wrap(key).getLong() % 4)));

    byte[] corrupt = groups.get(10).clone();
    corrupt[3] = 9;
    assertThatThrownBy(() -> new KeyIndex(TTL).read(10, new DataInputDeserializer(corrupt), 0))
        .isInstanceOf(IOException.class)
        .hasMessageContaining("format 9");
  }

  @Test
  void readsTheKeyGroupFormatOfVersion1() throws Exception {
    KeyIndex index = new KeyIndex(TTL);
    AppliedChange live = AppliedChange.live(SourceSequence.postgresLsn(7, 9), 11, "#3", 42);
    AppliedChange binlog =
        AppliedChange.live(SourceSequence.mysqlBinlog("mysql-bin.000004", 120, 2), 12, null, 0);
    AppliedChange loaded = AppliedChange.loaded("#3", 5);
    AppliedChange deleted = new AppliedChange(SourceSequence.column(3), 13, true);
    AppliedChange[] values = {live, binlog, loaded, deleted};
    for (int i = 0; i < values.length; i++) {
      byte[] key = key(i);
      index.put(key, KeyIndex.hash(key), 5, values[i], 1_000);
    }
    byte[] v1 = GoldenFiles.bytes("serializer/key-index-v1.bin", write(index, 5, 1, 1_000).get(5));
    KeyIndex read = new KeyIndex(TTL);
    read.read(5, new DataInputDeserializer(v1), 1_000);
    for (int i = 0; i < values.length; i++) {
      byte[] key = key(i);
      assertThat(read.get(key, KeyIndex.hash(key), 1_500)).isEqualTo(values[i]);
    }
    // The tombstone kept the time it was written.
    assertThat(read.get(key(3), KeyIndex.hash(key(3)), 1_000 + TTL)).isNull();
  }

  /** The bytes of each key group, as a snapshot writes them into raw keyed state. */
  private static Map<Integer, byte[]> write(KeyIndex index, int first, int count, long now)
      throws IOException {
    DataOutputSerializer out = new DataOutputSerializer(64);
    Map<Integer, Integer> starts = new java.util.TreeMap<>();
    index.write(first, count, now, group -> starts.put(group, out.length()), out);
    Map<Integer, byte[]> groups = new HashMap<>();
    byte[] all = out.getCopyOfBuffer();
    for (int g = first; g < first + count; g++) {
      int end = g + 1 < first + count ? starts.get(g + 1) : all.length;
      groups.put(g, java.util.Arrays.copyOfRange(all, starts.get(g), end));
    }
    return groups;
  }

  @Test
  void anIndexUnchangedOverAnIntervalWritesTheBytesItKeptUntilItChanges() throws Exception {
    Random random = new Random(11);
    KeyIndex index = new KeyIndex(Long.MAX_VALUE, 700);
    int keptBefore = 0;
    for (int checkpoint = 0; checkpoint < 200; checkpoint++) {
      // Idle intervals between random changes: puts, removals, and keys reserved and freed.
      if (random.nextInt(3) == 0) {
        for (int i = random.nextInt(40); i >= 0; i--) {
          byte[] key = key(random.nextInt(3000));
          long hash = KeyIndex.hash(key);
          int group = groupOf(hash);
          switch (random.nextInt(5)) {
            case 0 -> index.remove(key, hash);
            case 1 -> {
              int slot = index.slotOf(key, hash, 0);
              if (slot < 0) {
                index.removeReservedAt(index.reserve(key, hash, group, slot));
              }
            }
            default -> index.put(key, hash, group, randomEntry(random), 0);
          }
        }
      }
      if (checkpoint == 0) {
        for (long id = 0; id < 3000; id++) {
          byte[] key = key(id);
          long hash = KeyIndex.hash(key);
          index.put(key, hash, groupOf(hash), randomEntry(random), 0);
        }
      }
      index.forgetUnusedFiles();
      index.snapshotBegins();
      // Leaving out key groups without entries, in runs that differ from one checkpoint to the
      // next, as the writer of several tables writes them; or all at once.
      boolean othersLeft = checkpoint < 100;
      Map<Integer, byte[]> written;
      if (othersLeft) {
        int split = 20 + random.nextInt(7);
        written = written(index, 20, split - 20, true, false);
        written.putAll(written(index, split, 26 - split, true, false));
      } else {
        written = written(index, 20, 6, false, false);
      }
      Map<Integer, byte[]> fresh = written(index, 20, 6, othersLeft, true);
      assertThat(written.keySet()).as("checkpoint %d", checkpoint).isEqualTo(fresh.keySet());
      for (int group : fresh.keySet()) {
        assertThat(written.get(group)).as("checkpoint %d", checkpoint).isEqualTo(fresh.get(group));
      }
      if (checkpoint == 99) {
        keptBefore = (int) index.keptWrites();
      }
    }
    // Some snapshots of each kind were written from kept bytes.
    assertThat(keptBefore).isGreaterThan(20);
    assertThat(index.keptWrites() - keptBefore).isGreaterThan(10);
  }

  /**
   * With tombstones expiring, the hourly sweep, keys marked pending and then applied, and many file
   * names dropped and renumbered: a restore from what the index wrote, kept or not, reads the same
   * entries as one from a snapshot serialized afresh.
   */
  @Test
  void whatAnIndexWroteFromKeptBytesRestoresAsAFreshSnapshot() throws Exception {
    Random random = new Random(5);
    long ttl = 2_000;
    KeyIndex index = new KeyIndex(ttl, 500);
    long now = 0;
    int file = 0;
    for (int checkpoint = 0; checkpoint < 300; checkpoint++) {
      now += 100 + random.nextInt(400);
      if (checkpoint % 60 == 59) {
        // Past the sweep interval: the sweep removes what expired.
        now += KeyIndex.TOMBSTONE_SWEEP_INTERVAL_MILLIS;
      }
      if (checkpoint == 0 || random.nextInt(3) == 0) {
        int pending = 0;
        List<Integer> marked = new ArrayList<>();
        // Often a single change: one that the count of changes missed would show.
        int changes = checkpoint == 0 ? 2000 : random.nextBoolean() ? 0 : random.nextInt(30);
        for (int i = changes; i >= 0; i--) {
          byte[] key = key(random.nextInt(2500));
          long hash = KeyIndex.hash(key);
          int group = groupOf(hash);
          switch (random.nextInt(5)) {
            case 0 -> index.remove(key, hash);
            case 1 ->
                index.put(
                    key, hash, group, new AppliedChange(SourceSequence.column(i), 0, true), now);
            default ->
                index.put(
                    key,
                    hash,
                    group,
                    AppliedChange.live(SourceSequence.column(i), i, "f" + file++, i),
                    now);
          }
        }
        // Keys marked pending, as the dedup marks them, then applied before the snapshot.
        for (int i = random.nextInt(4) == 0 ? random.nextInt(10) : -1; i >= 0; i--) {
          byte[] key = key(random.nextInt(2500));
          long hash = KeyIndex.hash(key);
          int slot = index.slotOf(key, hash, now);
          if (slot < 0) {
            slot = index.reserve(key, hash, groupOf(hash), slot);
          }
          if (index.pendingAt(slot) == 0) {
            index.markPendingAt(slot, ++pending);
            marked.add(pending);
          }
        }
        for (int number : marked) {
          index.putAt(
              index.slotOfPending(number),
              AppliedChange.live(SourceSequence.column(number), number, "f" + file++, number),
              now);
        }
      }
      index.removeExpiredTombstones(now);
      index.forgetUnusedFiles();
      index.snapshotBegins();
      Map<Integer, byte[]> written = written(index, 20, 6, true, false, now);
      Map<Integer, byte[]> fresh = written(index, 20, 6, true, true, now);
      assertThat(entries(written, now + 1))
          .as("checkpoint %d", checkpoint)
          .isEqualTo(entries(fresh, now + 1));
    }
    assertThat(index.keptWrites()).isGreaterThan(50);
  }

  /** The entries of an index restored from {@code groups}, as they read at {@code now}. */
  private static Map<Long, AppliedChange> entries(Map<Integer, byte[]> groups, long now)
      throws IOException {
    KeyIndex restored = new KeyIndex(2_000);
    for (Map.Entry<Integer, byte[]> group : groups.entrySet()) {
      restored.read(group.getKey(), new DataInputDeserializer(group.getValue()), now);
    }
    Map<Long, AppliedChange> entries = new HashMap<>();
    for (long id = 0; id < 2500; id++) {
      byte[] key = key(id);
      AppliedChange value = restored.get(key, KeyIndex.hash(key), now);
      if (value != null) {
        entries.put(id, value);
      }
    }
    return entries;
  }

  @Test
  void aSnapshotLargerThanTheMostKeptIsWrittenAfreshEachTime() throws Exception {
    // Kept within 100,000 bytes; not within 20,000 (passed as they are written) nor 10,000.
    for (long most : new long[] {100_000, 20_000, 10_000}) {
      KeyIndex index = new KeyIndex(TTL, 500, most);
      for (long id = 0; id < 1000; id++) {
        byte[] key = key(id);
        long hash = KeyIndex.hash(key);
        index.put(key, hash, groupOf(hash), AppliedChange.loaded("f", id), 0);
      }
      Map<Integer, byte[]> first = null;
      for (int checkpoint = 0; checkpoint < 4; checkpoint++) {
        index.snapshotBegins();
        Map<Integer, byte[]> groups = written(index, 20, 6, false, false);
        if (first == null) {
          first = groups;
        }
        assertThat(groups.keySet()).isEqualTo(first.keySet());
        for (int group : first.keySet()) {
          assertThat(groups.get(group)).isEqualTo(first.get(group));
        }
      }
      // About 26 bytes an entry.
      if (most == 100_000) {
        assertThat(index.keptBytes()).isBetween(20_000L, most);
        assertThat(index.keptWrites()).isEqualTo(2);
      } else {
        assertThat(index.keptBytes()).isZero();
        assertThat(index.keptWrites()).isZero();
      }
    }
  }

  /**
   * An index whose snapshot passed the most kept is not tried again at its next idle spell while it
   * holds as many entries; it is once it holds fewer, or half as many after growing again.
   */
  @Test
  void aSnapshotThatPassedTheMostKeptIsTriedAgainOnlyOnceTheIndexShrank() throws Exception {
    KeyIndex index = new KeyIndex(Long.MAX_VALUE, 500, 20_000);
    for (long id = 0; id < 1000; id++) {
      put(index, id);
    }
    index.snapshotBegins();
    index.snapshotBegins();
    assertThat(index.keepsSnapshot()).isTrue();
    written(index, 20, 6, false, false);
    assertThat(index.keptBytes()).isZero();
    // Another idle spell after a change at the same size: not tried.
    put(index, 0);
    index.snapshotBegins();
    index.snapshotBegins();
    assertThat(index.keepsSnapshot()).isFalse();
    // Fewer entries: tried, and kept.
    for (long id = 0; id < 300; id++) {
      remove(index, id);
    }
    index.snapshotBegins();
    index.snapshotBegins();
    assertThat(index.keepsSnapshot()).isTrue();
    written(index, 20, 6, false, false);
    assertThat(index.keptBytes()).isPositive();
    // Past the most again; then half as many, grown back with other keys: tried again.
    for (long id = 0; id < 300; id++) {
      put(index, id);
    }
    index.snapshotBegins();
    index.snapshotBegins();
    // Tried at the size that passed before: the snapshot kept since cleared that mark.
    assertThat(index.keepsSnapshot()).isTrue();
    written(index, 20, 6, false, false);
    assertThat(index.keptBytes()).isZero();
    for (long id = 0; id < 600; id++) {
      remove(index, id);
    }
    index.snapshotBegins();
    for (long id = 0; id < 600; id++) {
      put(index, 10_000 + id);
    }
    index.snapshotBegins();
    index.snapshotBegins();
    assertThat(index.keepsSnapshot()).isTrue();
  }

  /** The key group of a key by its hash, one of the six (20 to 25) the snapshots here write. */
  private static int groupOf(long hash) {
    return 20 + (int) Long.remainderUnsigned(hash, 6);
  }

  private static void remove(KeyIndex index, long id) {
    byte[] key = key(id);
    index.remove(key, KeyIndex.hash(key));
  }

  private static void put(KeyIndex index, long id) {
    byte[] key = key(id);
    long hash = KeyIndex.hash(key);
    index.put(key, hash, groupOf(hash), AppliedChange.loaded("f", id), 0);
  }

  @Test
  void aTombstoneThatExpiredInKeptBytesIsReadAsExpired() throws Exception {
    KeyIndex index = new KeyIndex(TTL);
    byte[] deleted = key(1);
    byte[] live = key(2);
    index.put(
        deleted,
        KeyIndex.hash(deleted),
        3,
        new AppliedChange(SourceSequence.column(1), 0, true),
        0);
    index.put(live, KeyIndex.hash(live), 3, AppliedChange.loaded("f", 4), 0);
    index.snapshotBegins();
    write(index, 3, 1, 0);
    index.snapshotBegins();
    write(index, 3, 1, 0);
    index.snapshotBegins();
    byte[] late = write(index, 3, 1, 10 * TTL).get(3);
    assertThat(index.keptWrites()).isEqualTo(1);

    KeyIndex restored = new KeyIndex(TTL);
    restored.read(3, new DataInputDeserializer(late), 10 * TTL);
    assertThat(restored.get(deleted, KeyIndex.hash(deleted), 10 * TTL)).isNull();
    assertThat(restored.get(live, KeyIndex.hash(live), 10 * TTL))
        .isEqualTo(AppliedChange.loaded("f", 4));
  }

  /**
   * The bytes of each key group written: through the index ({@link KeyIndex#write}, which may write
   * kept bytes), or {@code fresh}, serialized from its entries.
   */
  private static Map<Integer, byte[]> written(
      KeyIndex index, int first, int count, boolean othersLeft, boolean fresh) throws IOException {
    return written(index, first, count, othersLeft, fresh, 0);
  }

  /** As above, at {@code now}: a fresh snapshot leaves out the tombstones expired by then. */
  private static Map<Integer, byte[]> written(
      KeyIndex index, int first, int count, boolean othersLeft, boolean fresh, long now)
      throws IOException {
    DataOutputSerializer out = new DataOutputSerializer(64);
    List<Integer> started = new ArrayList<>();
    List<Integer> starts = new ArrayList<>();
    KeyIndex.KeyGroupStart start =
        group -> {
          started.add(group);
          starts.add(out.length());
        };
    if (fresh) {
      new KeyIndexSnapshot(index, 700).write(first, count, now, start, out, othersLeft, null);
    } else {
      index.write(first, count, now, start, out, othersLeft);
    }
    byte[] all = out.getCopyOfBuffer();
    Map<Integer, byte[]> groups = new java.util.TreeMap<>();
    for (int i = 0; i < started.size(); i++) {
      int end = i + 1 < starts.size() ? starts.get(i + 1) : all.length;
      groups.put(started.get(i), java.util.Arrays.copyOfRange(all, starts.get(i), end));
    }
    return groups;
  }

  @Test
  void namesOfFilesNoEntryRefersToAreDropped() {
    KeyIndex index = new KeyIndex(Long.MAX_VALUE);
    for (int i = 0; i < 3000; i++) {
      byte[] key = key(i % 10);
      index.put(
          key,
          KeyIndex.hash(key),
          0,
          AppliedChange.live(SourceSequence.column(i), 0, "f" + i, i),
          0);
    }
    assertThat(index.fileNames()).isEqualTo(3000);
    index.forgetUnusedFiles();
    assertThat(index.fileNames()).isEqualTo(10);
    for (int k = 0; k < 10; k++) {
      byte[] key = key(k);
      int last = 2990 + k;
      assertThat(index.get(key, KeyIndex.hash(key), 0).file()).isEqualTo("f" + last);
    }
  }
}
