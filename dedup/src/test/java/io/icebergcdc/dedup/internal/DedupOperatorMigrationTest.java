package io.icebergcdc.dedup.internal;

import static io.icebergcdc.cdc.TestChanges.insert;
import static io.icebergcdc.cdc.TestChanges.update;
import static org.assertj.core.api.Assertions.assertThat;

import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.ChangeStats;
import io.icebergcdc.cdc.RowKey;
import io.icebergcdc.dedup.Dedup;
import java.nio.file.Path;
import java.util.List;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.apache.flink.streaming.util.OperatorSnapshotUtil;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The dedup operator restores the state that earlier builds wrote ({@link DedupSnapshots}, kept
 * under {@code src/test/resources/snapshot/<build>/}): each key's applied sequence, fingerprint and
 * tombstone survive, in the in-memory index (heap backend, raw keyed state) and in keyed state
 * (RocksDB).
 */
class DedupOperatorMigrationTest {

  /** The builds whose state is kept, oldest first. */
  private static final List<String> BUILDS = List.of("before-composition");

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"hashmap", "rocksdb"})
  void restoresTheStateOfEarlierBuilds(String backend) throws Exception {
    String written = System.getProperty("dedup.write-snapshots");
    if (written != null) {
      DedupSnapshots.write(Path.of(written), backend);
    }
    for (String build : BUILDS) {
      String resource =
          getClass()
              .getResource("/snapshot/" + build + "/" + DedupSnapshots.file(backend))
              .getPath();
      OperatorSubtaskState state = OperatorSnapshotUtil.readStateHandle(resource);
      try (KeyedOneInputStreamOperatorTestHarness<RowKey, ChangeEvent, ChangeEvent> harness =
          DedupSnapshots.harness(backend, DedupSnapshots.WRITTEN_AT + 1000)) {
        harness.initializeState(state);
        harness.open();
        for (ChangeEvent change :
            List.of(
                // The same change as applied: a duplicate.
                update(2, "y", 20),
                // Older than what each key holds: stale, the deleted key's too.
                update(1, "old", 5),
                insert(3, "old", 5),
                // Newer: applied, as an update of the row that exists.
                update(1, "b", 30),
                insert(3, "back", 30))) {
          harness.processElement(new StreamRecord<>(change));
        }
        harness.prepareSnapshotPreBarrier(2);

        assertThat(
                harness.extractOutputValues().stream()
                    .map(e -> e.operation() + " " + e.keyRow().getLong(0))
                    .toList())
            .as(build)
            .containsExactlyInAnyOrder("UPDATE 1", "INSERT 3");
        ChangeStats stats = harness.getSideOutput(Dedup.STATS).poll().getValue();
        assertThat(stats.duplicatesDropped()).as(build).isEqualTo(1);
        assertThat(stats.staleDropped()).as(build).isEqualTo(2);
      }
    }
  }
}
