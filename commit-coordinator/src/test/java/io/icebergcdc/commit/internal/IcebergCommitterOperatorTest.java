package io.icebergcdc.commit.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.icebergcdc.cdc.ChangeStats;
import io.icebergcdc.cdc.SourceSequence;
import io.icebergcdc.commit.BoundedWrite;
import io.icebergcdc.commit.ChangeCommittable;
import io.icebergcdc.commit.ChangeCommittableSerializer;
import io.icebergcdc.commit.CommitException;
import io.icebergcdc.commit.CommitListener;
import io.icebergcdc.commit.ContentFileCodec;
import io.icebergcdc.commit.MaintenancePolicy;
import io.icebergcdc.commit.Overwrite;
import io.icebergcdc.commit.OwnedFileNames;
import io.icebergcdc.commit.SnapshotSummaryKeys;
import io.icebergcdc.commit.TestTables;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.flink.core.io.SimpleVersionedSerializerTypeSerializerProxy;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.jobgraph.OperatorID;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.OneInputStreamOperatorTestHarness;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataOperations;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.util.SnapshotUtil;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class IcebergCommitterOperatorTest {

  private static final OperatorID OPERATOR_ID = new OperatorID();
  private static final String SINK_TAG = "5eed5eed";

  @TempDir Path warehouse;
  private Table table;
  private final List<OneInputStreamOperatorTestHarness<ChangeCommittable, Void>> harnesses =
      new ArrayList<>();

  @BeforeEach
  void createTable() {
    table = TestTables.create(warehouse);
  }

  @AfterEach
  void closeHarnesses() throws Exception {
    for (var harness : harnesses) {
      harness.close();
    }
  }

  private OneInputStreamOperatorTestHarness<ChangeCommittable, Void> open(
      OperatorSubtaskState restoreFrom, CommitListener listener) throws Exception {
    var harness = harness(listener);
    harness.getStreamConfig().setCheckpointingEnabled(true);
    if (restoreFrom != null) {
      harness.initializeState(restoreFrom);
    } else {
      harness.initializeEmptyState();
    }
    harness.open();
    return harness;
  }

  /** A harness for the committer; all of them share one operator id, as restarts of a job do. */
  private OneInputStreamOperatorTestHarness<ChangeCommittable, Void> harness(
      CommitListener listener) throws Exception {
    return harness(listener, null);
  }

  private OneInputStreamOperatorTestHarness<ChangeCommittable, Void> harness(
      CommitListener listener, Overwrite overwrite) throws Exception {
    return harness(listener, overwrite, BoundedWrite.NONE);
  }

  private OneInputStreamOperatorTestHarness<ChangeCommittable, Void> harness(
      CommitListener listener, Overwrite overwrite, BoundedWrite bounded) throws Exception {
    return harnessOf(
        new IcebergCommitterOperator(
            TestTables.loader(warehouse),
            listener,
            overwrite,
            bounded,
            IcebergCommitterOperator.DEFAULT_CATALOG_RETRY_TIMEOUT));
  }

  /** A harness for a committer whose writers name their files for it, with the maintenance. */
  private OneInputStreamOperatorTestHarness<ChangeCommittable, Void> maintainingHarness(
      CommitListener listener, MaintenancePolicy maintenance) throws Exception {
    return harnessOf(
        new IcebergCommitterOperator(TestTables.loader(warehouse), listener)
            .filesNamedFor(SINK_TAG)
            .maintenance(maintenance));
  }

  private OneInputStreamOperatorTestHarness<ChangeCommittable, Void> harnessOf(
      IcebergCommitterOperator operator) throws Exception {
    var harness =
        new OneInputStreamOperatorTestHarness<>(
            operator,
            1,
            1,
            0,
            new SimpleVersionedSerializerTypeSerializerProxy<>(ChangeCommittableSerializer::new),
            OPERATOR_ID);
    harnesses.add(harness);
    return harness;
  }

  private OneInputStreamOperatorTestHarness<ChangeCommittable, Void> open() throws Exception {
    return open(null, null);
  }

  private ChangeCommittable files(String name, boolean withDeletes, long stale) {
    Map<Integer, org.apache.iceberg.PartitionSpec> specs = table.specs();
    return new ChangeCommittable(
        List.of(ContentFileCodec.encode(TestTables.dataFile(name), specs)),
        withDeletes
            ? List.of(ContentFileCodec.encode(TestTables.equalityDeleteFile(name), specs))
            : List.of(),
        List.of(),
        new ChangeStats(10, 0, withDeletes ? 3 : 0, stale, 1, 0, SourceSequence.postgresLsn(99)));
  }

  private List<Snapshot> snapshots() {
    table.refresh();
    List<Snapshot> result = new ArrayList<>();
    if (table.currentSnapshot() != null) {
      SnapshotUtil.currentAncestors(table).forEach(s -> result.add(0, s));
    }
    return result;
  }

  private List<String> committedCheckpoints() {
    return snapshots().stream()
        .map(s -> s.summary().get(SnapshotSummaryKeys.CHECKPOINT_ID))
        .toList();
  }

  @Test
  void commitsACompletedCheckpointAsOneSnapshotThatSaysWhatItDid() throws Exception {
    var harness = open();
    harness.processElement(new StreamRecord<>(files("a", false, 0)));
    harness.processElement(new StreamRecord<>(files("b", true, 2)));
    harness.processElement(
        new StreamRecord<>(
            ChangeCommittable.ofStats(
                new ChangeStats(0, 5, 0, 4, 0, 0, SourceSequence.postgresLsn(120)))));
    harness.snapshot(1, 1);
    assertThat(snapshots()).isEmpty();

    harness.notifyOfCompletedCheckpoint(1);

    List<Snapshot> snapshots = snapshots();
    assertThat(snapshots).hasSize(1);
    Snapshot snapshot = snapshots.get(0);
    assertThat(snapshot.operation()).isEqualTo(DataOperations.OVERWRITE);
    Map<String, String> summary = snapshot.summary();
    assertThat(summary)
        .containsEntry(SnapshotSummaryKeys.CHECKPOINT_ID, "1")
        .containsEntry(SnapshotSummaryKeys.ROWS_INSERTED, "20")
        .containsEntry(SnapshotSummaryKeys.ROWS_UPDATED, "5")
        .containsEntry(SnapshotSummaryKeys.ROWS_DELETED, "3")
        .containsEntry(SnapshotSummaryKeys.STALE_DROPPED, "6")
        .containsEntry(SnapshotSummaryKeys.DUPLICATES_DROPPED, "2")
        .containsEntry(SnapshotSummaryKeys.SOURCE_POSITION, "lsn=0/78")
        .containsEntry("added-data-files", "2")
        .containsEntry("added-delete-files", "1")
        .containsKey(SnapshotSummaryKeys.JOB_ID)
        .containsKey(SnapshotSummaryKeys.OPERATOR_ID);
  }

  @Test
  void anInsertOnlyCheckpointCommitsAsAnAppend() throws Exception {
    var harness = open();
    harness.processElement(new StreamRecord<>(files("a", false, 0)));
    harness.snapshot(1, 1);
    harness.notifyOfCompletedCheckpoint(1);
    assertThat(snapshots()).extracting(Snapshot::operation).containsExactly(DataOperations.APPEND);
  }

  @Test
  void checkpointsCompletedTogetherCommitInOrderOneSnapshotEach() throws Exception {
    var harness = open();
    harness.processElement(new StreamRecord<>(files("a", true, 0)));
    harness.snapshot(1, 1);
    harness.processElement(new StreamRecord<>(files("b", true, 0)));
    harness.snapshot(2, 2);
    harness.notifyOfCompletedCheckpoint(2);
    assertThat(committedCheckpoints()).containsExactly("1", "2");
    harness.notifyOfCompletedCheckpoint(2);
    assertThat(committedCheckpoints()).containsExactly("1", "2");
  }

  @Test
  void aCheckpointWithoutFilesIsNotCommittedAndItsCountsRideWithTheNext() throws Exception {
    var harness = open();
    harness.processElement(
        new StreamRecord<>(ChangeCommittable.ofStats(new ChangeStats(0, 0, 0, 7, 0, 0, null))));
    harness.snapshot(1, 1);
    harness.notifyOfCompletedCheckpoint(1);
    assertThat(snapshots()).isEmpty();

    harness.processElement(new StreamRecord<>(files("a", false, 1)));
    harness.snapshot(2, 2);
    harness.notifyOfCompletedCheckpoint(2);
    assertThat(snapshots()).hasSize(1);
    assertThat(snapshots().get(0).summary())
        .containsEntry(SnapshotSummaryKeys.CHECKPOINT_ID, "2")
        .containsEntry(SnapshotSummaryKeys.STALE_DROPPED, "8");
  }

  @Test
  void aCommitThatHappenedButWasNotAcknowledgedIsNotRepeatedOnRestore() throws Exception {
    var harness = open();
    harness.processElement(new StreamRecord<>(files("a", true, 0)));
    OperatorSubtaskState state = harness.snapshot(1, 1);
    harness.notifyOfCompletedCheckpoint(1);
    assertThat(committedCheckpoints()).containsExactly("1");

    // The job fails before the committer forgets checkpoint 1; it restores from checkpoint 1.
    var restored = open(state, null);
    assertThat(committedCheckpoints()).containsExactly("1");
    restored.processElement(new StreamRecord<>(files("b", false, 0)));
    restored.snapshot(2, 2);
    restored.notifyOfCompletedCheckpoint(2);
    assertThat(committedCheckpoints()).containsExactly("1", "2");
  }

  @Test
  void aPendingCheckpointIsCommittedOnceOnRestoreEvenIfTheRestoreFailsAgain() throws Exception {
    var harness = open();
    harness.processElement(new StreamRecord<>(files("a", true, 0)));
    harness.snapshot(1, 1);
    harness.processElement(new StreamRecord<>(files("b", true, 0)));
    OperatorSubtaskState state = harness.snapshot(2, 2);
    // Checkpoint 2 completes, but the job fails before the notification reaches the committer.

    open(state, null);
    assertThat(committedCheckpoints()).containsExactly("1", "2");
    // A second failure restores from the same checkpoint: nothing is committed twice.
    open(state, null);
    assertThat(committedCheckpoints()).containsExactly("1", "2");
    assertThat(snapshots().get(1).summary().get("total-data-files")).isEqualTo("2");
  }

  @Test
  void theStateOfATableDroppedAndCreatedAgainIsRefusedOnRestore() throws Exception {
    var harness = open();
    harness.processElement(new StreamRecord<>(files("a", false, 0)));
    OperatorSubtaskState state = harness.snapshot(1, 1);
    String written = table.uuid().toString();
    TestTables.catalog(warehouse).loadCatalog().dropTable(TestTables.ID, true);
    table = TestTables.create(warehouse);

    assertThatThrownBy(() -> open(state, null))
        .hasMessageContaining(table.name())
        .hasMessageContaining(written)
        .hasMessageContaining(table.uuid().toString())
        .hasMessageContaining("pending checkpoints [1]");
    assertThat(snapshots()).isEmpty();
  }

  /**
   * The table rolled back past the job's latest commits, to one of its earlier ones: its pending
   * checkpoint is not committed on top (its state holds the changes the rollback took out).
   */
  @Test
  void aRestoreAfterTheTableRolledBackPastTheJobsLatestCommitsIsRefused() throws Exception {
    var harness = open();
    for (int checkpoint = 1; checkpoint <= 3; checkpoint++) {
      harness.processElement(new StreamRecord<>(files("f" + checkpoint, false, 0)));
      harness.snapshot(checkpoint, checkpoint);
      harness.notifyOfCompletedCheckpoint(checkpoint);
    }
    harness.processElement(new StreamRecord<>(files("f4", false, 0)));
    OperatorSubtaskState state = harness.snapshot(4, 4);
    // Checkpoint 4's commit fails; another engine rolls the table back to checkpoint 1's.
    table.refresh();
    long first = snapshots().get(0).snapshotId();
    table.manageSnapshots().rollbackTo(first).commit();

    assertThatThrownBy(() -> open(state, null))
        .hasMessageContaining(table.name())
        .hasMessageContaining("no longer leads to")
        .hasMessageContaining("pending checkpoints [4]");
    table.refresh();
    assertThat(table.currentSnapshot().snapshotId()).isEqualTo(first);
  }

  /**
   * Another writer's commit rolled back, the job's own all still in the table: the restore commits
   * its pending checkpoint (the snapshot it had seen, the other writer's, is off the table's line
   * now, which says nothing of the job's commits).
   */
  @Test
  void aRestoreAfterAnotherWritersCommitWasRolledBackCommits() throws Exception {
    // The table as read at checkpoint 2, after an idle spell, is the other writer's commit.
    afterIdleSpells(this::anotherWritersCommitRolledBack);
  }

  /**
   * Runs {@code test} as if an idle spell longer than the table as loaded stays fresh came before
   * each checkpoint: the committer reads the table again at every checkpoint with files.
   */
  private static void afterIdleSpells(
      org.apache.flink.util.function.ThrowingRunnable<Exception> test) throws Exception {
    Duration fresh = SnapshotCommitter.seenFreshFor;
    SnapshotCommitter.seenFreshFor = Duration.ZERO;
    try {
      test.run();
    } finally {
      SnapshotCommitter.seenFreshFor = fresh;
    }
  }

  private void anotherWritersCommitRolledBack() throws Exception {
    var harness = open();
    harness.processElement(new StreamRecord<>(files("f1", false, 0)));
    harness.snapshot(1, 1);
    harness.notifyOfCompletedCheckpoint(1);
    table.refresh();
    long jobs = table.currentSnapshot().snapshotId();
    table.newAppend().appendFile(TestTables.dataFile("another-writer")).commit();
    harness.processElement(new StreamRecord<>(files("f2", false, 0)));
    OperatorSubtaskState state = harness.snapshot(2, 2);
    table.manageSnapshots().rollbackTo(jobs).commit();

    open(state, null);
    assertThat(committedCheckpoints()).containsExactly("1", "2");
  }

  @Test
  void aRestoreWhoseCommitsAnotherEngineExpiredIsRefusedRatherThanCommittedTwice()
      throws Exception {
    var harness = open();
    harness.processElement(new StreamRecord<>(files("a", false, 0)));
    OperatorSubtaskState beforeTheTableHadASnapshot = harness.snapshot(1, 1);
    harness.notifyOfCompletedCheckpoint(1);
    harness.processElement(new StreamRecord<>(files("b", false, 0)));
    OperatorSubtaskState state = harness.snapshot(2, 2);
    harness.notifyOfCompletedCheckpoint(2);
    OperatorSubtaskState withNothingPending = harness.snapshot(3, 3);
    // Another engine writes on and expires every snapshot of the job (its own maintenance keeps
    // the job's latest; another engine's does not).
    anotherEngineAppendsAndExpiresAllButItsOwn(3);
    assertThat(committedCheckpoints()).containsOnlyNulls().hasSize(3);
    // A checkpoint without files (a table of the job that did not change) has nothing to commit
    // twice.
    open(withNothingPending, null);

    for (OperatorSubtaskState restoreFrom : List.of(beforeTheTableHadASnapshot, state)) {
      assertThatThrownBy(() -> open(restoreFrom, null))
          .hasMessageContaining(table.name())
          .hasMessageContaining("cannot be told");
    }
    assertThat(committedCheckpoints()).containsOnlyNulls().hasSize(3);
  }

  @Test
  void aRestoreCommitsWhatIsPendingWhereTheHistoryCutShortStillHoldsEverySnapshotSince()
      throws Exception {
    anotherEngineAppendsAndExpiresAllButItsOwn(1);
    anotherEngineAppendsAndExpiresAllButItsOwn(2);
    var harness = open(null, new FailingListener());
    harness.processElement(new StreamRecord<>(files("a", false, 0)));
    OperatorSubtaskState state = harness.snapshot(1, 1);
    assertThatThrownBy(() -> harness.notifyOfCompletedCheckpoint(1));
    table.newAppend().appendFile(TestTables.dataFile("other-after")).commit();
    assertThat(CommitHistory.isTruncated(table)).isTrue();

    open(state, null);
    assertThat(committedCheckpoints()).containsExactly(null, null, null, "1");
  }

  /** Appends {@code count} snapshots of another engine, then expires all snapshots before them. */
  private void anotherEngineAppendsAndExpiresAllButItsOwn(int count) {
    table.refresh();
    List<Long> before = new ArrayList<>();
    table.snapshots().forEach(s -> before.add(s.snapshotId()));
    for (int i = 0; i < count; i++) {
      table
          .newAppend()
          .appendFile(TestTables.dataFile("other-" + before.size() + "-" + i))
          .commit();
    }
    if (!before.isEmpty()) {
      var expire = table.expireSnapshots().cleanExpiredFiles(false);
      before.forEach(expire::expireSnapshotId);
      expire.commit();
    }
    table.refresh();
  }

  @Test
  void aFailedCommitFailsTheJobAndIsCommittedByTheRestore() throws Exception {
    CommitListener failOnce = new FailingListener();
    var harness = open(null, failOnce);
    harness.processElement(new StreamRecord<>(files("a", false, 0)));
    OperatorSubtaskState state = harness.snapshot(1, 1);
    assertThatThrownBy(() -> harness.notifyOfCompletedCheckpoint(1))
        .hasMessageContaining("checkpoint 1")
        .hasMessageContaining(table.name());
    assertThat(snapshots()).isEmpty();

    open(state, null);
    assertThat(committedCheckpoints()).containsExactly("1");
  }

  @Test
  void aRestoreThatFindsEverythingCommittedRemovesTheOrphansTheFailedAttemptLeft()
      throws Exception {
    // Files of this job are orphans once their checkpoint is committed, whatever their age.
    MaintenancePolicy orphansOnly =
        MaintenancePolicy.NONE.withOrphanRemoval(true, Duration.ofDays(3), Duration.ZERO);
    var harness = maintainingHarness(new FailingAfterCommit(2), orphansOnly);
    harness.getStreamConfig().setCheckpointingEnabled(true);
    harness.initializeEmptyState();
    harness.open();
    harness.processElement(new StreamRecord<>(files("a", false, 0)));
    harness.snapshot(1, 1);
    harness.notifyOfCompletedCheckpoint(1);
    // Writers' files for checkpoints 1 and 2 from attempts that failed before handing them over.
    Path data = Path.of(table.location().replaceFirst("^file:", "")).resolve("data");
    Files.createDirectories(data);
    String jobId = harness.getEnvironment().getJobID().toString();
    Path orphan =
        Files.write(
            data.resolve(
                "00000-0-" + OwnedFileNames.operationId(jobId, SINK_TAG, 1) + "-00001.parquet"),
            new byte[] {1});
    Path ofTheRestoredCheckpoint =
        Files.write(
            data.resolve(
                "00000-0-" + OwnedFileNames.operationId(jobId, SINK_TAG, 2) + "-00001.parquet"),
            new byte[] {1});
    harness.processElement(new StreamRecord<>(files("b", false, 0)));
    OperatorSubtaskState state = harness.snapshot(2, 2);
    // The commit of checkpoint 2 goes through; the task fails before the maintenance after it.
    assertThatThrownBy(() -> harness.notifyOfCompletedCheckpoint(2))
        .hasMessageContaining("after checkpoint 2 was committed");
    assertThat(committedCheckpoints()).containsExactly("1", "2");
    assertThat(orphan).exists();

    // A job restores from checkpoint 2 with its input at its end: no commit follows.
    var restored = maintainingHarness(null, orphansOnly);
    restored.getStreamConfig().setCheckpointingEnabled(true);
    restored.setRestoredCheckpointId(2);
    restored.initializeState(state);
    restored.open();

    assertThat(committedCheckpoints()).containsExactly("1", "2");
    assertThat(orphan).as("an orphan of a committed checkpoint, removed on restore").doesNotExist();
    // The job whose state it restored may still run (a savepoint taken without stopping it), and
    // commit the restored checkpoint itself: its files named for it go only by age.
    assertThat(ofTheRestoredCheckpoint).exists();
  }

  @Test
  void aRestoreFromAnOlderCheckpointKeepsTheFilesTheNewJobNamesForItsOwnCheckpoints()
      throws Exception {
    MaintenancePolicy orphansOnly =
        MaintenancePolicy.NONE.withOrphanRemoval(true, Duration.ofDays(3), Duration.ZERO);
    var first = maintainingHarness(null, orphansOnly);
    first.getStreamConfig().setCheckpointingEnabled(true);
    first.initializeEmptyState();
    first.open();
    first.processElement(new StreamRecord<>(files("a", false, 0)));
    OperatorSubtaskState atOne = first.snapshot(1, 1);
    first.notifyOfCompletedCheckpoint(1);
    first.processElement(new StreamRecord<>(files("b", false, 0)));
    first.snapshot(2, 2);
    first.notifyOfCompletedCheckpoint(2);
    assertThat(committedCheckpoints()).containsExactly("1", "2");

    // Another job restores from checkpoint 1: its own next checkpoint is 2, and its writers may
    // have written a file for it before the committer restores.
    var restored = maintainingHarness(null, orphansOnly);
    restored.getStreamConfig().setCheckpointingEnabled(true);
    String jobId = restored.getEnvironment().getJobID().toString();
    Path data = Path.of(table.location().replaceFirst("^file:", "")).resolve("data");
    Files.createDirectories(data);
    Path inFlight =
        Files.write(
            data.resolve(
                "00000-0-" + OwnedFileNames.operationId(jobId, SINK_TAG, 2) + "-00001.parquet"),
            new byte[] {1});
    restored.setRestoredCheckpointId(1);
    restored.initializeState(atOne);
    restored.open();

    assertThat(inFlight).as("a file of the restored job's checkpoint 2, in flight").exists();
  }

  /** Fails every commit after it is made, as a task that dies right after committing. */
  private static final class FailingAfterCommit implements CommitListener {
    private static final long serialVersionUID = 1L;

    /** The checkpoint after whose commit it fails; every one where negative. */
    private final long checkpoint;

    FailingAfterCommit() {
      this(-1);
    }

    FailingAfterCommit(long checkpoint) {
      this.checkpoint = checkpoint;
    }

    @Override
    public void afterCommit(long checkpointId, Snapshot snapshot) {
      if (checkpoint < 0 || checkpointId == checkpoint) {
        throw new IllegalStateException("the task died after committing " + checkpointId);
      }
    }
  }

  @Test
  void aDeleteReferringToAFileAnotherWriterRemovedFailsNamingTheConflict() throws Exception {
    var harness = open();
    harness.processElement(new StreamRecord<>(files("a", false, 0)));
    harness.snapshot(1, 1);
    harness.notifyOfCompletedCheckpoint(1);
    // Another writer (a compaction, say) removes the file that the next checkpoint deletes from.
    table.refresh();
    table.newDelete().deleteFile(TestTables.dataFile("a").location()).commit();

    Map<Integer, org.apache.iceberg.PartitionSpec> specs = table.specs();
    harness.processElement(
        new StreamRecord<>(
            new ChangeCommittable(
                List.of(),
                List.of(ContentFileCodec.encode(TestTables.equalityDeleteFile("x"), specs)),
                List.of(TestTables.dataFile("a").location()),
                ChangeStats.EMPTY)));
    harness.snapshot(2, 2);
    assertThatThrownBy(() -> harness.notifyOfCompletedCheckpoint(2))
        .isInstanceOf(CommitException.class)
        .hasMessageContaining("checkpoint 2 conflicts with a concurrent change");
  }

  @Test
  void aCommitThatLosesARaceWithAnotherWriterIsRetriedAndKeepsBothChanges() throws Exception {
    ConcurrentWriter.warehouse = warehouse.toString();
    var harness = open(null, new ConcurrentWriter());
    harness.processElement(new StreamRecord<>(files("ours", true, 0)));
    harness.snapshot(1, 1);
    harness.notifyOfCompletedCheckpoint(1);

    List<Snapshot> snapshots = snapshots();
    assertThat(snapshots).hasSize(2);
    assertThat(snapshots.get(0).summary()).doesNotContainKey(SnapshotSummaryKeys.CHECKPOINT_ID);
    assertThat(snapshots.get(1).summary()).containsEntry(SnapshotSummaryKeys.CHECKPOINT_ID, "1");
    assertThat(snapshots.get(1).summary()).containsEntry("total-data-files", "2");
  }

  /** Commits an append through its own table handle just before the committer commits. */
  private static final class ConcurrentWriter implements CommitListener {
    private static final long serialVersionUID = 1L;
    static String warehouse;

    @Override
    public void beforeCommit(long checkpointId) {
      Table other = TestTables.catalog(Path.of(warehouse)).loadCatalog().loadTable(TestTables.ID);
      other.newAppend().appendFile(TestTables.dataFile("theirs")).commit();
    }
  }

  /**
   * The catalog applies a commit and loses its answer (unknown outcome): the committer's next
   * attempt finds the checkpoint in the table it would build on, and makes nothing.
   */
  @Test
  void aCommitWhoseAnswerWasLostIsFoundInTheTableItWouldBuildOnNotMadeTwice() throws Exception {
    assertThat(commitTwoCheckpointsLosingTheSecondsAnswer(true))
        .containsExactlyInAnyOrder(
            TestTables.dataFile("first").location(), TestTables.dataFile("second").location());
    assertThat(LateLanding.calls).as("attempts at checkpoint 2").isEqualTo(1);
    assertThat(committedCheckpoints()).containsExactly("1", "2");
    assertThat(LateLanding.told).as("the commits told of").containsExactly(1L, 2L);
  }

  /**
   * The catalog loses its answer to a commit (unknown outcome) and applies the commit only later,
   * after the committer has read the snapshot log and found nothing: the committer's next attempt
   * must not add the rows a second time. Here the late commit lands just before that attempt.
   */
  @Test
  void aCommitWhoseAnswerWasLostAndThatLandsLateIsNotMadeTwice() throws Exception {
    assertThat(commitTwoCheckpointsLosingTheSecondsAnswer(false))
        .containsExactlyInAnyOrder(
            TestTables.dataFile("first").location(), TestTables.dataFile("second").location());
    assertThat(LateLanding.calls).as("attempts at checkpoint 2").isEqualTo(2);
    assertThat(committedCheckpoints()).containsExactly("1", "2");
    assertThat(LateLanding.told).as("the commits told of").containsExactly(1L, 2L);
  }

  /**
   * The commit listener fails after a commit, for a cause that looks like a catalog out of reach:
   * the commit is not made again or told of again; the committer fails, naming the listener.
   */
  @Test
  void aListenerFailingAfterACommitIsNoFailedCommit() throws Exception {
    ListenerFailingAfterCommit.told = 0;
    var harness = open(null, new ListenerFailingAfterCommit());
    harness.processElement(new StreamRecord<>(files("a", false, 0)));
    harness.snapshot(1, 1);
    assertThatThrownBy(() -> harness.notifyOfCompletedCheckpoint(1))
        .hasStackTraceContaining("the commit listener failed after checkpoint 1 was committed");
    assertThat(ListenerFailingAfterCommit.told).isEqualTo(1);
    assertThat(committedCheckpoints()).containsExactly("1");
  }

  private static final class ListenerFailingAfterCommit implements CommitListener {
    private static final long serialVersionUID = 1L;
    static int told;

    @Override
    public void afterCommit(long checkpointId, Snapshot snapshot) {
      told++;
      throw new IllegalStateException(
          "the listener's service is down", new java.net.SocketTimeoutException("read timed out"));
    }
  }

  /**
   * A checkpoint without files is carried into the next commit, both due at once; where the two
   * give truncate positions that cannot be ordered (another binlog name), the later checkpoint's is
   * recorded.
   */
  @Test
  void aCarriedCheckpointDoesNotHideTheLaterTruncatePosition() throws Exception {
    // Checkpoint 1's completion is not told: both are due at checkpoint 2's.
    assertThat(summaryOfTwoCheckpointsOfAnotherBinlogName(false))
        .containsEntry(SnapshotSummaryKeys.CHECKPOINT_ID, "2")
        .containsEntry(SnapshotSummaryKeys.STALE_DROPPED, "3")
        .containsEntry(SnapshotSummaryKeys.TRUNCATED_AT, SECOND_BINLOG.encode());
  }

  /**
   * As {@link #aCarriedCheckpointDoesNotHideTheLaterTruncatePosition}, but checkpoint 1 completes
   * after checkpoint 2's contributions came: its counts are added to those, which stay the later.
   */
  @Test
  void countsCarriedIntoTheCheckpointInProgressAreTheEarlierOnes() throws Exception {
    assertThat(summaryOfTwoCheckpointsOfAnotherBinlogName(true))
        .containsEntry(SnapshotSummaryKeys.CHECKPOINT_ID, "2")
        .containsEntry(SnapshotSummaryKeys.STALE_DROPPED, "3")
        .containsEntry(SnapshotSummaryKeys.SOURCE_POSITION, SECOND_BINLOG.toString())
        .containsEntry(SnapshotSummaryKeys.TRUNCATED_AT, SECOND_BINLOG.encode());
  }

  private static final SourceSequence FIRST_BINLOG =
      SourceSequence.mysqlBinlog("a-bin.000005", 100, 0);
  private static final SourceSequence SECOND_BINLOG =
      SourceSequence.mysqlBinlog("b-bin.000001", 50, 0);

  /**
   * Checkpoint 1 drops 3 stale changes and truncates at {@link #FIRST_BINLOG} without files,
   * checkpoint 2 adds a file and truncates at {@link #SECOND_BINLOG}; checkpoint 1's completion is
   * told after checkpoint 2's contributions came if {@code firstCompletes}, never otherwise.
   * Returns the summary of the table's snapshot then.
   */
  private Map<String, String> summaryOfTwoCheckpointsOfAnotherBinlogName(boolean firstCompletes)
      throws Exception {
    var harness = open();
    harness.processElement(
        new StreamRecord<>(
            ChangeCommittable.ofStats(
                new ChangeStats(0, 0, 0, 3, 0, 0, FIRST_BINLOG, Map.of(), FIRST_BINLOG))));
    harness.snapshot(1, 1);
    ChangeCommittable files = files("a", false, 0);
    harness.processElement(
        new StreamRecord<>(
            new ChangeCommittable(
                files.dataFiles(),
                List.of(),
                List.of(),
                new ChangeStats(1, 0, 0, 0, 0, 0, SECOND_BINLOG, Map.of(), SECOND_BINLOG))));
    if (firstCompletes) {
      harness.notifyOfCompletedCheckpoint(1);
    }
    harness.snapshot(2, 2);
    harness.notifyOfCompletedCheckpoint(2);
    table.refresh();
    return table.currentSnapshot().summary();
  }

  /**
   * A committer whose recorded position never goes back below the table's does not hold on to a
   * position of another binlog name (a source that moved to another server): it cannot be ordered
   * against the new one, which is recorded.
   */
  @Test
  void theRecordedPositionMovesToAnotherBinlogName() throws Exception {
    var harness =
        harnessOf(
            new IcebergCommitterOperator(TestTables.loader(warehouse), null)
                .sourceSequence(true, true));
    harness.getStreamConfig().setCheckpointingEnabled(true);
    harness.initializeEmptyState();
    harness.open();
    SourceSequence old = SourceSequence.mysqlBinlog("mysql-bin.000120", 4000, 0);
    SourceSequence moved = SourceSequence.mysqlBinlog("binlog.000003", 50, 0);
    for (int checkpoint = 1; checkpoint <= 2; checkpoint++) {
      SourceSequence position = checkpoint == 1 ? old : moved;
      harness.processElement(
          new StreamRecord<>(
              new ChangeCommittable(
                  files("f" + checkpoint, false, 0).dataFiles(),
                  List.of(),
                  List.of(),
                  new ChangeStats(1, 0, 0, 0, 0, 0, position))));
      harness.snapshot(checkpoint, checkpoint);
      harness.notifyOfCompletedCheckpoint(checkpoint);
    }
    table.refresh();
    assertThat(table.currentSnapshot().summary())
        .containsEntry(SnapshotSummaryKeys.CHECKPOINT_ID, "2")
        .containsEntry(SnapshotSummaryKeys.SOURCE_SEQUENCE, moved.encode());
  }

  /**
   * Commits checkpoints 1 and 2, the answer to the first attempt at 2 lost ({@link LateLanding});
   * returns the data files the table holds then.
   */
  private List<String> commitTwoCheckpointsLosingTheSecondsAnswer(boolean landsAtOnce)
      throws Exception {
    LateLanding.warehouse = warehouse.toString();
    LateLanding.calls = 0;
    LateLanding.told.clear();
    LateLanding.landsAtOnce = landsAtOnce;
    var harness = open(null, new LateLanding());
    harness.processElement(new StreamRecord<>(files("first", false, 0)));
    harness.snapshot(1, 1);
    harness.notifyOfCompletedCheckpoint(1);
    harness.processElement(new StreamRecord<>(files("second", false, 0)));
    harness.snapshot(2, 2);
    harness.notifyOfCompletedCheckpoint(2);
    table.refresh();
    List<String> files = new ArrayList<>();
    try (var tasks = table.newScan().planFiles()) {
      tasks.forEach(task -> files.add(task.file().location()));
    }
    return files;
  }

  /**
   * At checkpoint 2: the first attempt's answer is lost (unknown outcome); before the next attempt,
   * the catalog applies the first one after all, as that attempt would have committed it.
   */
  private static final class LateLanding implements CommitListener {
    private static final long serialVersionUID = 1L;
    static String warehouse;
    static int calls;

    /** Whether the first attempt lands before its answer is lost, not after. */
    static boolean landsAtOnce;

    /** The checkpoints the committer told of as committed, in order. */
    static final List<Long> told = new ArrayList<>();

    @Override
    public void afterCommit(long checkpointId, Snapshot snapshot) {
      told.add(checkpointId);
    }

    @Override
    public void beforeCommit(long checkpointId) {
      if (checkpointId != 2) {
        return;
      }
      calls++;
      if (calls == 1 && landsAtOnce) {
        land();
      }
      if (calls == 1) {
        throw new org.apache.iceberg.exceptions.CommitStateUnknownException(
            new java.net.SocketTimeoutException("the gateway timed out"));
      }
      if (calls == 2) {
        land();
      }
    }

    /** Commits checkpoint 2's file as the committer's attempt would have. */
    private static void land() {
      Table other = TestTables.catalog(Path.of(warehouse)).loadCatalog().loadTable(TestTables.ID);
      java.util.Map<String, String> first = other.currentSnapshot().summary();
      var landing = other.newAppend().appendFile(TestTables.dataFile("second"));
      for (String key :
          List.of(
              SnapshotSummaryKeys.JOB_ID,
              SnapshotSummaryKeys.OPERATOR_ID,
              SnapshotSummaryKeys.CHECKPOINT_ID)) {
        landing.set(key, key.equals(SnapshotSummaryKeys.CHECKPOINT_ID) ? "2" : first.get(key));
      }
      landing.commit();
    }
  }

  @Test
  void positionDeletesOfSeveralWritersAndCheckpointsMergeIntoOneDeletionVectorPerFile()
      throws Exception {
    table.updateProperties().set("format-version", "3").commit();
    var harness = open();
    harness.processElement(new StreamRecord<>(files("a", false, 0)));
    harness.snapshot(1, 1);
    harness.notifyOfCompletedCheckpoint(1);
    String a = TestTables.dataFile("a").location();

    harness.processElement(new StreamRecord<>(positions(a, 1, 2)));
    harness.processElement(new StreamRecord<>(positions(a, 5)));
    harness.snapshot(2, 2);
    harness.processElement(new StreamRecord<>(positions(a, 7)));
    harness.snapshot(3, 3);
    harness.notifyOfCompletedCheckpoint(2);
    assertThat(deletesOf(a))
        .singleElement()
        .satisfies(
            dv -> {
              assertThat(dv.format()).isEqualTo(org.apache.iceberg.FileFormat.PUFFIN);
              assertThat(dv.recordCount()).isEqualTo(3);
            });

    harness.notifyOfCompletedCheckpoint(3);
    assertThat(deletesOf(a))
        .singleElement()
        .satisfies(dv -> assertThat(dv.recordCount()).isEqualTo(4));
    assertThat(committedCheckpoints()).containsExactly("1", "2", "3");
  }

  /**
   * A checkpoint aborted after the writers handed on its files (as {@code flink stop} does to the
   * checkpoint in flight when it takes its savepoint) leaves them for the next one, whose deletes
   * may point into them: both are one commit, whose deletes of its own new files are position
   * deletes in that commit, not equality deletes.
   */
  @ParameterizedTest(name = "format version {0}")
  @ValueSource(ints = {2, 3})
  void deletesOfFilesAnAbortedCheckpointLeftForTheNextArePositionDeletes(int formatVersion)
      throws Exception {
    table.updateProperties().set("format-version", Integer.toString(formatVersion)).commit();
    var harness = open();
    harness.processElement(new StreamRecord<>(files("a", false, 0)));
    // Checkpoint 1 is aborted before it reaches the committer; checkpoint 2 deletes rows of "a".
    String a = TestTables.dataFile("a").location();
    harness.processElement(new StreamRecord<>(positions(a, 1, 4)));
    harness.snapshot(2, 2);
    harness.notifyOfCompletedCheckpoint(2);

    assertThat(committedCheckpoints()).containsExactly("2");
    assertThat(deletesOf(a))
        .singleElement()
        .satisfies(
            d -> {
              assertThat(d.content()).isEqualTo(org.apache.iceberg.FileContent.POSITION_DELETES);
              assertThat(d.recordCount()).isEqualTo(2);
            });
    assertThat(snapshots().get(0).summary())
        .containsEntry(SnapshotSummaryKeys.DELETES_FELL_BACK, "0");
  }

  /**
   * Writers that move their rows out of a file they share (written before a rescaling, or by
   * another engine) each delete their part by position; the commit that deletes the last live row
   * removes the file and its deletes instead of masking every row. A commit that would only remove
   * files is a delete of files in format version 3 (their deletion vectors go with them); in
   * version 2, whose position delete files Iceberg does not drop with their data file, the rows
   * stay masked.
   */
  @ParameterizedTest(name = "format version {0}")
  @ValueSource(ints = {2, 3})
  void aDataFileWhoseLastRowsAreDeletedLeavesTheTable(int formatVersion) throws Exception {
    table.updateProperties().set("format-version", Integer.toString(formatVersion)).commit();
    var harness = openWithFilesAAndBCommitted();
    String a = TestTables.dataFile("a").location();
    String b = TestTables.dataFile("b").location();

    // Ten rows each: two writers delete a's rows over two checkpoints, and nine of b's.
    harness.processElement(new StreamRecord<>(positions(a, 0, 2, 4, 6, 8)));
    harness.processElement(new StreamRecord<>(positions(b, 0, 1, 2, 3, 4, 5, 6, 7)));
    harness.snapshot(2, 2);
    harness.notifyOfCompletedCheckpoint(2);
    assertThat(deletesOf(a))
        .singleElement()
        .satisfies(d -> assertThat(d.recordCount()).isEqualTo(5));
    harness.processElement(new StreamRecord<>(positions(a, 1, 3)));
    harness.processElement(new StreamRecord<>(positions(a, 5, 7, 9)));
    harness.processElement(new StreamRecord<>(positions(b, 8)));
    harness.snapshot(3, 3);
    harness.notifyOfCompletedCheckpoint(3);

    assertThat(liveDataFiles()).containsExactly(b);
    assertThat(deletesOf(b))
        .singleElement()
        .satisfies(d -> assertThat(d.recordCount()).isEqualTo(9));
    assertThat(table.currentSnapshot().operation()).isEqualTo("delete");
    assertThat(table.currentSnapshot().summary())
        .containsEntry(SnapshotSummaryKeys.DATA_FILES_EMPTIED, "1")
        .containsEntry("deleted-data-files", "1")
        .containsEntry("total-delete-files", "1")
        .containsEntry(SnapshotSummaryKeys.DELETES_FELL_BACK, "0");

    // The last row of b, alone in its commit.
    harness.processElement(new StreamRecord<>(positions(b, 9)));
    harness.snapshot(4, 4);
    harness.notifyOfCompletedCheckpoint(4);
    assertThat(table.currentSnapshot().operation()).isEqualTo("delete");
    if (formatVersion >= 3) {
      assertThat(liveDataFiles()).isEmpty();
      assertThat(table.currentSnapshot().summary())
          .containsEntry(SnapshotSummaryKeys.DATA_FILES_EMPTIED, "1")
          .containsEntry("total-delete-files", "0");
    } else {
      assertThat(liveDataFiles()).containsExactly(b);
      assertThat(deletesOf(b))
          .singleElement()
          .satisfies(d -> assertThat(d.recordCount()).isEqualTo(10));
    }
    assertThat(committedCheckpoints()).containsExactly("1", "2", "3", "4");
  }

  @Test
  void aCompactedFileIsRemovedWithItsDeletionVectorInTheCommitThatAddsItsRows() throws Exception {
    table.updateProperties().set("format-version", "3").commit();
    var harness = open();
    harness.processElement(new StreamRecord<>(files("a", false, 0)));
    harness.snapshot(1, 1);
    harness.notifyOfCompletedCheckpoint(1);
    String a = TestTables.dataFile("a").location();
    harness.processElement(new StreamRecord<>(positions(a, 1, 2)));
    harness.snapshot(2, 2);
    harness.notifyOfCompletedCheckpoint(2);
    assertThat(deletesOf(a)).hasSize(1);

    // The writer wrote a's other live rows into b, and deletes them in a in case a is gone.
    harness.processElement(new StreamRecord<>(compactedInto(a, "b", 0, 3, 4)));
    harness.snapshot(3, 3);
    harness.notifyOfCompletedCheckpoint(3);

    List<String> live = liveDataFiles();
    assertThat(live).containsExactly(TestTables.dataFile("b").location());
    Map<String, String> summary = table.currentSnapshot().summary();
    assertThat(summary)
        .containsEntry(SnapshotSummaryKeys.DATA_FILES_COMPACTED, "1")
        .containsEntry("deleted-data-files", "1")
        .containsEntry("total-delete-files", "0")
        .containsEntry(SnapshotSummaryKeys.DELETES_FELL_BACK, "0");
    assertThat(committedCheckpoints()).containsExactly("1", "2", "3");
  }

  @Test
  void aRowAnotherWriterDeletesWhileItIsCompactedIsNotBroughtBack() throws Exception {
    table.updateProperties().set("format-version", "3").commit();
    DataFile a = writeRows(table, "a", 1, 2, 3);
    table.newAppend().appendFile(a).commit();
    // The writer compacted a: its rows 1, 2 and 3 are copied into b. Before the commit, another
    // engine deletes row 2 from a (and the first attempt loses that race).
    DataFile b = writeRows(table, "b", 1, 2, 3);
    ConcurrentDelete.warehouse = warehouse.toString();
    ConcurrentDelete.location = a.location();
    ConcurrentDelete.done = false;
    var harness = open(null, new ConcurrentDelete());
    harness.processElement(new StreamRecord<>(compaction(a, b, 0, 1, 2)));
    harness.snapshot(1, 1);
    harness.notifyOfCompletedCheckpoint(1);

    assertThat(ids()).containsExactlyInAnyOrder(1L, 3L);
    Map<String, String> summary = table.currentSnapshot().summary();
    assertThat(summary)
        .containsEntry(SnapshotSummaryKeys.CHECKPOINT_ID, "1")
        .containsEntry(SnapshotSummaryKeys.DATA_FILES_COMPACTED, "1")
        .containsEntry(SnapshotSummaryKeys.COMPACTED_ROWS_DELETED_MEANWHILE, "1");
  }

  /**
   * The copies of rows deleted meanwhile are deleted beside the commit's own deletes of the same
   * new file (a file of an aborted checkpoint that this commit carries, a key of it changed since),
   * not instead of them: replaced, they left the changed key with two rows.
   */
  @Test
  void deletesOfCopiesDeletedMeanwhileJoinTheCommitsOwnDeletesOfTheSameFile() throws Exception {
    table.updateProperties().set("format-version", "3").commit();
    DataFile a = writeRows(table, "a", 1, 2, 3);
    table.newAppend().appendFile(a).commit();
    DataFile b = writeRows(table, "b", 1, 2, 3);
    ConcurrentDelete.warehouse = warehouse.toString();
    ConcurrentDelete.location = a.location();
    ConcurrentDelete.done = false;
    var harness = open(null, new ConcurrentDelete());
    // Row 3's copy in b is deleted by the writer too (its key changed after the compaction).
    harness.processElement(
        new StreamRecord<>(
            new ChangeCommittable(
                List.of(ContentFileCodec.encode(b, table.specs())),
                List.of(),
                List.of(),
                ChangeStats.EMPTY,
                io.icebergcdc.commit.PositionDeletes.of(
                    Map.of(a.location(), new long[] {0, 1, 2}, b.location(), new long[] {2})),
                0,
                List.of(a.location()),
                io.icebergcdc.commit.PositionDeletes.of(
                    Map.of(a.location(), new long[] {0, 1, 2})))));
    harness.snapshot(1, 1);
    harness.notifyOfCompletedCheckpoint(1);

    assertThat(ids()).containsExactly(1L);
    assertThat(table.currentSnapshot().summary())
        .containsEntry(SnapshotSummaryKeys.COMPACTED_ROWS_DELETED_MEANWHILE, "1");
  }

  @Test
  void aRowAnotherWriterDeletesByRewritingTheCompactedFileIsNotBroughtBack() throws Exception {
    table.updateProperties().set("format-version", "3").commit();
    DataFile a = writeRows(table, "a", 1, 2, 3);
    table.newAppend().appendFile(a).commit();
    DataFile b = writeRows(table, "b", 1, 2, 3);
    // Another engine deletes row 2 copy-on-write: a is replaced by a file of rows 1 and 3.
    DataFile rewritten = writeRows(table, "a2", 1, 3);
    table.newOverwrite().deleteFile(a).addFile(rewritten).commit();

    var harness = open();
    harness.processElement(new StreamRecord<>(compaction(a, b, 0, 1, 2)));
    harness.snapshot(1, 1);
    harness.notifyOfCompletedCheckpoint(1);

    assertThat(ids()).containsExactlyInAnyOrder(1L, 3L);
    assertThat(table.currentSnapshot().summary())
        .containsEntry(SnapshotSummaryKeys.COMPACTED_ROWS_DELETED_MEANWHILE, "1");
  }

  @Test
  void aCommitWithoutNewChangesStillSaysWhereTheSourceStands() throws Exception {
    table.updateProperties().set("format-version", "3").commit();
    DataFile a = writeRows(table, "a", 1, 2, 3);
    DataFile b = writeRows(table, "b", 1, 3);
    var harness = open();
    harness.processElement(
        new StreamRecord<>(
            new ChangeCommittable(
                List.of(ContentFileCodec.encode(a, table.specs())),
                List.of(),
                List.of(),
                new ChangeStats(
                    3,
                    0,
                    0,
                    0,
                    0,
                    0,
                    SourceSequence.postgresLsn(99),
                    Map.of("t/0", 41L, "t/1", 7L),
                    SourceSequence.postgresLsn(90)))));
    harness.snapshot(1, 1);
    harness.notifyOfCompletedCheckpoint(1);
    table.refresh();
    String truncatedAt = SourceSequence.postgresLsn(90).encode();
    assertThat(table.currentSnapshot().summary())
        .containsEntry(SnapshotSummaryKeys.KAFKA_OFFSETS, "t/0=41,t/1=7")
        .containsEntry(SnapshotSummaryKeys.TRUNCATED_AT, truncatedAt);

    // The next checkpoint read nothing new and only compacts: its snapshot keeps the position.
    harness.processElement(new StreamRecord<>(compaction(a, b, 0, 2)));
    harness.snapshot(2, 2);
    harness.notifyOfCompletedCheckpoint(2);
    table.refresh();
    assertThat(table.currentSnapshot().summary())
        .containsEntry(SnapshotSummaryKeys.CHECKPOINT_ID, "2")
        .containsEntry(SnapshotSummaryKeys.DATA_FILES_COMPACTED, "1")
        .containsEntry(SnapshotSummaryKeys.KAFKA_OFFSETS, "t/0=41,t/1=7")
        .containsEntry(
            SnapshotSummaryKeys.SOURCE_POSITION, SourceSequence.postgresLsn(99).toString())
        // The writers give the truncate's position in every checkpoint; the committer does not
        // carry it forward itself (a job that ignores the table's position leaves it behind).
        .doesNotContainKey(SnapshotSummaryKeys.TRUNCATED_AT);

    // New records of one partition move it on, and the other keeps its offset.
    harness.processElement(
        new StreamRecord<>(
            ChangeCommittable.ofStats(new ChangeStats(0, 1, 0, 0, 0, 0, null, Map.of("t/1", 9L)))));
    harness.processElement(new StreamRecord<>(files("c", false, 0)));
    harness.snapshot(3, 3);
    harness.notifyOfCompletedCheckpoint(3);
    table.refresh();
    assertThat(table.currentSnapshot().summary())
        .containsEntry(SnapshotSummaryKeys.KAFKA_OFFSETS, "t/0=41,t/1=9");
  }

  /**
   * Offsets and positions that an earlier job's snapshot records are not carried into a commit
   * where a job without state did not start from them: past another engine's delete (which voids
   * them: the job read the topic from where its options say), and by a job that ignores the table's
   * position. Carried, they named offsets the table does not hold, and a job started later without
   * state skipped the records between.
   */
  @ParameterizedTest
  @ValueSource(booleans = {true, false})
  void offsetsOfAnEarlierJobAreNotCarriedWhereTheJobDidNotStartFromThem(boolean ignoring)
      throws Exception {
    var earlier = open();
    earlier.processElement(
        new StreamRecord<>(
            ChangeCommittable.ofStats(
                new ChangeStats(
                    0, 1, 0, 0, 0, 0, SourceSequence.postgresLsn(5000), Map.of("t/0", 5000L)))));
    earlier.processElement(new StreamRecord<>(files("a", false, 0)));
    earlier.snapshot(1, 1);
    earlier.notifyOfCompletedCheckpoint(1);
    earlier.close();
    table.refresh();
    assertThat(table.currentSnapshot().summary())
        .containsEntry(SnapshotSummaryKeys.KAFKA_OFFSETS, "t/0=5000");
    if (!ignoring) {
      // Another engine empties the table.
      table.newDelete().deleteFile(TestTables.dataFile("a")).commit();
    }

    var later =
        harnessOf(
            new IcebergCommitterOperator(TestTables.loader(warehouse), null)
                .sourceSequence(true, !ignoring));
    later.getStreamConfig().setCheckpointingEnabled(true);
    later.initializeEmptyState();
    later.open();
    later.processElement(
        new StreamRecord<>(
            ChangeCommittable.ofStats(
                new ChangeStats(
                    0, 1, 0, 0, 0, 0, SourceSequence.postgresLsn(99), Map.of("t/0", 99L)))));
    later.processElement(new StreamRecord<>(files("b", false, 0)));
    later.snapshot(1, 1);
    later.notifyOfCompletedCheckpoint(1);
    // A commit without records of the topic carries the job's own offsets.
    later.processElement(new StreamRecord<>(files("c", false, 0)));
    later.snapshot(2, 2);
    later.notifyOfCompletedCheckpoint(2);
    table.refresh();
    assertThat(table.currentSnapshot().summary())
        .containsEntry(SnapshotSummaryKeys.CHECKPOINT_ID, "2")
        .containsEntry(SnapshotSummaryKeys.KAFKA_OFFSETS, "t/0=99")
        .containsEntry(
            SnapshotSummaryKeys.SOURCE_SEQUENCE, SourceSequence.postgresLsn(99).encode());
  }

  /**
   * Each snapshot with offsets records the ids of the committer's topics beside them, so that a job
   * started later tells a topic deleted and created again under its name from the old one; a
   * snapshot without offsets records none.
   */
  @Test
  void offsetsAreRecordedWithTheirTopicsIds() throws Exception {
    var harness =
        harnessOf(
            new IcebergCommitterOperator(TestTables.loader(warehouse), null)
                .kafkaTopicIds(Map.of("t", "id-of-t")));
    harness.getStreamConfig().setCheckpointingEnabled(true);
    harness.initializeEmptyState();
    harness.open();
    harness.processElement(new StreamRecord<>(files("a", false, 0)));
    harness.snapshot(1, 1);
    harness.notifyOfCompletedCheckpoint(1);
    table.refresh();
    assertThat(table.currentSnapshot().summary())
        .doesNotContainKey(SnapshotSummaryKeys.KAFKA_OFFSETS)
        .doesNotContainKey(SnapshotSummaryKeys.KAFKA_TOPIC_IDS);

    harness.processElement(
        new StreamRecord<>(
            ChangeCommittable.ofStats(
                new ChangeStats(0, 1, 0, 0, 0, 0, null, Map.of("t/0", 50L, "t/1", 3L)))));
    harness.processElement(new StreamRecord<>(files("b", false, 0)));
    harness.snapshot(2, 2);
    harness.notifyOfCompletedCheckpoint(2);
    table.refresh();
    assertThat(table.currentSnapshot().summary())
        .containsEntry(SnapshotSummaryKeys.KAFKA_OFFSETS, "t/0=50,t/1=3")
        .containsEntry(SnapshotSummaryKeys.KAFKA_TOPIC_IDS, "t=id-of-t");
  }

  /**
   * A job that ignores the table's position carries only its lineage's offsets: restored twice
   * without a commit between, it still knows the job that recorded them.
   */
  @Test
  void aJobRestoredTwiceWithoutACommitStillCarriesItsLineagesOffsets() throws Exception {
    var first = ignoringTheTablesPosition(null);
    first.processElement(
        new StreamRecord<>(
            ChangeCommittable.ofStats(
                new ChangeStats(0, 1, 0, 0, 0, 0, null, Map.of("t/0", 5000L, "t/1", 7L)))));
    first.processElement(new StreamRecord<>(files("a", false, 0)));
    first.snapshot(1, 1);
    first.notifyOfCompletedCheckpoint(1);
    OperatorSubtaskState afterTheCommit = first.snapshot(2, 2);
    // Restored, and failed again before a commit of its own.
    OperatorSubtaskState ofTheSecond = ignoringTheTablesPosition(afterTheCommit).snapshot(3, 3);

    var third = ignoringTheTablesPosition(ofTheSecond);
    third.processElement(
        new StreamRecord<>(
            ChangeCommittable.ofStats(
                new ChangeStats(0, 1, 0, 0, 0, 0, null, Map.of("t/0", 5001L)))));
    third.processElement(new StreamRecord<>(files("b", false, 0)));
    third.snapshot(4, 4);
    third.notifyOfCompletedCheckpoint(4);
    table.refresh();
    assertThat(table.currentSnapshot().summary())
        .containsEntry(SnapshotSummaryKeys.KAFKA_OFFSETS, "t/0=5001,t/1=7");
  }

  private OneInputStreamOperatorTestHarness<ChangeCommittable, Void> ignoringTheTablesPosition(
      OperatorSubtaskState restoreFrom) throws Exception {
    var harness =
        harnessOf(
            new IcebergCommitterOperator(TestTables.loader(warehouse), null)
                .sourceSequence(true, false));
    harness.getStreamConfig().setCheckpointingEnabled(true);
    if (restoreFrom == null) {
      harness.initializeEmptyState();
    } else {
      harness.initializeState(restoreFrom);
    }
    harness.open();
    return harness;
  }

  /**
   * A rarely changed table whose last commit another engine expired meanwhile: the state of its
   * next checkpoint with files names the table as read then, so a restore can tell.
   */
  @Test
  void aTableChangedAfterAnIdleSpellIsRestoredThoughAnotherEngineExpiredItsLastCommit()
      throws Exception {
    afterIdleSpells(this::aTableChangedAfterAnIdleSpell);
  }

  private void aTableChangedAfterAnIdleSpell() throws Exception {
    var harness = open();
    harness.processElement(new StreamRecord<>(files("a", false, 0)));
    harness.snapshot(1, 1);
    harness.notifyOfCompletedCheckpoint(1);
    harness.snapshot(2, 2);
    harness.notifyOfCompletedCheckpoint(2);
    // While the job has nothing for the table, another engine writes and expires the job's commit.
    anotherEngineAppendsAndExpiresAllButItsOwn(2);
    harness.processElement(new StreamRecord<>(files("b", false, 0)));
    OperatorSubtaskState state = harness.snapshot(3, 3);
    // The job fails before checkpoint 3 is committed.

    open(state, null);
    assertThat(committedCheckpoints()).containsExactly(null, null, "3");
  }

  /**
   * A job that runs on across another engine's delete read the topic past the offsets it recorded
   * before: its commits after the delete still carry those of the partitions without new records.
   */
  @Test
  void aRunningJobCarriesItsOwnOffsetsAcrossAnotherEnginesDelete() throws Exception {
    var harness = open();
    harness.processElement(
        new StreamRecord<>(
            ChangeCommittable.ofStats(
                new ChangeStats(0, 1, 0, 0, 0, 0, null, Map.of("t/0", 5000L, "t/1", 7L)))));
    harness.processElement(new StreamRecord<>(files("a", false, 0)));
    harness.snapshot(1, 1);
    harness.notifyOfCompletedCheckpoint(1);
    table.refresh();
    table.newDelete().deleteFile(TestTables.dataFile("a")).commit();
    harness.processElement(
        new StreamRecord<>(
            ChangeCommittable.ofStats(
                new ChangeStats(0, 1, 0, 0, 0, 0, null, Map.of("t/0", 5001L)))));
    harness.processElement(new StreamRecord<>(files("b", false, 0)));
    harness.snapshot(2, 2);
    harness.notifyOfCompletedCheckpoint(2);
    table.refresh();
    assertThat(table.currentSnapshot().summary())
        .containsEntry(SnapshotSummaryKeys.CHECKPOINT_ID, "2")
        .containsEntry(SnapshotSummaryKeys.KAFKA_OFFSETS, "t/0=5001,t/1=7");
  }

  @Test
  void compactedRowsNobodyElseTouchedAreKeptWithoutALookUp() throws Exception {
    table.updateProperties().set("format-version", "3").commit();
    DataFile a = writeRows(table, "a", 1, 2, 3);
    table.newAppend().appendFile(a).commit();
    DataFile b = writeRows(table, "b", 1, 3);
    var harness = open();
    // Row 2 is deleted by this checkpoint (an update elsewhere), rows 1 and 3 are compacted.
    ChangeCommittable compaction =
        new ChangeCommittable(
            List.of(ContentFileCodec.encode(b, table.specs())),
            List.of(),
            List.of(),
            ChangeStats.EMPTY,
            io.icebergcdc.commit.PositionDeletes.of(Map.of(a.location(), new long[] {0, 1, 2})),
            0,
            List.of(a.location()),
            io.icebergcdc.commit.PositionDeletes.of(Map.of(a.location(), new long[] {0, 2})));
    harness.processElement(new StreamRecord<>(compaction));
    harness.snapshot(1, 1);
    harness.notifyOfCompletedCheckpoint(1);

    assertThat(ids()).containsExactlyInAnyOrder(1L, 3L);
    assertThat(table.currentSnapshot().summary())
        .doesNotContainKey(SnapshotSummaryKeys.COMPACTED_ROWS_DELETED_MEANWHILE)
        .containsEntry("total-delete-files", "0");
  }

  /** A compaction of {@code from} whose rows at {@code positions} were copied into {@code to}. */
  private ChangeCommittable compaction(DataFile from, DataFile to, long... positions) {
    return new ChangeCommittable(
        List.of(ContentFileCodec.encode(to, table.specs())),
        List.of(),
        List.of(),
        ChangeStats.EMPTY,
        io.icebergcdc.commit.PositionDeletes.of(Map.of(from.location(), positions)),
        0,
        List.of(from.location()),
        io.icebergcdc.commit.PositionDeletes.of(Map.of(from.location(), positions)));
  }

  /** Writes a data file of rows with the given ids, named after {@code name}. */
  private static DataFile writeRows(Table table, String name, long... ids) throws Exception {
    var writer =
        new org.apache.iceberg.data.GenericFileWriterFactory.Builder(table)
            .dataFileFormat(org.apache.iceberg.FileFormat.PARQUET)
            .build()
            .newDataWriter(
                org.apache.iceberg.encryption.EncryptedFiles.plainAsEncryptedOutput(
                    table.io().newOutputFile(table.location() + "/data/" + name + ".parquet")),
                table.spec(),
                null);
    try (writer) {
      for (long id : ids) {
        org.apache.iceberg.data.GenericRecord row =
            org.apache.iceberg.data.GenericRecord.create(table.schema());
        row.setField("id", id);
        row.setField("name", name + "-" + id);
        writer.write(row);
      }
    }
    return writer.toDataFile();
  }

  /** The ids of the table's rows, deletes applied. */
  private List<Long> ids() throws Exception {
    table.refresh();
    List<Long> ids = new ArrayList<>();
    try (var rows = org.apache.iceberg.data.IcebergGenerics.read(table).build()) {
      rows.forEach(r -> ids.add((Long) r.getField("id")));
    }
    return ids;
  }

  /** Deletes the row at position 1 of a data file, by deletion vector, before the first commit. */
  private static final class ConcurrentDelete implements CommitListener {
    private static final long serialVersionUID = 1L;
    static String warehouse;
    static String location;
    static boolean done;

    @Override
    public void beforeCommit(long checkpointId) {
      if (done) {
        return;
      }
      done = true;
      Table other = TestTables.catalog(Path.of(warehouse)).loadCatalog().loadTable(TestTables.ID);
      var files =
          org.apache.iceberg.io.OutputFileFactory.builderFor(other, 9, 9)
              .format(org.apache.iceberg.FileFormat.PUFFIN)
              .build();
      var writer = new org.apache.iceberg.deletes.BaseDVFileWriter(files, path -> null);
      try (writer) {
        writer.delete(location, 1, other.spec(), null);
      } catch (java.io.IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
      var delta = other.newRowDelta();
      writer.result().deleteFiles().forEach(delta::addDeletes);
      delta.commit();
    }
  }

  @Test
  void positionDeletesInFormatVersion2BecomeOnePositionDeleteFilePerDataFile() throws Exception {
    var harness = open();
    harness.processElement(new StreamRecord<>(files("a", false, 0)));
    harness.snapshot(1, 1);
    harness.notifyOfCompletedCheckpoint(1);
    String a = TestTables.dataFile("a").location();

    harness.processElement(new StreamRecord<>(positions(a, 1, 2)));
    harness.snapshot(2, 2);
    harness.notifyOfCompletedCheckpoint(2);
    harness.processElement(new StreamRecord<>(positions(a, 3)));
    harness.snapshot(3, 3);
    harness.notifyOfCompletedCheckpoint(3);

    // The second checkpoint's file holds the first's positions too and replaced it.
    assertThat(deletesOf(a))
        .singleElement()
        .satisfies(
            d -> {
              assertThat(d.format()).isEqualTo(org.apache.iceberg.FileFormat.PARQUET);
              assertThat(d.recordCount()).isEqualTo(3);
              assertThat(org.apache.iceberg.util.ContentFileUtil.referencedDataFile(d))
                  .hasToString(a);
            });
    assertThat(snapshots().get(2).summary())
        .containsEntry(SnapshotSummaryKeys.DELETES_FELL_BACK, "0")
        .containsEntry("removed-position-delete-files", "1");

    // A compaction of a removes its delete file with it.
    harness.processElement(new StreamRecord<>(compactedInto(a, "b", 0, 4)));
    harness.snapshot(4, 4);
    harness.notifyOfCompletedCheckpoint(4);
    table.refresh();
    assertThat(table.currentSnapshot().summary())
        .containsEntry(SnapshotSummaryKeys.DATA_FILES_COMPACTED, "1")
        .containsEntry("total-delete-files", "0");
  }

  @Test
  void positionDeletesInFormatVersion2FollowTheTablesDeleteGranularity() throws Exception {
    table
        .updateProperties()
        .set(org.apache.iceberg.TableProperties.DELETE_GRANULARITY, "partition")
        .commit();
    var harness = openWithFilesAAndBCommitted();
    String a = TestTables.dataFile("a").location();
    String b = TestTables.dataFile("b").location();

    ChangeCommittable both =
        new ChangeCommittable(
            List.of(),
            List.of(),
            List.of(),
            ChangeStats.EMPTY,
            io.icebergcdc.commit.PositionDeletes.of(
                Map.of(a, new long[] {1, 2}, b, new long[] {5})),
            0);
    harness.processElement(new StreamRecord<>(both));
    harness.snapshot(2, 2);
    harness.notifyOfCompletedCheckpoint(2);

    // One file for the partition, whatever data files its deletes are in.
    List<org.apache.iceberg.DeleteFile> ofA = deletesOf(a);
    assertThat(ofA).singleElement().satisfies(d -> assertThat(d.recordCount()).isEqualTo(3));
    assertThat(deletesOf(b))
        .singleElement()
        .satisfies(d -> assertThat(d.location()).isEqualTo(ofA.get(0).location()));
  }

  /**
   * A compaction of {@code file} whose live rows, at {@code positions}, the writer wrote into a new
   * data file named after {@code into}, deleting them in {@code file} in case it is gone.
   */
  private ChangeCommittable compactedInto(String file, String into, long... positions) {
    return new ChangeCommittable(
        files(into, false, 0).dataFiles(),
        List.of(),
        List.of(),
        ChangeStats.EMPTY,
        io.icebergcdc.commit.PositionDeletes.of(Map.of(file, positions)),
        0,
        List.of(file));
  }

  /** A committer that has committed checkpoint 1, which added data files "a" and "b". */
  private OneInputStreamOperatorTestHarness<ChangeCommittable, Void> openWithFilesAAndBCommitted()
      throws Exception {
    var harness = open();
    harness.processElement(new StreamRecord<>(files("a", false, 0)));
    harness.processElement(new StreamRecord<>(files("b", false, 0)));
    harness.snapshot(1, 1);
    harness.notifyOfCompletedCheckpoint(1);
    return harness;
  }

  private List<String> liveDataFiles() throws Exception {
    table.refresh();
    List<String> live = new ArrayList<>();
    try (var tasks = table.newScan().planFiles()) {
      tasks.forEach(t -> live.add(t.file().location()));
    }
    return live;
  }

  private static ChangeCommittable positions(String file, long... positions) {
    return new ChangeCommittable(
        List.of(),
        List.of(),
        List.of(),
        ChangeStats.EMPTY,
        io.icebergcdc.commit.PositionDeletes.of(Map.of(file, positions)),
        0);
  }

  private List<org.apache.iceberg.DeleteFile> deletesOf(String dataFile) throws Exception {
    table.refresh();
    List<org.apache.iceberg.DeleteFile> deletes = new ArrayList<>();
    try (var tasks = table.newScan().planFiles()) {
      for (var task : tasks) {
        if (task.file().location().equals(dataFile)) {
          deletes.addAll(task.deletes());
        }
      }
    }
    return deletes;
  }

  @Test
  void withoutCheckpointsTheEndOfInputCommits() throws Exception {
    var harness = harness(null);
    harness.getStreamConfig().setCheckpointingEnabled(false);
    harness.open();
    harness.processElement(new StreamRecord<>(files("a", false, 0)));
    harness.endInput();
    assertThat(committedCheckpoints())
        .containsExactly(Long.toString(IcebergCommitterOperator.END_OF_INPUT_CHECKPOINT_ID));
  }

  @Test
  void eachRunUnderOneJobIdCommitsItsEndOfInputOnceAndATaskRunAgainNone() throws Exception {
    // Flink's application mode with high availability derives the job id from the cluster id:
    // every run of a deployment has the same.
    org.apache.flink.api.common.JobID fixed = new org.apache.flink.api.common.JobID(0, 0);
    IcebergCommitterOperator secondRun = null;
    for (String file : List.of("first-run", "second-run")) {
      secondRun =
          new IcebergCommitterOperator(
              TestTables.loader(warehouse),
              null,
              null,
              BoundedWrite.NONE,
              IcebergCommitterOperator.DEFAULT_CATALOG_RETRY_TIMEOUT);
      endInputOf(org.apache.flink.util.InstantiationUtil.clone(secondRun), fixed, file);
    }
    String end = Long.toString(IcebergCommitterOperator.END_OF_INPUT_CHECKPOINT_ID);
    assertThat(committedCheckpoints()).containsExactly(end, end);
    assertThat(snapshots().get(0).summary().get(SnapshotSummaryKeys.RUN_ID))
        .isNotEqualTo(snapshots().get(1).summary().get(SnapshotSummaryKeys.RUN_ID))
        .isNotNull();

    // The second run's task, run again after its commit, finds it and commits nothing.
    endInputOf(org.apache.flink.util.InstantiationUtil.clone(secondRun), fixed, "second-run");
    assertThat(committedCheckpoints()).containsExactly(end, end);
  }

  /**
   * An end of input committed by a build before run ids names no run: a later run under the same
   * job id commits its own end of input rather than take that one for it (it committed nothing).
   */
  @Test
  void anEndOfInputThatNamesNoRunIsNoLaterRunsOwn() throws Exception {
    org.apache.flink.api.common.JobID fixed = new org.apache.flink.api.common.JobID(0, 0);
    IcebergCommitterOperator operator =
        new IcebergCommitterOperator(
            TestTables.loader(warehouse),
            null,
            null,
            BoundedWrite.NONE,
            IcebergCommitterOperator.DEFAULT_CATALOG_RETRY_TIMEOUT);
    endInputOf(operator, fixed, "first-run");
    // The same commit as an earlier build made it: without a run id.
    table.refresh();
    var earlier = table.newAppend().appendFile(TestTables.dataFile("earlier-build"));
    table
        .currentSnapshot()
        .summary()
        .forEach(
            (key, value) -> {
              if (key.startsWith("iceberg-cdc.") && !key.equals(SnapshotSummaryKeys.RUN_ID)) {
                earlier.set(key, value);
              }
            });
    earlier.commit();

    // A run of its own: the run id is drawn when the job is built.
    IcebergCommitterOperator later =
        new IcebergCommitterOperator(
            TestTables.loader(warehouse),
            null,
            null,
            BoundedWrite.NONE,
            IcebergCommitterOperator.DEFAULT_CATALOG_RETRY_TIMEOUT);
    endInputOf(later, fixed, "later-run");
    String end = Long.toString(IcebergCommitterOperator.END_OF_INPUT_CHECKPOINT_ID);
    assertThat(committedCheckpoints()).containsExactly(end, end, end);
  }

  private void endInputOf(
      IcebergCommitterOperator operator, org.apache.flink.api.common.JobID job, String file)
      throws Exception {
    var harness =
        new OneInputStreamOperatorTestHarness<>(
            operator,
            new SimpleVersionedSerializerTypeSerializerProxy<>(ChangeCommittableSerializer::new),
            new org.apache.flink.runtime.operators.testutils.MockEnvironmentBuilder()
                .setJobID(job)
                .build());
    harnesses.add(harness);
    harness.getStreamConfig().setOperatorID(OPERATOR_ID);
    harness.getStreamConfig().setCheckpointingEnabled(false);
    harness.open();
    harness.processElement(new StreamRecord<>(files(file, false, 0)));
    harness.endInput();
  }

  private OneInputStreamOperatorTestHarness<ChangeCommittable, Void> overwriting(
      Overwrite overwrite) throws Exception {
    var harness = harness(null, overwrite);
    harness.getStreamConfig().setCheckpointingEnabled(false);
    harness.open();
    return harness;
  }

  @Test
  void anOverwriteOfTheWholeTableReplacesItsRowsInOneSnapshot() throws Exception {
    var append = harness(null);
    append.getStreamConfig().setCheckpointingEnabled(false);
    append.open();
    append.processElement(new StreamRecord<>(files("old", false, 0)));
    append.endInput();

    table.refresh();
    long planned = table.currentSnapshot().snapshotId();
    var harness = overwriting(new Overwrite(Overwrite.Scope.TABLE, Map.of(), false, planned));
    harness.processElement(new StreamRecord<>(files("new", false, 0)));
    harness.endInput();

    Snapshot overwrite = snapshots().get(1);
    assertThat(overwrite.operation()).isEqualTo(DataOperations.OVERWRITE);
    assertThat(overwrite.summary())
        .containsEntry("deleted-data-files", "1")
        .containsEntry("added-data-files", "1")
        .containsEntry(SnapshotSummaryKeys.OVERWRITE, "the whole table");
  }

  @Test
  void anOverwriteWithoutRowsFailsAndCommitsNothingUnlessAllowed() throws Exception {
    var refused = overwriting(new Overwrite(Overwrite.Scope.TABLE, Map.of(), false, null));
    refused.processElement(new StreamRecord<>(ChangeCommittable.ofStats(ChangeStats.EMPTY)));
    assertThatThrownBy(refused::endInput)
        .hasMessageContaining("read no rows, so it would delete every row of the whole table")
        .hasMessageContaining("'sink.overwrite.allow-empty-input' = 'true'");
    assertThat(snapshots()).isEmpty();

    var allowed =
        overwriting(new Overwrite(Overwrite.Scope.PARTITIONS_IN_INPUT, Map.of(), true, null));
    allowed.endInput();
    assertThat(snapshots()).as("nothing to replace").isEmpty();
  }

  @Test
  void rowsAnotherWriterAddsWhileAnOverwriteRunsFailItInsteadOfBeingReplacedUnseen()
      throws Exception {
    table.newAppend().appendFile(TestTables.dataFile("before")).commit();
    long planned = table.currentSnapshot().snapshotId();
    table.newAppend().appendFile(TestTables.dataFile("concurrent")).commit();

    var harness = overwriting(new Overwrite(Overwrite.Scope.TABLE, Map.of(), false, planned));
    harness.processElement(new StreamRecord<>(files("new", false, 0)));
    assertThatThrownBy(harness::endInput)
        .hasMessageContaining("conflicts with a concurrent change");
    assertThat(snapshots()).hasSize(2);
  }

  @Test
  void rowsAnotherWriterCommitsToATableEmptyWhenTheOverwriteWasPlannedFailIt() throws Exception {
    // Planned on an empty table: the table's first snapshot, another writer's, is concurrent too.
    table.newAppend().appendFile(TestTables.dataFile("concurrent")).commit();

    var harness = overwriting(new Overwrite(Overwrite.Scope.TABLE, Map.of(), false, null));
    harness.processElement(new StreamRecord<>(files("new", false, 0)));
    assertThatThrownBy(harness::endInput)
        .hasMessageContaining("conflicts with a concurrent change");
    assertThat(snapshots()).hasSize(1);

    var dynamic =
        overwriting(new Overwrite(Overwrite.Scope.PARTITIONS_IN_INPUT, Map.of(), false, null));
    dynamic.processElement(new StreamRecord<>(files("new", false, 0)));
    assertThatThrownBy(dynamic::endInput)
        .hasMessageContaining("conflicts with a concurrent change");
    assertThat(snapshots()).hasSize(1);
  }

  @Test
  void anOverwriteRefusesDeletes() throws Exception {
    var harness = overwriting(new Overwrite(Overwrite.Scope.TABLE, Map.of(), false, null));
    harness.processElement(new StreamRecord<>(files("a", true, 0)));
    assertThatThrownBy(harness::endInput).hasMessageContaining("takes rows to insert");
    assertThat(snapshots()).isEmpty();
  }

  private OneInputStreamOperatorTestHarness<ChangeCommittable, Void> batch(
      CommitListener listener, BoundedWrite bounded) throws Exception {
    var harness = harness(listener, null, bounded);
    harness.getStreamConfig().setCheckpointingEnabled(false);
    harness.open();
    return harness;
  }

  @Test
  void aLoadRetriedWithItsWriteIdAfterAnUncertainOutcomeCommitsNothing() throws Exception {
    BoundedWrite load = BoundedWrite.NONE.withWriteId("daily-2026-11-30");
    CommitListener answerLost =
        new CommitListener() {
          @Override
          public void afterCommit(long checkpointId, Snapshot snapshot) {
            throw new IllegalStateException("the answer of the commit was lost");
          }
        };
    var first = batch(answerLost, load);
    first.processElement(new StreamRecord<>(files("a", false, 0)));
    assertThatThrownBy(first::endInput).hasStackTraceContaining("answer of the commit was lost");
    assertThat(snapshots()).hasSize(1);
    assertThat(snapshots().get(0).summary())
        .containsEntry(SnapshotSummaryKeys.WRITE_ID, "daily-2026-11-30");

    List<String> heard = new ArrayList<>();
    CommitListener listener =
        new CommitListener() {
          @Override
          public void alreadyPublished(String writeId, Snapshot snapshot) {
            heard.add(writeId + "@" + snapshot.snapshotId());
          }
        };
    var retry = batch(listener, load);
    retry.processElement(new StreamRecord<>(files("a-again", false, 0)));
    retry.endInput();
    assertThat(snapshots()).as("the retry publishes nothing").hasSize(1);
    assertThat(heard).containsExactly("daily-2026-11-30@" + snapshots().get(0).snapshotId());

    var other = batch(null, BoundedWrite.NONE.withWriteId("daily-2026-12-01"));
    other.processElement(new StreamRecord<>(files("b", false, 0)));
    other.endInput();
    assertThat(snapshots()).as("another write id is another load").hasSize(2);
  }

  @Test
  void aLoadRetriedWithItsWriteIdAfterAFailureBeforePublicationPublishesOnce() throws Exception {
    BoundedWrite load = BoundedWrite.NONE.withWriteId("daily-2026-11-30");
    var first = batch(new FailingListener(), load);
    first.processElement(new StreamRecord<>(files("a", false, 0)));
    assertThatThrownBy(first::endInput).hasStackTraceContaining("injected failure");
    assertThat(snapshots()).isEmpty();

    var retry = batch(null, load);
    retry.processElement(new StreamRecord<>(files("a", false, 0)));
    retry.endInput();
    assertThat(snapshots()).hasSize(1);
    assertThat(snapshots().get(0).summary())
        .containsEntry(SnapshotSummaryKeys.WRITE_ID, "daily-2026-11-30");
  }

  @Test
  void aWriteIdNeedsBatchExecution() {
    assertThatThrownBy(() -> harness(null, null, BoundedWrite.NONE.withWriteId("w")).open())
        .hasMessageContaining("with a write id ('w')")
        .hasMessageContaining("'execution.runtime-mode' = 'batch'");
  }

  @Test
  void aRefusedStartClosesTheTableLoaderItOpened() throws Exception {
    CountingLoader loader = new CountingLoader(TestTables.loader(warehouse));
    var harness =
        new OneInputStreamOperatorTestHarness<>(
            new IcebergCommitterOperator(
                loader,
                null,
                null,
                BoundedWrite.NONE.withWriteId("w"),
                IcebergCommitterOperator.DEFAULT_CATALOG_RETRY_TIMEOUT),
            1,
            1,
            0,
            new SimpleVersionedSerializerTypeSerializerProxy<>(ChangeCommittableSerializer::new),
            OPERATOR_ID);
    harnesses.add(harness);
    assertThatThrownBy(harness::open).hasMessageContaining("with a write id ('w')");
    assertThat(loader.opened).isEqualTo(1);
    assertThat(loader.closed).as("closed by the committer that refused to start").isEqualTo(1);
  }

  /** A table loader that counts its opens and closes. */
  private static final class CountingLoader implements org.apache.iceberg.flink.TableLoader {
    private static final long serialVersionUID = 1L;
    private final org.apache.iceberg.flink.TableLoader delegate;
    int opened;
    int closed;

    CountingLoader(org.apache.iceberg.flink.TableLoader delegate) {
      this.delegate = delegate;
    }

    @Override
    public void open() {
      opened++;
      delegate.open();
    }

    @Override
    public boolean isOpen() {
      return delegate.isOpen();
    }

    @Override
    public Table loadTable() {
      return delegate.loadTable();
    }

    @Override
    public org.apache.iceberg.flink.TableLoader clone() {
      return new CountingLoader(delegate.clone());
    }

    @Override
    public void close() throws java.io.IOException {
      closed++;
      delegate.close();
    }
  }

  @Test
  void aStatementSaysWhatItDidAndFailsOnChangesCommittedAfterItsRead() throws Exception {
    table.newAppend().appendFile(TestTables.dataFile("before")).commit();
    long read = table.currentSnapshot().snapshotId();

    var update = batch(null, BoundedWrite.NONE.withStatement("UPDATE", read));
    update.processElement(new StreamRecord<>(files("updated", false, 0)));
    update.endInput();
    Snapshot updated = snapshots().get(1);
    assertThat(updated.summary()).containsEntry(SnapshotSummaryKeys.STATEMENT, "UPDATE");

    table.newAppend().appendFile(TestTables.dataFile("concurrent")).commit();
    var stale = batch(null, BoundedWrite.NONE.withStatement("UPDATE", updated.snapshotId()));
    stale.processElement(new StreamRecord<>(files("updated-again", false, 0)));
    assertThatThrownBy(stale::endInput).hasMessageContaining("conflicts with a concurrent change");
    assertThat(snapshots()).hasSize(3);
  }

  /** Fails the first commit it sees. */
  private static final class FailingListener implements CommitListener {
    private static final long serialVersionUID = 1L;
    private boolean failed;

    @Override
    public void beforeCommit(long checkpointId) {
      if (!failed) {
        failed = true;
        throw new IllegalStateException("injected failure");
      }
    }
  }
}
