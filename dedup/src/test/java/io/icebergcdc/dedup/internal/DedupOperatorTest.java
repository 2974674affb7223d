package io.icebergcdc.dedup.internal;

import static io.icebergcdc.cdc.TestChanges.delete;
import static io.icebergcdc.cdc.TestChanges.insert;
import static io.icebergcdc.cdc.TestChanges.update;
import static io.icebergcdc.cdc.TestChanges.updateWithoutName;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.ChangeStats;
import io.icebergcdc.cdc.DeadLetter;
import io.icebergcdc.cdc.Operation;
import io.icebergcdc.cdc.RowKey;
import io.icebergcdc.cdc.SourceSequence;
import io.icebergcdc.cdc.TestChanges;
import io.icebergcdc.cdc.typeutils.RowKeyTypeInfo;
import io.icebergcdc.dedup.AmbiguousChangeException;
import io.icebergcdc.dedup.AmbiguousChangePolicy;
import io.icebergcdc.dedup.Dedup;
import java.time.Duration;
import java.util.List;
import java.util.stream.Collectors;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.runtime.state.hashmap.HashMapStateBackend;
import org.apache.flink.state.rocksdb.EmbeddedRocksDBStateBackend;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.AbstractStreamOperatorTestHarness;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class DedupOperatorTest {

  private static final Duration TTL = Duration.ofHours(1);
  private static final KeySelector<ChangeEvent, RowKey> BY_KEY = ChangeEvent::key;

  private KeyedOneInputStreamOperatorTestHarness<RowKey, ChangeEvent, ChangeEvent> harness;
  private long checkpointId;

  @AfterEach
  void close() throws Exception {
    if (harness != null) {
      harness.close();
    }
  }

  private KeyedOneInputStreamOperatorTestHarness<RowKey, ChangeEvent, ChangeEvent> open(
      AmbiguousChangePolicy policy, StateBackend backend, OperatorSubtaskState restoreFrom)
      throws Exception {
    harness =
        new KeyedOneInputStreamOperatorTestHarness<>(
            new DedupOperator(TestChanges.CHANGE_SCHEMA, TTL, policy),
            BY_KEY,
            RowKeyTypeInfo.INSTANCE);
    harness.setStateBackend(backend);
    if (restoreFrom != null) {
      harness.initializeState(restoreFrom);
    }
    harness.open();
    return harness;
  }

  private void open() throws Exception {
    open(AmbiguousChangePolicy.FAIL, new HashMapStateBackend(), null);
  }

  /** Sets the processing time of state time-to-live, in keyed state and in the in-memory index. */
  private void time(long millis) {
    harness.setStateTtlProcessingTime(millis);
    ((DedupOperator) harness.getOperator()).useClock(() -> millis);
  }

  private void feed(ChangeEvent... events) throws Exception {
    for (ChangeEvent event : events) {
      harness.processElement(new StreamRecord<>(event));
    }
  }

  /** Ends the checkpoint interval and returns what it emitted, clearing the output. */
  private List<String> checkpoint() throws Exception {
    harness.prepareSnapshotPreBarrier(++checkpointId);
    List<String> out =
        harness.extractOutputValues().stream()
            .map(e -> e.operation() + " " + e.keyRow().getLong(0) + " " + name(e))
            .collect(Collectors.toList());
    harness.getOutput().clear();
    return out;
  }

  private static String name(ChangeEvent e) {
    return e.operation().isUpsert() ? String.valueOf(e.after().getString(1)) : "-";
  }

  private List<ChangeStats> stats() {
    List<ChangeStats> stats =
        harness.getSideOutput(Dedup.STATS).stream()
            .map(StreamRecord::getValue)
            .collect(Collectors.toList());
    harness.getSideOutput(Dedup.STATS).clear();
    return stats;
  }

  /** A change without a source sequence, to be ordered by its arrival. */
  private static ChangeEvent arriving(ChangeEvent change) {
    return change.withSequence(SourceSequence.arrival());
  }

  @Test
  void changesWithoutASequenceAreOrderedByArrivalAcrossCheckpointsAndRestores() throws Exception {
    open();
    feed(arriving(insert(1, "a", 0)), arriving(update(1, "b", 0)), arriving(insert(2, "x", 0)));
    assertThat(checkpoint()).containsExactly("INSERT 1 b", "INSERT 2 x");
    // Numbered per key: nothing is stale or a duplicate, and no position is reported.
    ChangeStats first = stats().get(0);
    assertThat(first.staleDropped() + first.duplicatesDropped()).isZero();
    assertThat(first.lastSourcePosition()).isNull();

    OperatorSubtaskState state = harness.snapshot(checkpointId, 0);
    harness.close();
    open(AmbiguousChangePolicy.FAIL, new HashMapStateBackend(), state);
    feed(arriving(update(1, "c", 0)), arriving(delete(2, 0)), arriving(update(1, "b", 0)));
    assertThat(checkpoint()).containsExactly("UPDATE 1 b", "DELETE 2 -");
  }

  @Test
  void latestSequenceWinsWhateverTheArrivalOrder() throws Exception {
    open();
    feed(insert(1, "a", 10), update(1, "c", 30), update(1, "b", 20), insert(2, "x", 5));

    assertThat(checkpoint()).containsExactly("INSERT 1 c", "INSERT 2 x");
    ChangeStats stats = stats().get(0);
    assertThat(stats.staleDropped()).isEqualTo(1);
    assertThat(stats.inserted()).isEqualTo(2);
    assertThat(stats.lastSourcePosition()).isEqualTo(SourceSequence.postgresLsn(30));
  }

  /**
   * Ordered by a sequence column, a delete carries the value of the row it deletes (a Debezium
   * delete's before-image, a Flink SQL {@code DELETE}): the same value as the change that wrote
   * that row, and it comes after it, whichever arrives first; not an ambiguous pair.
   */
  @Test
  void aDeleteByASequenceColumnFollowsTheChangeThatWroteItsRow() throws Exception {
    open();
    feed(columnOrdered(insert(1, "a", 0), 10), columnOrdered(insert(2, "x", 0), 20));
    assertThat(checkpoint()).containsExactly("INSERT 1 a", "INSERT 2 x");
    feed(columnOrdered(deleteOf(insert(1, "a", 0)), 10));
    assertThat(checkpoint()).containsExactly("DELETE 1 -");

    // The delete first: the write of the row it deleted, delivered late, is older, and dropped,
    // in the same interval and in a later one; the delete delivered again is a duplicate.
    feed(
        columnOrdered(deleteOf(insert(3, "c", 0)), 30),
        columnOrdered(insert(3, "c", 0), 30),
        columnOrdered(deleteOf(insert(1, "a", 0)), 10),
        columnOrdered(update(2, "y", 0), 21));
    assertThat(checkpoint()).containsExactlyInAnyOrder("DELETE 3 -", "UPDATE 2 y");
    feed(columnOrdered(insert(1, "a", 0), 10));
    assertThat(checkpoint()).isEmpty();
    long stale = 0;
    long duplicates = 0;
    for (ChangeStats stats : stats()) {
      stale += stats.staleDropped();
      duplicates += stats.duplicatesDropped();
    }
    assertThat(stale).isEqualTo(2);
    assertThat(duplicates).isEqualTo(1);
  }

  /**
   * Another row written at the value of a row deleted (a delete and an insert of one key in one
   * tick of a timestamp, a query's retraction and its new row at the same value): the value does
   * not order the two, so it is ambiguous, not taken as the deleted row's write delivered late.
   */
  @Test
  void anotherRowWrittenAtTheValueOfTheRowDeletedIsAmbiguous() throws Exception {
    open();
    feed(columnOrdered(insert(1, "a", 0), 10));
    feed(columnOrdered(deleteOf(insert(1, "a", 0)), 10));
    assertThatThrownBy(() -> feed(columnOrdered(insert(1, "b", 0), 10)))
        .isInstanceOf(AmbiguousChangeException.class)
        .hasMessageContaining("id=1")
        .hasMessageContaining("sequence=10");
    open();
    feed(columnOrdered(insert(2, "a", 0), 10));
    feed(columnOrdered(deleteOf(insert(2, "a", 0)), 10));
    checkpoint();
    assertThatThrownBy(() -> feed(columnOrdered(insert(2, "b", 0), 10)))
        .isInstanceOf(AmbiguousChangeException.class)
        .hasMessageContaining("id=2");
  }

  /** The delete of the row {@code write} leaves, as a source sends it: the row as its before. */
  private static ChangeEvent deleteOf(ChangeEvent write) {
    return new ChangeEvent(
        write.table(),
        io.icebergcdc.cdc.Operation.DELETE,
        write.key(),
        write.after(),
        null,
        write.sequence(),
        0L);
  }

  /** {@code change} ordered by a sequence column of {@code value}, read from its row. */
  private static ChangeEvent columnOrdered(ChangeEvent change, long value) {
    SourceSequence sequence = SourceSequence.column(value);
    return change.withSequence(
        change.operation() == io.icebergcdc.cdc.Operation.DELETE
            ? sequence.ofDeletedRow()
            : sequence);
  }

  /**
   * Upsert records, ordered by their Kafka offsets: within a partition by offset; a key whose
   * record comes in another partition (a topic given more partitions) takes it as its later change,
   * to a lower partition too, where ordering by partition first dropped every later change.
   */
  @Test
  void aKeysRecordInAnotherKafkaPartitionIsItsLaterChange() throws Exception {
    open();
    feed(
        insert(1, "a", 0).withSequence(SourceSequence.kafkaOffset(2, 900)),
        update(1, "stale", 0).withSequence(SourceSequence.kafkaOffset(2, 899)));
    assertThat(checkpoint()).containsExactly("INSERT 1 a");
    feed(update(1, "moved", 0).withSequence(SourceSequence.kafkaOffset(1, 5)));
    assertThat(checkpoint()).containsExactly("UPDATE 1 moved");
    feed(
        update(1, "older in 1", 0).withSequence(SourceSequence.kafkaOffset(1, 4)),
        update(1, "later in 1", 0).withSequence(SourceSequence.kafkaOffset(1, 6)));
    assertThat(checkpoint()).containsExactly("UPDATE 1 later in 1");
  }

  /**
   * With their timestamps, a key's records in two partitions are ordered by them: a backlog of the
   * partition a key left, read after its new partition, does not put the key back.
   */
  @Test
  void aKeysRecordsInTwoKafkaPartitionsAreOrderedByTheirTimestamps() throws Exception {
    open();
    feed(
        insert(1, "new partition", 0).withSequence(SourceSequence.kafkaOffset(3, 0, 2_000)),
        update(1, "old partition's backlog", 0)
            .withSequence(SourceSequence.kafkaOffset(1, 40, 1_000)));
    assertThat(checkpoint()).containsExactly("INSERT 1 new partition");
    stats();
    // The same record again without its timestamp (a position of an earlier build's state): a
    // duplicate, by its partition and offset.
    feed(insert(1, "new partition", 0).withSequence(SourceSequence.kafkaOffset(3, 0)));
    assertThat(checkpoint()).isEmpty();
    assertThat(stats().get(0).duplicatesDropped()).isEqualTo(1);
    feed(update(1, "backlog, later", 0).withSequence(SourceSequence.kafkaOffset(1, 41, 1_500)));
    assertThat(checkpoint()).isEmpty();
    feed(update(1, "moved back", 0).withSequence(SourceSequence.kafkaOffset(1, 42, 3_000)));
    assertThat(checkpoint()).containsExactly("UPDATE 1 moved back");
  }

  @Test
  void olderChangeArrivingInALaterCheckpointIsDropped() throws Exception {
    open();
    feed(update(1, "new", 20));
    assertThat(checkpoint()).containsExactly("INSERT 1 new");
    feed(update(1, "old", 10));
    assertThat(checkpoint()).isEmpty();
    stats();
    feed(update(1, "newer", 30));
    assertThat(checkpoint()).containsExactly("UPDATE 1 newer");
  }

  @Test
  void exactDuplicatesAreDroppedAndCounted() throws Exception {
    open();
    feed(insert(1, "a", 10), insert(1, "a", 10));
    assertThat(checkpoint()).containsExactly("INSERT 1 a");
    feed(insert(1, "a", 10), delete(2, 7), delete(2, 7));
    assertThat(checkpoint()).containsExactly("DELETE 2 -");
    List<ChangeStats> stats = stats();
    assertThat(stats.get(0).duplicatesDropped()).isEqualTo(1);
    assertThat(stats.get(1).duplicatesDropped()).isEqualTo(2);
    assertThat(stats.get(1).deleted()).isEqualTo(1);
  }

  @Test
  void changesOfOneCheckpointCollapseToTheNetChange() throws Exception {
    open();
    feed(insert(1, "a", 1), update(1, "b", 2), update(1, "c", 3));
    assertThat(checkpoint()).containsExactly("INSERT 1 c");

    feed(update(1, "d", 4), update(1, "e", 5));
    assertThat(checkpoint()).containsExactly("UPDATE 1 e");

    feed(delete(1, 6), insert(1, "f", 7));
    assertThat(checkpoint()).containsExactly("UPDATE 1 f");

    feed(update(1, "g", 8), delete(1, 9));
    assertThat(checkpoint()).containsExactly("DELETE 1 -");

    // Known deleted, inserted and deleted again: nothing to write.
    feed(insert(1, "h", 10), delete(1, 11));
    assertThat(checkpoint()).isEmpty();

    feed(insert(1, "i", 12));
    assertThat(checkpoint()).containsExactly("INSERT 1 i");
  }

  @Test
  void aKeyNeverSeenThatIsInsertedAndDeletedStillDeletesIt() throws Exception {
    // The table may hold the key from before the job: the delete must reach it.
    open();
    feed(insert(1, "a", 1), delete(1, 2));
    assertThat(checkpoint()).containsExactly("DELETE 1 -");
  }

  @Test
  void tombstoneKeepsALateOlderChangeFromBringingTheRowBack() throws Exception {
    open();
    feed(insert(1, "a", 10));
    checkpoint();
    feed(delete(1, 20));
    assertThat(checkpoint()).containsExactly("DELETE 1 -");
    feed(update(1, "late", 15), delete(1, 20));
    assertThat(checkpoint()).isEmpty();
  }

  @Test
  void afterTheTombstoneExpiresALateOlderChangeAppliesAgain() throws Exception {
    open();
    time(0);
    feed(insert(1, "a", 10), delete(1, 20));
    checkpoint();

    time(TTL.toMillis() - 1);
    feed(update(1, "late", 15));
    assertThat(checkpoint()).isEmpty();

    time(TTL.toMillis() + 1);
    feed(update(1, "late", 15));
    assertThat(checkpoint()).containsExactly("INSERT 1 late");
  }

  @Test
  void aTombstoneThatExpiresWhileItsKeyHasChangesPendingStillYieldsOneNetChange() throws Exception {
    open();
    time(0);
    feed(insert(1, "a", 10), delete(1, 20));
    checkpoint();

    // The first change meets the tombstone; the second comes after it would have expired.
    time(TTL.toMillis() - 1);
    feed(update(1, "b", 30));
    time(TTL.toMillis() + 1);
    feed(update(1, "c", 40));
    assertThat(checkpoint()).containsExactly("INSERT 1 c");
  }

  @Test
  void liveKeysNeverExpire() throws Exception {
    open();
    time(0);
    feed(insert(1, "a", 10));
    checkpoint();
    time(TTL.toMillis() * 10);
    feed(update(1, "old", 5));
    assertThat(checkpoint()).isEmpty();
  }

  @Test
  void twoDifferentChangesAtOneSequenceFailNamingTableKeyAndSequence() throws Exception {
    open();
    feed(insert(1, "a", 10));
    assertThatThrownBy(() -> feed(update(1, "b", 10)))
        .isInstanceOf(AmbiguousChangeException.class)
        .hasMessageContaining("db.items")
        .hasMessageContaining("id=1")
        .hasMessageContaining("lsn=0/A")
        .hasMessageContaining("--on-ambiguous-change dead_letter");
  }

  @Test
  void ambiguousChangesGoToTheDeadLetterOutputWhenAsked() throws Exception {
    open(AmbiguousChangePolicy.DEAD_LETTER, new HashMapStateBackend(), null);
    feed(insert(1, "a", 10), update(1, "b", 10), delete(1, 10));

    assertThat(checkpoint()).containsExactly("INSERT 1 a");
    List<DeadLetter> letters =
        harness.getSideOutput(Dedup.DEAD_LETTERS).stream()
            .map(StreamRecord::getValue)
            .collect(Collectors.toList());
    assertThat(letters).hasSize(2);
    assertThat(letters.get(0).origin()).contains("id=1").contains("lsn=0/A");
    assertThat(letters.get(0).reason()).contains("ambiguous");
    // The refused change's values, not the row object's name.
    assertThat(letters.get(0).record()).contains("id=1").contains("b").doesNotContain("RowData@");
    assertThat(stats().get(0).deadLettered()).isEqualTo(2);
  }

  /**
   * A job started without state on a table at LSN 20 drops the changes at or before it (not a
   * snapshot read, which shows the database as it is now), and keeps that position across a restore
   * of its own checkpoint for the keys its state does not know.
   */
  @Test
  void aJobWithoutStateDropsChangesAtOrBeforeTheTablesPositionAndKeepsItAcrossARestore()
      throws Exception {
    harness =
        new KeyedOneInputStreamOperatorTestHarness<>(
            withTablePosition(SourceSequence.postgresLsn(20)), BY_KEY, RowKeyTypeInfo.INSTANCE);
    harness.setStateBackend(new HashMapStateBackend());
    harness.open();
    feed(
        insert(1, "old", 10),
        insert(2, "at", 20),
        insert(3, "new", 30),
        insert(4, "snapshot", 5).withOperation(io.icebergcdc.cdc.Operation.SNAPSHOT_READ));
    assertThat(checkpoint()).containsExactlyInAnyOrder("INSERT 3 new", "INSERT 4 snapshot");
    assertThat(stats().get(0).staleDropped()).isEqualTo(2);
    OperatorSubtaskState state = harness.snapshot(checkpointId, 0);
    harness.close();

    // Restored, without being told the position again: it comes from the state.
    open(AmbiguousChangePolicy.FAIL, new HashMapStateBackend(), state);
    feed(insert(1, "still old", 15), update(3, "newer", 40), insert(5, "later", 25));
    assertThat(checkpoint()).containsExactlyInAnyOrder("UPDATE 3 newer", "INSERT 5 later");
    assertThat(stats().get(0).staleDropped()).isEqualTo(1);
  }

  /** A row read by the job's chunked snapshot beside the log. */
  private static ChangeEvent chunkRead(long id, String name) {
    return insert(id, name, 0)
        .withOperation(Operation.SNAPSHOT_READ)
        .withSequence(SourceSequence.beforeLog(SourceSequence.Kind.POSTGRES_LSN));
  }

  /**
   * A row of the chunked snapshot loses to every change the log delivers for its key, before or
   * after it, in one checkpoint or across a restore; it is not dropped by the table's position.
   */
  @ParameterizedTest
  @CsvSource({"hashmap", "rocksdb"})
  void aSnapshotReadLosesToEveryChangeOfTheLogWhicheverArrivesFirst(String backend)
      throws Exception {
    harness =
        new KeyedOneInputStreamOperatorTestHarness<>(
            withTablePosition(SourceSequence.postgresLsn(20)), BY_KEY, RowKeyTypeInfo.INSTANCE);
    harness.setStateBackend(backend(backend));
    harness.open();
    // Key 1: the log's change first; key 2: the read first; key 3 deleted by the log; key 4 only
    // read; key 5 read, then updated by the log at a position the table already holds.
    feed(update(1, "log", 30), chunkRead(1, "read"), chunkRead(2, "read"), update(2, "log", 31));
    feed(delete(3, 32), chunkRead(3, "read"), chunkRead(4, "read"));
    feed(chunkRead(5, "read"), update(5, "log", 15));
    assertThat(checkpoint())
        .containsExactlyInAnyOrder(
            "INSERT 1 log", "INSERT 2 log", "DELETE 3 -", "INSERT 4 read", "INSERT 5 log");
    assertThat(stats().get(0).staleDropped()).isEqualTo(2);
    OperatorSubtaskState state = harness.snapshot(checkpointId, 0);
    harness.close();

    // A chunk read again after a restore changes nothing the log has reached.
    open(AmbiguousChangePolicy.FAIL, backend(backend), state);
    feed(chunkRead(1, "read again"), chunkRead(3, "read again"), chunkRead(4, "read"));
    feed(chunkRead(6, "read"), update(4, "log", 40));
    // A chunk read again from its start (a table whose key cannot bound chunks) reads what the
    // database holds now; it replaces the earlier read, never a change of the log.
    feed(chunkRead(7, "read"));
    assertThat(checkpoint())
        .containsExactlyInAnyOrder("INSERT 6 read", "UPDATE 4 log", "INSERT 7 read");
    ChangeStats stats = stats().get(0);
    assertThat(stats.staleDropped()).isEqualTo(2);
    assertThat(stats.duplicatesDropped()).isEqualTo(1);
    assertThat(stats.lastSourcePosition()).isEqualTo(SourceSequence.postgresLsn(40));
    feed(chunkRead(7, "read again, changed"), chunkRead(8, "only reads"));
    assertThat(checkpoint())
        .containsExactlyInAnyOrder("UPDATE 7 read again, changed", "INSERT 8 only reads");
    // A checkpoint of snapshot reads only holds no position of the log.
    assertThat(stats().get(0).lastSourcePosition()).isNull();
  }

  /**
   * An update without a value the source did not send (PostgreSQL's unchanged TOASTed value) takes
   * it from the key's earlier change of the interval, or from a snapshot read of a key without a
   * row; two deliveries of it are one change; where nothing can give the value, the job fails
   * naming the key and the column instead of writing a row without it.
   */
  @ParameterizedTest
  @CsvSource({"hashmap", "rocksdb"})
  void anUpdateLackingAValueTakesItFromTheKeysEarlierChangeOrItsSnapshotRead(String backend)
      throws Exception {
    open(AmbiguousChangePolicy.FAIL, backend(backend), null);
    feed(insert(1, "large", 10), updateWithoutName(1, 11));
    feed(insert(2, "kept", 12), updateWithoutName(2, 13), updateWithoutName(2, 13));
    feed(insert(3, "first", 14), updateWithoutName(3, 15), updateWithoutName(3, 16));
    feed(update(4, "set", 17), updateWithoutName(4, 18), update(4, "set again", 19));
    // The log's update of a row not yet read by the snapshot, then the read: the read loses, but
    // lends the value the update lacks.
    feed(updateWithoutName(5, 20), chunkRead(5, "read"));
    assertThat(checkpoint())
        .containsExactlyInAnyOrder(
            "INSERT 1 large",
            "INSERT 2 kept",
            "INSERT 3 first",
            "INSERT 4 set again",
            "INSERT 5 read");
    ChangeStats stats = stats().get(0);
    assertThat(stats.duplicatesDropped()).isEqualTo(1);
    assertThat(stats.staleDropped()).isEqualTo(1);

    // Across a restore, a delivery again of a change that was filled is still a duplicate.
    OperatorSubtaskState state = harness.snapshot(checkpointId, 0);
    harness.close();
    open(AmbiguousChangePolicy.FAIL, backend(backend), state);
    feed(updateWithoutName(2, 13));
    assertThat(checkpoint()).isEmpty();
    assertThat(stats().get(0).duplicatesDropped()).isEqualTo(1);

    // The dedup alone does not know the table's rows: the writer of equality deletes cannot fill.
    feed(updateWithoutName(1, 30));
    assertThatThrownBy(this::checkpoint)
        .hasMessageContaining("table db.items, key id=1")
        .hasMessageContaining("lacks the values of 'name'")
        .hasMessageContaining("REPLICA IDENTITY FULL");
  }

  private static DedupOperator withTablePosition(SourceSequence position) {
    DedupOperator dedup =
        new DedupOperator(TestChanges.CHANGE_SCHEMA, TTL, AmbiguousChangePolicy.FAIL);
    dedup.setTablePosition(position);
    return dedup;
  }

  @Test
  void endOfInputFlushesThePendingChanges() throws Exception {
    open();
    feed(insert(1, "a", 1), insert(2, "b", 2));
    harness.endInput();
    assertThat(harness.extractOutputValues())
        .extracting(ChangeEvent::operation)
        .containsExactly(Operation.INSERT, Operation.INSERT);
  }

  /**
   * With the heap backend the entries are in the in-memory index (raw keyed state), with RocksDB in
   * keyed state; a restart may switch backends, and the entries move along.
   */
  @ParameterizedTest
  @CsvSource({"hashmap, hashmap", "rocksdb, rocksdb", "hashmap, rocksdb", "rocksdb, hashmap"})
  void restoredStateKeepsOrderingAcrossTheRestart(String backend, String restoredBackend)
      throws Exception {
    open(AmbiguousChangePolicy.FAIL, backend(backend), null);
    feed(insert(1, "a", 10), insert(2, "b", 10));
    checkpoint();
    feed(delete(2, 20));
    checkpoint();
    // Switching backends takes a savepoint in the canonical format.
    OperatorSubtaskState snapshot =
        backend.equals(restoredBackend)
            ? harness.snapshot(checkpointId, 0)
            : harness
                .snapshotWithLocalState(
                    checkpointId,
                    0,
                    org.apache.flink.runtime.checkpoint.SavepointType.savepoint(
                        org.apache.flink.core.execution.SavepointFormatType.CANONICAL))
                .getJobManagerOwnedState();
    // Changes after the snapshot are lost with the failure and replayed by the source.
    feed(update(1, "lost", 30));
    harness.close();

    open(AmbiguousChangePolicy.FAIL, backend(restoredBackend), snapshot);
    feed(update(1, "stale", 5), insert(2, "stale", 15), update(1, "a", 10));
    assertThat(checkpoint()).isEmpty();
    feed(update(1, "replayed", 30), insert(2, "back", 25));
    assertThat(checkpoint()).containsExactly("UPDATE 1 replayed", "INSERT 2 back");
    ChangeStats stats = stats().get(0);
    assertThat(stats.staleDropped()).isEqualTo(2);
    assertThat(stats.duplicatesDropped()).isEqualTo(1);
  }

  @Test
  void anIndexGrownBeyondItsLimitMovesIntoKeyedStateAndKeepsOrdering() throws Exception {
    open();
    ((DedupOperator) harness.getOperator()).setIndexMaxKeys(2);
    feed(insert(1, "a", 10), insert(2, "b", 10), insert(3, "c", 10));
    checkpoint();
    feed(delete(3, 20));
    checkpoint();
    // The index holds three keys, more than two: the snapshot moves them into keyed state.
    OperatorSubtaskState snapshot = harness.snapshot(checkpointId, 0);
    assertThat(snapshot.getRawKeyedState()).isEmpty();
    assertThat(snapshot.getManagedKeyedState()).isNotEmpty();
    feed(update(1, "after the move", 30));
    assertThat(checkpoint()).containsExactly("UPDATE 1 after the move");
    harness.close();

    // Restored, three keys are too many for the index too: they stay in keyed state.
    DedupOperator restored =
        new DedupOperator(TestChanges.CHANGE_SCHEMA, TTL, AmbiguousChangePolicy.FAIL);
    restored.setIndexMaxKeys(2);
    harness =
        new KeyedOneInputStreamOperatorTestHarness<>(restored, BY_KEY, RowKeyTypeInfo.INSTANCE);
    harness.setStateBackend(new HashMapStateBackend());
    harness.initializeState(snapshot);
    harness.open();
    feed(update(1, "stale", 5), insert(3, "stale", 15), update(2, "b2", 11));
    assertThat(checkpoint()).containsExactly("UPDATE 2 b2");
    assertThat(stats().get(0).staleDropped()).isEqualTo(2);
  }

  @Test
  void aKeyLimitOfZeroKeepsTheEntriesInKeyedStateFromTheStart() throws Exception {
    DedupOperator operator =
        new DedupOperator(TestChanges.CHANGE_SCHEMA, TTL, AmbiguousChangePolicy.FAIL);
    operator.setIndexMaxKeys(0);
    harness =
        new KeyedOneInputStreamOperatorTestHarness<>(operator, BY_KEY, RowKeyTypeInfo.INSTANCE);
    harness.setStateBackend(new HashMapStateBackend());
    harness.open();
    checkpoint();
    assertThat(harness.snapshot(checkpointId, 0).getRawKeyedState()).isEmpty();
    feed(insert(1, "a", 10));
    checkpoint();
    OperatorSubtaskState snapshot = harness.snapshot(checkpointId, 0);
    assertThat(snapshot.getRawKeyedState()).isEmpty();
    assertThat(snapshot.getManagedKeyedState()).isNotEmpty();
    feed(update(1, "stale", 5), update(1, "b", 20));
    assertThat(checkpoint()).containsExactly("UPDATE 1 b");
    assertThatThrownBy(() -> operator.setIndexMaxKeys(-1))
        .hasMessageContaining("'dedup.index.max-keys' is -1");
  }

  @Test
  void theEntriesAreRedistributedByKeyGroupWhenTheDedupIsRescaled() throws Exception {
    int maxParallelism = 128;
    var single =
        new KeyedOneInputStreamOperatorTestHarness<>(
            new DedupOperator(TestChanges.CHANGE_SCHEMA, TTL, AmbiguousChangePolicy.FAIL),
            BY_KEY,
            RowKeyTypeInfo.INSTANCE,
            maxParallelism,
            1,
            0);
    single.setStateBackend(new HashMapStateBackend());
    single.open();
    for (int id = 1; id <= 40; id++) {
      single.processElement(new StreamRecord<>(insert(id, "a", 10)));
      if (id % 4 == 0) {
        single.processElement(new StreamRecord<>(delete(id, 20)));
      }
    }
    single.prepareSnapshotPreBarrier(1);
    OperatorSubtaskState state = single.snapshot(1, 0);
    single.close();

    long stale = 0;
    for (int subtask = 0; subtask < 2; subtask++) {
      var part =
          new KeyedOneInputStreamOperatorTestHarness<>(
              new DedupOperator(TestChanges.CHANGE_SCHEMA, TTL, AmbiguousChangePolicy.FAIL),
              BY_KEY,
              RowKeyTypeInfo.INSTANCE,
              maxParallelism,
              2,
              subtask);
      part.setStateBackend(new HashMapStateBackend());
      part.initializeState(
          AbstractStreamOperatorTestHarness.repartitionOperatorState(
              state, maxParallelism, 1, 2, subtask));
      part.open();
      int fed = 0;
      for (int id = 1; id <= 40; id++) {
        ChangeEvent late = id % 4 == 0 ? insert(id, "back", 15) : update(id, "stale", 5);
        if (KeyGroupRangeAssignment.assignKeyToParallelOperator(late.key(), maxParallelism, 2)
            == subtask) {
          part.processElement(new StreamRecord<>(late));
          fed++;
        }
      }
      part.prepareSnapshotPreBarrier(2);
      assertThat(part.extractOutputValues()).as("subtask %d", subtask).isEmpty();
      assertThat(fed).isPositive();
      stale +=
          part.getSideOutput(Dedup.STATS).stream()
              .mapToLong(r -> r.getValue().staleDropped())
              .sum();
      part.close();
    }
    // Every late change met its key's entry, on the subtask that now owns its key group.
    assertThat(stale).isEqualTo(40);
  }

  private static StateBackend backend(String name) {
    return name.equals("rocksdb") ? new EmbeddedRocksDBStateBackend() : new HashMapStateBackend();
  }
}
