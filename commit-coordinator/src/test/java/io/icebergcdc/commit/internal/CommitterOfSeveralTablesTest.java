package io.icebergcdc.commit.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.icebergcdc.commit.ChangeCommittable;
import io.icebergcdc.commit.CommitListener;
import io.icebergcdc.commit.SnapshotSummaryKeys;
import io.icebergcdc.commit.TestTables;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.jobgraph.OperatorID;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.OneInputStreamOperatorTestHarness;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.flink.TableLoader;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** One committer for several tables: each table committed as its own committer would. */
class CommitterOfSeveralTablesTest {

  private static final OperatorID OPERATOR_ID = new OperatorID();
  private static final TableIdentifier ORDERS = TableIdentifier.of("db", "orders");
  private static final TableIdentifier ITEMS = TableIdentifier.of("db", "items");

  @TempDir Path warehouse;
  private final List<OneInputStreamOperatorTestHarness<ChangeCommittable, Void>> harnesses =
      new ArrayList<>();

  @BeforeEach
  void createTables() {
    CommitterTables.create(warehouse, List.of(ORDERS, ITEMS));
  }

  @AfterEach
  void closeHarnesses() throws Exception {
    for (var harness : harnesses) {
      harness.close();
    }
  }

  private OneInputStreamOperatorTestHarness<ChangeCommittable, Void> open(
      OperatorSubtaskState restoreFrom, Map<TableIdentifier, CommitListener> listeners)
      throws Exception {
    Map<String, IcebergCommitterOperator> tables = new LinkedHashMap<>();
    for (TableIdentifier id : List.of(ORDERS, ITEMS)) {
      tables.put(
          id.toString(),
          new IcebergCommitterOperator(
              TableLoader.fromCatalog(TestTables.catalog(warehouse), id), listeners.get(id)));
    }
    return open(IcebergCommitterOperator.ofTables(tables), restoreFrom);
  }

  private OneInputStreamOperatorTestHarness<ChangeCommittable, Void> open(
      IcebergCommitterOperator operator, OperatorSubtaskState restoreFrom) throws Exception {
    var harness = CommitterTables.open(operator, OPERATOR_ID, restoreFrom);
    harnesses.add(harness);
    return harness;
  }

  private Table table(TableIdentifier id) {
    return CommitterTables.table(warehouse, id);
  }

  /** The checkpoint ids of the table's snapshots, oldest first. */
  private List<String> committedCheckpoints(TableIdentifier id) {
    return CommitterTables.committedCheckpoints(table(id));
  }

  private StreamRecord<ChangeCommittable> file(TableIdentifier id, String name, long inserted) {
    return CommitterTables.file(table(id), id, name, inserted);
  }

  @Test
  void eachTableOfACheckpointIsCommittedInASnapshotOfItsOwn() throws Exception {
    var harness = open(null, Map.of());
    harness.processElement(file(ORDERS, "o1", 10));
    harness.processElement(file(ITEMS, "i1", 7));
    harness.processElement(file(ORDERS, "o2", 5));
    harness.snapshot(1, 1);
    harness.processElement(file(ITEMS, "i2", 3));
    harness.snapshot(2, 2);
    harness.notifyOfCompletedCheckpoint(2);

    assertThat(committedCheckpoints(ORDERS)).containsExactly("1");
    assertThat(committedCheckpoints(ITEMS)).containsExactly("1", "2");
    Snapshot orders = table(ORDERS).currentSnapshot();
    assertThat(orders.summary())
        .containsEntry(SnapshotSummaryKeys.ROWS_INSERTED, "15")
        .containsEntry("added-data-files", "2");
    assertThat(table(ITEMS).currentSnapshot().summary())
        .containsEntry(SnapshotSummaryKeys.ROWS_INSERTED, "3");
  }

  @Test
  void aRestoreCommitsWhatEachTableLacksAndNothingTwice() throws Exception {
    // Checkpoint 1's commit to orders fails; items takes it.
    var harness = open(null, Map.of(ORDERS, new FailingOnce()));
    harness.processElement(file(ORDERS, "o1", 10));
    harness.processElement(file(ITEMS, "i1", 7));
    OperatorSubtaskState state = harness.snapshot(1, 1);
    assertThatThrownBy(() -> harness.notifyOfCompletedCheckpoint(1))
        .hasMessageContaining("db.orders");
    assertThat(committedCheckpoints(ITEMS)).containsExactly("1");
    assertThat(committedCheckpoints(ORDERS)).isEmpty();

    var restored = open(state, Map.of());
    assertThat(committedCheckpoints(ORDERS)).containsExactly("1");
    assertThat(committedCheckpoints(ITEMS)).containsExactly("1");
    // A second failure restores from the same checkpoint: still once each.
    open(state, Map.of());
    assertThat(committedCheckpoints(ORDERS)).containsExactly("1");
    assertThat(committedCheckpoints(ITEMS)).containsExactly("1");

    restored.processElement(file(ITEMS, "i2", 1));
    restored.snapshot(2, 2);
    restored.notifyOfCompletedCheckpoint(2);
    assertThat(committedCheckpoints(ORDERS)).containsExactly("1");
    assertThat(committedCheckpoints(ITEMS)).containsExactly("1", "2");
  }

  @Test
  void withoutTheCatalogStateOfATableTheCommitterNoLongerCommitsIsRefusedNamingIt()
      throws Exception {
    var harness = open(null, Map.of());
    harness.processElement(file(ITEMS, "i1", 7));
    OperatorSubtaskState state = harness.snapshot(1, 1);

    assertThatThrownBy(() -> open(ordersOnly(false), state))
        .hasMessageContaining("table db.items")
        .hasMessageContaining("checkpoints [1]")
        .hasMessageContaining("[db.orders]");
    assertThat(committedCheckpoints(ITEMS)).isEmpty();
  }

  @Test
  void checkpointsOfATableTakenOutOfTheJobAreCommittedOnRestoreThenForgotten() throws Exception {
    var harness = open(null, Map.of());
    harness.processElement(file(ORDERS, "o1", 10));
    harness.processElement(file(ITEMS, "i1", 7));
    harness.snapshot(1, 1);
    harness.processElement(file(ITEMS, "i2", 3));
    // Checkpoint 2 completes, but the job fails before the committer hears of it.
    OperatorSubtaskState state = harness.snapshot(2, 2);

    var ordersOnly = open(ordersOnly(true), state);
    assertThat(committedCheckpoints(ORDERS)).containsExactly("1");
    assertThat(committedCheckpoints(ITEMS)).containsExactly("1", "2");
    assertThat(table(ITEMS).currentSnapshot().summary())
        .containsEntry(SnapshotSummaryKeys.ROWS_INSERTED, "3");

    // Restored again from the same state: nothing twice.
    open(ordersOnly(true), state);
    assertThat(committedCheckpoints(ITEMS)).containsExactly("1", "2");
    // The job's next state no longer holds the table: a committer without the catalog takes it.
    ordersOnly.processElement(file(ORDERS, "o2", 1));
    OperatorSubtaskState next = ordersOnly.snapshot(3, 3);
    open(ordersOnly(false), next);
    assertThat(committedCheckpoints(ORDERS)).containsExactly("1", "3");
  }

  @Test
  void aTableTakenOutOfTheJobAndDroppedSinceIsForgottenNotFailedFor() throws Exception {
    var harness = open(null, Map.of());
    harness.processElement(file(ORDERS, "o1", 10));
    harness.processElement(file(ITEMS, "i1", 7));
    OperatorSubtaskState state = harness.snapshot(1, 1);
    TestTables.catalog(warehouse).loadCatalog().dropTable(ITEMS, true);

    open(ordersOnly(true), state);
    assertThat(committedCheckpoints(ORDERS)).containsExactly("1");
  }

  /**
   * A table taken out of the job and dropped and created again since: its pending checkpoints
   * belong to the table that was dropped, and are forgotten as a dropped table's are, so that the
   * job can start without it (and then read it again from its source).
   */
  @Test
  void aTableTakenOutOfTheJobAndCreatedAgainSinceIsForgottenNotFailedFor() throws Exception {
    var harness = open(null, Map.of());
    harness.processElement(file(ORDERS, "o1", 10));
    harness.processElement(file(ITEMS, "i1", 7));
    OperatorSubtaskState state = harness.snapshot(1, 1);
    TestTables.catalog(warehouse).loadCatalog().dropTable(ITEMS, true);
    CommitterTables.create(warehouse, List.of(ITEMS));

    open(ordersOnly(true), state);
    assertThat(committedCheckpoints(ORDERS)).containsExactly("1");
    assertThat(table(ITEMS).snapshots()).isEmpty();
  }

  /**
   * A table that appeared while the job ran, restored into a job built again (started again with
   * another table list, or with the same one, without it): a table taken out of the job, whose
   * pending checkpoints are committed and which is then forgotten, not kept as a table that
   * appeared. Flink's restart of the job as it was built takes it back.
   */
  @Test
  void aTableThatAppearedIsTakenOutOfAJobBuiltAgain() throws Exception {
    TableIdentifier lines = TableIdentifier.of("db", "lines");
    CommitterTables.create(warehouse, List.of(lines));
    IcebergCommitterOperator built = ordersTakingNewTables();
    var harness = open(asBuilt(built), null);
    harness.processElement(file(ORDERS, "o1", 10));
    harness.processElement(file(ITEMS, "i1", 7));
    harness.snapshot(1, 1);
    harness.notifyOfCompletedCheckpoint(1);
    harness.processElement(file(ITEMS, "i2", 3));
    OperatorSubtaskState state = harness.snapshot(2, 2);

    IcebergCommitterOperator otherTables = takingNewTables(ORDERS, lines);
    open(otherTables, state);
    assertThat(committedCheckpoints(ITEMS)).containsExactly("1", "2");
    assertThat(otherTables.committedTables())
        .containsExactlyInAnyOrder(ORDERS.toString(), lines.toString());

    IcebergCommitterOperator sameTables = ordersTakingNewTables();
    open(sameTables, state);
    assertThat(sameTables.committedTables()).containsExactly(ORDERS.toString());
    assertThat(committedCheckpoints(ITEMS)).containsExactly("1", "2");

    // Flink's restart deserializes the committer as it was built, and takes the table back.
    IcebergCommitterOperator restarted = asBuilt(built);
    open(restarted, state);
    assertThat(restarted.committedTables())
        .containsExactlyInAnyOrder(ORDERS.toString(), ITEMS.toString());
  }

  /** {@code built} as a task deserializes it from the job, as Flink starts or restarts it. */
  private IcebergCommitterOperator asBuilt(IcebergCommitterOperator built) throws Exception {
    return org.apache.flink.util.InstantiationUtil.clone(built, getClass().getClassLoader());
  }

  private IcebergCommitterOperator committerOf(TableIdentifier table) {
    return new IcebergCommitterOperator(
        TableLoader.fromCatalog(TestTables.catalog(warehouse), table), null);
  }

  /** A committer of {@code tables} that commits the tables that appear while the job runs too. */
  private IcebergCommitterOperator takingNewTables(TableIdentifier... tables) {
    org.apache.iceberg.flink.CatalogLoader catalog = TestTables.catalog(warehouse);
    Map<String, IcebergCommitterOperator> own = new LinkedHashMap<>();
    for (TableIdentifier table : tables) {
      own.put(table.toString(), committerOf(table));
    }
    return IcebergCommitterOperator.ofTables(
        own,
        catalog,
        false,
        table ->
            new IcebergCommitterOperator(
                TableLoader.fromCatalog(catalog, TableIdentifier.parse(table)), null));
  }

  @Test
  void aCancelledCommitterEndsOnlyOnceItsCommitsInFlightHaveEnded() throws Exception {
    SlowCommit.reset();
    var harness = open(null, Map.of(ITEMS, new SlowCommit()));
    harness.processElement(file(ORDERS, "o1", 10));
    harness.processElement(file(ITEMS, "i1", 7));
    harness.snapshot(1, 1);
    Thread task = Thread.currentThread();
    Thread canceller =
        new Thread(
            () -> {
              try {
                SlowCommit.STARTED.await();
              } catch (InterruptedException e) {
                return;
              }
              task.interrupt();
            });
    canceller.start();
    try {
      assertThatThrownBy(() -> harness.notifyOfCompletedCheckpoint(1))
          .isInstanceOf(InterruptedException.class);
      // The commit in flight had ended when the task thread went on.
      assertThat(SlowCommit.ENDED.get()).isTrue();
    } finally {
      Thread.interrupted();
      canceller.join();
      // The interrupted commit's manifests may still be written by Iceberg's shared worker pool,
      // which the committer does not own; the warehouse is deleted once they are.
      awaitNoMoreWrites(warehouse);
    }
  }

  /** Waits until no file under {@code dir} has changed for half a second (ten seconds at most). */
  private static void awaitNoMoreWrites(Path dir) throws Exception {
    long deadline = System.nanoTime() + 10_000_000_000L;
    String last = null;
    while (System.nanoTime() < deadline) {
      StringBuilder state = new StringBuilder();
      try (java.util.stream.Stream<Path> files = java.nio.file.Files.walk(dir)) {
        for (Path file : files.sorted().toList()) {
          state.append(file).append(' ').append(file.toFile().length()).append('\n');
        }
      } catch (java.io.UncheckedIOException | java.io.IOException changing) {
        state.append("changing");
      }
      if (state.toString().equals(last)) {
        return;
      }
      last = state.toString();
      Thread.sleep(500);
    }
  }

  /** A commit that takes half a second, whatever interrupts it, as I/O that ignores interrupts. */
  private static final class SlowCommit implements CommitListener {
    private static final long serialVersionUID = 1L;
    static java.util.concurrent.CountDownLatch STARTED;
    static final java.util.concurrent.atomic.AtomicBoolean ENDED =
        new java.util.concurrent.atomic.AtomicBoolean();

    static void reset() {
      STARTED = new java.util.concurrent.CountDownLatch(1);
      ENDED.set(false);
    }

    @Override
    public void beforeCommit(long checkpointId) {
      STARTED.countDown();
      long end = System.nanoTime() + 500_000_000L;
      while (System.nanoTime() < end) {
        Thread.onSpinWait();
      }
      ENDED.set(true);
    }
  }

  /** A committer of the orders table alone, which knows the catalog of the tables or not. */
  private IcebergCommitterOperator ordersOnly(boolean knowsTheCatalog) {
    return IcebergCommitterOperator.ofTables(
        Map.of(
            ORDERS.toString(),
            new IcebergCommitterOperator(
                TableLoader.fromCatalog(TestTables.catalog(warehouse), ORDERS), null)),
        knowsTheCatalog ? TestTables.catalog(warehouse) : null);
  }

  /** A committer of orders that commits the tables that appear while the job runs as well. */
  private IcebergCommitterOperator ordersTakingNewTables() {
    return takingNewTables(ORDERS);
  }

  @Test
  void aTableThatAppearsWhileTheJobRunsIsCommittedAndKeptAcrossRestores() throws Exception {
    IcebergCommitterOperator built = ordersTakingNewTables();
    var harness = open(asBuilt(built), null);
    harness.processElement(file(ORDERS, "o1", 10));
    harness.processElement(file(ITEMS, "i1", 7));
    harness.snapshot(1, 1);
    harness.notifyOfCompletedCheckpoint(1);
    assertThat(committedCheckpoints(ITEMS)).containsExactly("1");
    assertThat(table(ITEMS).currentSnapshot().summary())
        .containsEntry(SnapshotSummaryKeys.ROWS_INSERTED, "7");

    // Checkpoint 2 completes, but the job fails before the committer hears of it; Flink restores
    // the job as it was built, without the new table: its pending checkpoint is committed, once,
    // and it goes on being committed, as a table of the job, not forgotten as a former one.
    harness.processElement(file(ITEMS, "i2", 3));
    OperatorSubtaskState state = harness.snapshot(2, 2);
    var restored = open(asBuilt(built), state);
    assertThat(committedCheckpoints(ITEMS)).containsExactly("1", "2");
    open(asBuilt(built), state);
    assertThat(committedCheckpoints(ITEMS)).containsExactly("1", "2");
    restored.processElement(file(ITEMS, "i3", 4));
    OperatorSubtaskState next = restored.snapshot(3, 3);
    restored.notifyOfCompletedCheckpoint(3);
    assertThat(committedCheckpoints(ITEMS)).containsExactly("1", "2", "3");
    // Its next state holds the table: a committer that takes no new tables treats it as former.
    assertThatThrownBy(() -> open(ordersOnly(false), next)).hasMessageContaining("db.items");
  }

  @Test
  void theCommitsOfTheTablesThatAppearRunAtOnceAsTheirNumberGrows() throws Exception {
    TableIdentifier lines = TableIdentifier.of("db", "lines");
    CommitterTables.create(warehouse, List.of(lines));
    IcebergCommitterOperator committer = ordersTakingNewTables();
    var harness = open(committer, null);
    assertThat(committer.commitThreads()).isEqualTo(1);
    harness.processElement(file(ORDERS, "o1", 1));
    harness.processElement(file(ITEMS, "i1", 1));
    assertThat(committer.commitThreads()).isEqualTo(2);
    harness.processElement(file(lines, "l1", 1));
    assertThat(committer.commitThreads()).isGreaterThanOrEqualTo(3);
    harness.snapshot(1, 1);
    harness.notifyOfCompletedCheckpoint(1);
    for (TableIdentifier table : List.of(ORDERS, ITEMS, lines)) {
      assertThat(committedCheckpoints(table)).as("%s", table).containsExactly("1");
    }
  }

  @Test
  void theCountsOfATableThatAppearedAndLeftTheCatalogAreDroppedItsFilesRefused() throws Exception {
    var harness = open(ordersTakingNewTables(), null);
    harness.processElement(
        new StreamRecord<>(
            ChangeCommittable.ofStats(new io.icebergcdc.cdc.ChangeStats(0, 0, 0, 0, 0, 1, null))
                .forTable("db.gone")));
    harness.processElement(file(ORDERS, "o1", 1));
    harness.snapshot(1, 1);
    harness.notifyOfCompletedCheckpoint(1);
    assertThat(committedCheckpoints(ORDERS)).containsExactly("1");

    StreamRecord<ChangeCommittable> files =
        new StreamRecord<>(file(ORDERS, "o2", 1).getValue().forTable("db.gone"));
    assertThatThrownBy(() -> harness.processElement(files))
        .hasMessageContaining("table db.gone")
        .hasMessageContaining("no longer in the catalog");
  }

  @Test
  void aContributionWithoutItsTableIsRefused() throws Exception {
    var harness = open(null, Map.of());
    StreamRecord<ChangeCommittable> untagged =
        new StreamRecord<>(file(ORDERS, "o1", 1).getValue().forTable(null));
    assertThatThrownBy(() -> harness.processElement(untagged))
        .hasMessageContaining("no table")
        .hasMessageContaining("db.items")
        .hasMessageContaining("db.orders");
    StreamRecord<ChangeCommittable> unknown =
        new StreamRecord<>(file(ORDERS, "o1", 1).getValue().forTable("db.other"));
    assertThatThrownBy(() -> harness.processElement(unknown))
        .hasMessageContaining("table db.other");
  }

  /** Fails the first commit it hears of. */
  private static final class FailingOnce implements CommitListener {
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
