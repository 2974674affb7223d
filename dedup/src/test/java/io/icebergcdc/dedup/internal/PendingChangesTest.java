package io.icebergcdc.dedup.internal;

import static io.icebergcdc.cdc.TestChanges.delete;
import static io.icebergcdc.cdc.TestChanges.insert;
import static io.icebergcdc.cdc.TestChanges.update;
import static org.assertj.core.api.Assertions.assertThat;

import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.Operation;
import io.icebergcdc.cdc.SourceSequence;
import io.icebergcdc.cdc.TestChanges;
import io.icebergcdc.cdc.typeutils.ChangeEventTypeInfo;
import io.icebergcdc.dedup.AppliedChange;
import org.apache.flink.api.common.serialization.SerializerConfigImpl;
import org.junit.jupiter.api.Test;

class PendingChangesTest {

  private final PendingChanges pending =
      new PendingChanges(
          ChangeEventTypeInfo.of(TestChanges.CHANGE_SCHEMA)
              .createSerializer(new SerializerConfigImpl()));

  @Test
  void givesBackEachKeysChangeWithWhatWasKeptBesideIt() {
    AppliedChange prior = AppliedChange.live(SourceSequence.postgresLsn(5), 55L, "f", 3);
    int first = pending.add("key-1", prior, insert(1, "a", 10));
    int second = pending.add(null, null, delete(2, 20));

    assertThat(first).isEqualTo(1);
    assertThat(second).isEqualTo(2);
    assertThat(pending.size()).isEqualTo(2);
    assertSameChange(pending.event(1), insert(1, "a", 10));
    assertSameChange(pending.event(2), delete(2, 20));
    assertThat(pending.sequence(1)).isEqualTo(SourceSequence.postgresLsn(10));
    assertThat(pending.sequence(2)).isEqualTo(SourceSequence.postgresLsn(20));
    assertThat(pending.key(1)).isEqualTo("key-1");
    assertThat(pending.key(2)).isNull();
    assertThat(pending.prior(1)).isEqualTo(prior);
    assertThat(pending.prior(2)).isNull();
  }

  @Test
  void aNewerChangeReplacesTheKeysChange() {
    pending.add(null, null, insert(1, "a", 10));
    pending.add(null, null, insert(2, "b", 11));

    pending.replace(1, update(1, "c", 30));
    pending.replace(1, delete(1, 40));

    assertThat(pending.size()).isEqualTo(2);
    assertSameChange(pending.event(1), delete(1, 40));
    assertThat(pending.sequence(1)).isEqualTo(SourceSequence.postgresLsn(40));
    assertSameChange(pending.event(2), insert(2, "b", 11));
  }

  @Test
  void keepsChangesAcrossManyChunksAndChangesLargerThanAChunk() {
    String large = "x".repeat(3 << 20);
    int keys = 200_000;
    for (int i = 0; i < keys; i++) {
      String name = i == 1000 ? large : "name-" + i;
      pending.add(null, null, insert(i, name, i + 1));
    }
    for (int i = 0; i < keys; i += 7) {
      pending.replace(i + 1, update(i, "updated-" + i, keys + i));
    }

    assertThat(pending.chunkBytes()).isGreaterThan(8L << 20);
    for (int i = 0; i < keys; i++) {
      ChangeEvent expected =
          i % 7 == 0
              ? update(i, "updated-" + i, keys + i)
              : insert(i, i == 1000 ? large : "name-" + i, i + 1);
      assertSameChange(pending.event(i + 1), expected);
    }
  }

  @Test
  void clearingKeepsTheChunksTheIntervalUsedAndReleasesTheOthers() {
    for (int i = 0; i < 100_000; i++) {
      pending.add("key", null, insert(i, "name-" + i, i + 1));
    }
    long afterBurst = pending.chunkBytes();

    pending.clear();
    assertThat(pending.size()).isZero();
    assertThat(pending.chunkBytes()).isEqualTo(afterBurst);

    pending.add(null, null, insert(1, "a", 1));
    assertSameChange(pending.event(1), insert(1, "a", 1));
    assertThat(pending.key(1)).isNull();
    pending.clear();
    assertThat(pending.chunkBytes()).isLessThan(afterBurst);
    assertThat(pending.chunkBytes()).isGreaterThan(0L);
  }

  @Test
  void theRoomForABurstsKeysIsGivenBackOverTheQuietIntervalsAfterIt() {
    assertThat(pending.room()).isEqualTo(PendingChanges.INITIAL_KEYS);
    for (int i = 0; i < 100_000; i++) {
      pending.add("key-" + i, null, insert(i, "name-" + i, i + 1));
    }
    pending.clear();
    int afterBurst = pending.room();
    assertThat(afterBurst).isGreaterThanOrEqualTo(100_000);

    // The interval right after a burst keeps its room: bursts often come in a row.
    pending.add("a", null, insert(1, "a", 1));
    pending.clear();
    assertThat(pending.room()).isEqualTo(afterBurst);
    for (int interval = 0; interval < 20; interval++) {
      for (int i = 0; i < 10; i++) {
        pending.add("k" + i, null, insert(i, "n" + i, interval * 10 + i));
      }
      for (int i = 0; i < 10; i++) {
        assertThat(pending.key(i + 1)).isEqualTo("k" + i);
        assertSameChange(pending.event(i + 1), insert(i, "n" + i, interval * 10 + i));
      }
      pending.clear();
    }
    assertThat(pending.room()).isLessThanOrEqualTo(4 * 2 * 10);
    // What a cleared interval kept is gone, whether its room was given back or not.
    pending.add(null, null, insert(1, "a", 1));
    assertThat(pending.key(1)).isNull();
    assertThat(pending.prior(1)).isNull();
  }

  @Test
  void aChangeLargerThanTheChunkItWouldReuseGetsALargerOne() {
    for (int i = 0; i < 10_000; i++) {
      pending.add(null, null, insert(i, "name-" + i, i + 1));
    }
    pending.clear();
    long held = pending.chunkBytes();

    String large = "y".repeat(1 << 20);
    pending.add(null, null, insert(1, "a", 1));
    pending.add(null, null, insert(2, "b".repeat(70_000), 2));
    pending.add(null, null, insert(3, large, 3));

    assertThat(pending.chunkBytes()).isGreaterThan(held);
    assertSameChange(pending.event(1), insert(1, "a", 1));
    assertSameChange(pending.event(2), insert(2, "b".repeat(70_000), 2));
    assertSameChange(pending.event(3), insert(3, large, 3));
  }

  private static void assertSameChange(ChangeEvent actual, ChangeEvent expected) {
    assertThat(actual.table()).isEqualTo(expected.table());
    assertThat(actual.operation()).isEqualTo(expected.operation());
    assertThat(actual.key()).isEqualTo(expected.key());
    assertThat(actual.sequence()).isEqualTo(expected.sequence());
    if (expected.operation() == Operation.DELETE) {
      assertThat(actual.after()).isNull();
      assertThat(actual.before().getLong(0)).isEqualTo(expected.before().getLong(0));
    } else {
      assertThat(actual.after().getLong(0)).isEqualTo(expected.after().getLong(0));
      assertThat(actual.after().getString(1)).isEqualTo(expected.after().getString(1));
    }
  }
}
