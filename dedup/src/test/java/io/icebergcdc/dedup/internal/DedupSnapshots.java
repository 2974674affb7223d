package io.icebergcdc.dedup.internal;

import static io.icebergcdc.cdc.TestChanges.delete;
import static io.icebergcdc.cdc.TestChanges.insert;

import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.RowKey;
import io.icebergcdc.cdc.TestChanges;
import io.icebergcdc.cdc.typeutils.RowKeyTypeInfo;
import io.icebergcdc.dedup.AmbiguousChangePolicy;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.runtime.state.hashmap.HashMapStateBackend;
import org.apache.flink.state.rocksdb.EmbeddedRocksDBStateBackend;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.apache.flink.streaming.util.OperatorSnapshotUtil;

/**
 * Writes the dedup operator's state after a fixed history, once per state backend, for {@link
 * DedupOperatorMigrationTest} to restore in later builds: run by a build whose state is to be kept
 * ({@code mvn test -pl dedup -Dtest=DedupOperatorMigrationTest -Ddedup.write-snapshots=<dir>}).
 */
final class DedupSnapshots {

  static final Duration TTL = Duration.ofHours(1);

  /**
   * The processing time the state is written at (and read at, a second later): tombstones' time to
   * live counts from it, so the kept state does not expire with the wall clock.
   */
  static final long WRITTEN_AT = 1_000_000L;

  private DedupSnapshots() {}

  /**
   * Key 1 inserted at 10, key 2 inserted at 10 and updated at 20, key 3 deleted at 10 (a
   * tombstone), all in one checkpoint interval; then the snapshot of checkpoint 1.
   */
  static ChangeEvent[] history() {
    return new ChangeEvent[] {
      insert(1, "a", 10), insert(2, "x", 10), TestChanges.update(2, "y", 20), delete(3, 10)
    };
  }

  static StateBackend backend(String name) {
    return name.equals("rocksdb") ? new EmbeddedRocksDBStateBackend() : new HashMapStateBackend();
  }

  static KeyedOneInputStreamOperatorTestHarness<RowKey, ChangeEvent, ChangeEvent> harness(
      String backend, long now) throws Exception {
    DedupOperator operator =
        new DedupOperator(TestChanges.CHANGE_SCHEMA, TTL, AmbiguousChangePolicy.FAIL);
    operator.useClock(() -> now);
    KeyedOneInputStreamOperatorTestHarness<RowKey, ChangeEvent, ChangeEvent> harness =
        new KeyedOneInputStreamOperatorTestHarness<>(
            operator, ChangeEvent::key, RowKeyTypeInfo.INSTANCE);
    harness.setStateBackend(backend(backend));
    harness.setStateTtlProcessingTime(now);
    return harness;
  }

  /** Writes {@code dedup-operator-<backend>.snapshot} into {@code dir}. */
  static void write(Path dir, String backend) throws Exception {
    try (KeyedOneInputStreamOperatorTestHarness<RowKey, ChangeEvent, ChangeEvent> harness =
        harness(backend, WRITTEN_AT)) {
      harness.open();
      for (ChangeEvent change : history()) {
        harness.processElement(new StreamRecord<>(change));
      }
      harness.prepareSnapshotPreBarrier(1);
      Files.createDirectories(dir);
      OperatorSnapshotUtil.writeStateHandle(
          harness.snapshot(1, 0), dir.resolve(file(backend)).toString());
    }
  }

  static String file(String backend) {
    return "dedup-operator-" + backend + ".snapshot";
  }
}
