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
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.jobgraph.OperatorID;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.OneInputStreamOperatorTestHarness;
import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.SessionCatalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.flink.CatalogLoader;
import org.apache.iceberg.flink.TableLoader;
import org.apache.iceberg.rest.HTTPRequest;
import org.apache.iceberg.rest.ParserContext;
import org.apache.iceberg.rest.RESTCatalog;
import org.apache.iceberg.rest.RESTCatalogAdapter;
import org.apache.iceberg.rest.RESTResponse;
import org.apache.iceberg.rest.responses.ErrorResponse;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The tables of a checkpoint committed in one transaction of a REST catalog: Iceberg's REST client
 * against Iceberg's REST protocol served in this JVM ({@code RESTCatalogAdapter}) over a Hadoop
 * catalog of a temporary warehouse.
 */
class CommitInOneTransactionTest {

  private static final OperatorID OPERATOR_ID = new OperatorID();
  private static final TableIdentifier ORDERS = TableIdentifier.of("db", "orders");
  private static final TableIdentifier ITEMS = TableIdentifier.of("db", "items");

  /** The POST requests each catalog of a test answered, by path, by warehouse. */
  private static final Map<String, Map<String, AtomicInteger>> REQUESTS = new ConcurrentHashMap<>();

  /**
   * What each catalog of a test answers a transaction with after committing it, instead of its
   * answer, as often as the count says: the answer lost, or a refusal (a request sent twice).
   */
  private static final Map<String, Map.Entry<AtomicInteger, RuntimeException>> FALSE_ANSWERS =
      new ConcurrentHashMap<>();

  /** The catalogs of tests that offer no multi-table commits. */
  private static final java.util.Set<String> WITHOUT_TRANSACTIONS = ConcurrentHashMap.newKeySet();

  private static final String COMMIT_TRANSACTION = "v1/transactions/commit";
  private static final String UPDATE_ORDERS = "v1/namespaces/db/tables/orders";
  private static final String UPDATE_ITEMS = "v1/namespaces/db/tables/items";

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
    REQUESTS.remove(warehouse.toString());
    FALSE_ANSWERS.remove(warehouse.toString());
    WITHOUT_TRANSACTIONS.remove(warehouse.toString());
  }

  @Test
  void eachCheckpointOfSeveralTablesIsOneTransaction() throws Exception {
    var harness = open(null, Map.of());
    harness.processElement(file(ORDERS, "o1", 10));
    harness.processElement(file(ITEMS, "i1", 7));
    harness.snapshot(1, 1);
    harness.notifyOfCompletedCheckpoint(1);
    harness.processElement(file(ITEMS, "i2", 3));
    harness.snapshot(2, 2);
    harness.processElement(file(ORDERS, "o2", 2));
    harness.processElement(file(ITEMS, "i3", 1));
    harness.snapshot(3, 3);
    harness.notifyOfCompletedCheckpoint(3);

    assertThat(committedCheckpoints(ORDERS)).containsExactly("1", "3");
    assertThat(committedCheckpoints(ITEMS)).containsExactly("1", "2", "3");
    assertThat(table(ITEMS).currentSnapshot().summary())
        .containsEntry(SnapshotSummaryKeys.ROWS_INSERTED, "1")
        .containsEntry(SnapshotSummaryKeys.CHECKPOINT_ID, "3");
    // Checkpoints 1, 2 and 3: a transaction each, and no table committed on its own.
    assertThat(requests(COMMIT_TRANSACTION)).isEqualTo(3);
    assertThat(requests(UPDATE_ORDERS) + requests(UPDATE_ITEMS)).isZero();
  }

  @Test
  void aTableThatFailsItsSnapshotLeavesEveryTableAsItWasAndTheRestoreCommitsAllOnce()
      throws Exception {
    var harness = open(null, Map.of(ITEMS, new FailingOnce()));
    harness.processElement(file(ORDERS, "o1", 10));
    harness.processElement(file(ITEMS, "i1", 7));
    OperatorSubtaskState state = harness.snapshot(1, 1);
    assertThatThrownBy(() -> harness.notifyOfCompletedCheckpoint(1))
        .hasMessageContaining("db.items");
    // A committer of one snapshot per table would have committed orders (see the test of several
    // tables); in one transaction neither table has the checkpoint.
    assertThat(committedCheckpoints(ORDERS)).isEmpty();
    assertThat(committedCheckpoints(ITEMS)).isEmpty();

    var restored = open(state, Map.of());
    assertThat(committedCheckpoints(ORDERS)).containsExactly("1");
    assertThat(committedCheckpoints(ITEMS)).containsExactly("1");
    assertThat(requests(COMMIT_TRANSACTION)).isEqualTo(1);
    open(state, Map.of());
    assertThat(committedCheckpoints(ORDERS)).containsExactly("1");
    assertThat(committedCheckpoints(ITEMS)).containsExactly("1");

    restored.processElement(file(ORDERS, "o2", 1));
    restored.snapshot(2, 2);
    restored.notifyOfCompletedCheckpoint(2);
    assertThat(committedCheckpoints(ORDERS)).containsExactly("1", "2");
    assertThat(committedCheckpoints(ITEMS)).containsExactly("1");
  }

  @Test
  void aTransactionRefusedForAConcurrentChangeIsMadeAgainOnTheTablesAsTheyAre() throws Exception {
    // While checkpoint 1 is being made, another writer appends to items: the catalog refuses the
    // transaction (items' snapshot is not the one it was made on).
    ConcurrentAppend.reset(warehouse, ITEMS);
    var harness = open(null, Map.of(ORDERS, new ConcurrentAppend()));
    harness.processElement(file(ORDERS, "o1", 10));
    harness.processElement(file(ITEMS, "i1", 7));
    harness.snapshot(1, 1);
    harness.notifyOfCompletedCheckpoint(1);

    assertThat(requests(COMMIT_TRANSACTION)).isEqualTo(2);
    assertThat(committedCheckpoints(ORDERS)).containsExactly("1");
    // The other writer's snapshot, then checkpoint 1 on top of it: both kept.
    assertThat(committedCheckpoints(ITEMS)).containsExactly(null, "1");
    assertThat(table(ITEMS).currentSnapshot().summary())
        .containsEntry("total-data-files", "2")
        .containsEntry(SnapshotSummaryKeys.ROWS_INSERTED, "7");
  }

  @Test
  void aTransactionWhoseAnswerWasLostIsLookedUpNotMadeTwice() throws Exception {
    answerFalsely(1, new org.apache.iceberg.exceptions.ServiceFailureException("answer lost"));
    var harness = open(null, Map.of());
    harness.processElement(file(ORDERS, "o1", 10));
    harness.processElement(file(ITEMS, "i1", 7));
    harness.snapshot(1, 1);
    harness.notifyOfCompletedCheckpoint(1);

    // The catalog committed the first transaction; its answer was lost; none was sent again.
    assertThat(requests(COMMIT_TRANSACTION)).isEqualTo(1);
    assertThat(committedCheckpoints(ORDERS)).containsExactly("1");
    assertThat(committedCheckpoints(ITEMS)).containsExactly("1");
  }

  @Test
  void aTransactionRefusedAfterItWasCommittedIsNotMadeTwice() throws Exception {
    // As a request sent twice, whose second copy meets the first's commit.
    answerFalsely(1, new org.apache.iceberg.exceptions.CommitFailedException("sent twice"));
    var harness = open(null, Map.of());
    harness.processElement(file(ORDERS, "o1", 10));
    harness.processElement(file(ITEMS, "i1", 7));
    harness.snapshot(1, 1);
    harness.notifyOfCompletedCheckpoint(1);

    assertThat(requests(COMMIT_TRANSACTION)).isEqualTo(1);
    assertThat(committedCheckpoints(ORDERS)).containsExactly("1");
    assertThat(committedCheckpoints(ITEMS)).containsExactly("1");
    harness.processElement(file(ORDERS, "o2", 1));
    harness.snapshot(2, 2);
    harness.notifyOfCompletedCheckpoint(2);
    assertThat(committedCheckpoints(ORDERS)).containsExactly("1", "2");
  }

  @Test
  void aFailureAfterTheTransactionCommittedIsNoFailedCommitAndToldOfOnce() throws Exception {
    FailingAfterCommit.CALLS.set(0);
    var harness = open(null, Map.of(ITEMS, new FailingAfterCommit()));
    harness.processElement(file(ORDERS, "o1", 10));
    harness.processElement(file(ITEMS, "i1", 7));
    harness.snapshot(1, 1);
    // The listener's failure, which looks like a catalog out of reach, is its own: not a commit to
    // try again, nor one that failed.
    assertThatThrownBy(() -> harness.notifyOfCompletedCheckpoint(1))
        .hasStackTraceContaining("the listener failed after the commit")
        .satisfies(
            e ->
                assertThat(org.apache.flink.util.ExceptionUtils.stringifyException(e))
                    .doesNotContain("in one transaction"));
    assertThat(FailingAfterCommit.CALLS).hasValue(1);
    assertThat(requests(COMMIT_TRANSACTION)).isEqualTo(1);
    assertThat(committedCheckpoints(ORDERS)).containsExactly("1");
    assertThat(committedCheckpoints(ITEMS)).containsExactly("1");
  }

  /** Fails after each commit it hears of, as a catalog out of reach would. */
  private static final class FailingAfterCommit implements CommitListener {
    private static final long serialVersionUID = 1L;
    static final AtomicInteger CALLS = new AtomicInteger();

    @Override
    public void afterCommit(long checkpointId, org.apache.iceberg.Snapshot snapshot)
        throws Exception {
      CALLS.incrementAndGet();
      throw new IllegalStateException(
          "the listener failed after the commit", new java.net.ConnectException("refused"));
    }
  }

  @Test
  void aRestCatalogWithoutMultiTableCommitsFailsTheCommitNamingTheEndpoint() throws Exception {
    WITHOUT_TRANSACTIONS.add(warehouse.toString());
    var harness = open(null, Map.of());
    harness.processElement(file(ORDERS, "o1", 10));
    harness.processElement(file(ITEMS, "i1", 7));
    harness.snapshot(1, 1);
    assertThatThrownBy(() -> harness.notifyOfCompletedCheckpoint(1))
        .hasMessageContaining("does not offer multi-table commits")
        .hasMessageContaining("sink.commit.atomic-across-tables");
    assertThat(committedCheckpoints(ORDERS)).isEmpty();
    assertThat(committedCheckpoints(ITEMS)).isEmpty();
  }

  private void answerFalsely(int times, RuntimeException answer) {
    FALSE_ANSWERS.put(warehouse.toString(), Map.entry(new AtomicInteger(times), answer));
  }

  @Test
  void aCatalogWithoutMultiTableCommitsIsRefusedWhenTheCommitterStarts() {
    Map<String, IcebergCommitterOperator> tables = new LinkedHashMap<>();
    for (TableIdentifier id : List.of(ORDERS, ITEMS)) {
      tables.put(
          id.toString(),
          new IcebergCommitterOperator(
              TableLoader.fromCatalog(TestTables.catalog(warehouse), id), null));
    }
    assertThatThrownBy(
            () ->
                open(
                    IcebergCommitterOperator.ofTables(tables, TestTables.catalog(warehouse), true),
                    null))
        .hasMessageContaining("needs a REST catalog")
        .hasMessageContaining("HadoopCatalog");
  }

  private OneInputStreamOperatorTestHarness<ChangeCommittable, Void> open(
      OperatorSubtaskState restoreFrom, Map<TableIdentifier, CommitListener> listeners)
      throws Exception {
    CatalogLoader rest = new InJvmRestCatalog(warehouse.toString());
    Map<String, IcebergCommitterOperator> tables = new LinkedHashMap<>();
    for (TableIdentifier id : List.of(ORDERS, ITEMS)) {
      tables.put(
          id.toString(),
          new IcebergCommitterOperator(TableLoader.fromCatalog(rest, id), listeners.get(id)));
    }
    return open(IcebergCommitterOperator.ofTables(tables, rest, true), restoreFrom);
  }

  private OneInputStreamOperatorTestHarness<ChangeCommittable, Void> open(
      IcebergCommitterOperator operator, OperatorSubtaskState restoreFrom) throws Exception {
    var harness = CommitterTables.open(operator, OPERATOR_ID, restoreFrom);
    harnesses.add(harness);
    return harness;
  }

  private int requests(String path) {
    AtomicInteger count = REQUESTS.getOrDefault(warehouse.toString(), Map.of()).get(path);
    return count == null ? 0 : count.get();
  }

  private Table table(TableIdentifier id) {
    return CommitterTables.table(warehouse, id);
  }

  /** The checkpoint ids of the table's snapshots, oldest first (null for another writer's). */
  private List<String> committedCheckpoints(TableIdentifier id) {
    return CommitterTables.committedCheckpoints(table(id));
  }

  private StreamRecord<ChangeCommittable> file(TableIdentifier id, String name, long inserted) {
    return CommitterTables.file(table(id), id, name, inserted);
  }

  /**
   * Iceberg's REST client talking to Iceberg's REST protocol in this JVM, over the Hadoop catalog
   * of a warehouse; counts the requests by route.
   */
  private static final class InJvmRestCatalog implements CatalogLoader {
    private static final long serialVersionUID = 1L;
    private final String warehouse;

    InJvmRestCatalog(String warehouse) {
      this.warehouse = warehouse;
    }

    @Override
    public Catalog loadCatalog() {
      Catalog backend = TestTables.catalog(Path.of(warehouse)).loadCatalog();
      Map<String, AtomicInteger> requests =
          REQUESTS.computeIfAbsent(warehouse, w -> new ConcurrentHashMap<>());
      RESTCatalogAdapter adapter =
          new RESTCatalogAdapter(backend) {
            @Override
            protected <T extends RESTResponse> T execute(
                HTTPRequest request,
                Class<T> responseType,
                Consumer<ErrorResponse> errorHandler,
                Consumer<Map<String, String>> responseHeaders,
                ParserContext parserContext) {
              if (request.method() == HTTPRequest.HTTPMethod.POST) {
                String path = request.path().replaceFirst("^/", "");
                requests.computeIfAbsent(path, r -> new AtomicInteger()).incrementAndGet();
              }
              boolean transaction = request.path().endsWith(COMMIT_TRANSACTION);
              if (transaction && WITHOUT_TRANSACTIONS.contains(warehouse)) {
                throw new UnsupportedOperationException(
                    "Server does not support endpoint: POST /v1/transactions/commit");
              }
              T answer =
                  super.execute(
                      request, responseType, errorHandler, responseHeaders, parserContext);
              Map.Entry<AtomicInteger, RuntimeException> falsely = FALSE_ANSWERS.get(warehouse);
              if (transaction && falsely != null && falsely.getKey().getAndDecrement() > 0) {
                throw falsely.getValue();
              }
              return answer;
            }
          };
      RESTCatalog catalog =
          new RESTCatalog(SessionCatalog.SessionContext.createEmpty(), config -> adapter);
      catalog.setConf(new org.apache.hadoop.conf.Configuration());
      catalog.initialize(
          "rest",
          Map.of(
              CatalogProperties.URI,
              "http://in-this-jvm",
              CatalogProperties.WAREHOUSE_LOCATION,
              warehouse));
      return catalog;
    }

    @Override
    public CatalogLoader clone() {
      return new InJvmRestCatalog(warehouse);
    }
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

  /** Before the first commit it hears of, appends a file to another table, as another writer. */
  private static final class ConcurrentAppend implements CommitListener {
    private static final long serialVersionUID = 1L;
    private static volatile Path warehouse;
    private static volatile TableIdentifier other;
    private static final AtomicInteger APPENDS = new AtomicInteger();

    static void reset(Path warehouseOfTest, TableIdentifier table) {
      warehouse = warehouseOfTest;
      other = table;
      APPENDS.set(0);
    }

    @Override
    public void beforeCommit(long checkpointId) {
      if (APPENDS.getAndIncrement() == 0) {
        TestTables.catalog(warehouse)
            .loadCatalog()
            .loadTable(other)
            .newAppend()
            .appendFile(TestTables.dataFile("other-writer"))
            .commit();
      }
    }
  }
}
