package io.icebergcdc.commit.internal;

import io.icebergcdc.commit.CommitException;
import io.icebergcdc.commit.TableThreads;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableCommit;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.rest.RESTCatalog;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Commits each checkpoint of several tables as one transaction of their catalog (a REST catalog's
 * multi-table commit): a reader sees all the tables that a checkpoint changed take their new
 * snapshots at once, or none of them. Each table's snapshot is made as its {@link
 * SnapshotCommitter} makes it, with the same summary, in a transaction of that table ({@link
 * SnapshotCommitter#stage}); the catalog then commits them all, checking that no table changed
 * since its snapshot was made.
 *
 * <p>Which checkpoints each table owes is its {@link TableCommitter}'s bookkeeping ({@link
 * TableCommitter.Due}); checkpoints are committed in order, each as one transaction of the tables
 * with files in it.
 *
 * <p><b>Failures:</b> where another writer changed one of the tables first, the catalog refuses the
 * transaction as a whole: every snapshot is made again on the tables as they are now, up to {@link
 * #MAX_ATTEMPTS} times. A catalog that cannot be reached is waited for as by a commit of one table
 * ({@link CatalogOutage}), the tables' reads too. Before a new attempt after a refusal or a lost
 * answer, the snapshot logs of the tables of the attempt before say whether it was committed to
 * them after all (a catalog that commits a transaction's tables one by one may have committed some,
 * and a client may have sent the request twice): the tables that show it are done, and the others
 * go into the next attempt. Any other failure fails the job, and the restore decides from the
 * snapshot logs, as for a commit of one table: each restored checkpoint was committed to all its
 * tables or to none.
 */
final class TransactionCommitter implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(TransactionCommitter.class);

  /** How often a checkpoint's transaction is made again after another writer changed a table. */
  static final int MAX_ATTEMPTS = 5;

  private final RESTCatalog catalog;
  private final String operatorId;
  private final Duration catalogRetryTimeout;

  /**
   * @param catalog the tables' catalog, which must commit several tables at once; closed with this,
   *     or at once if it cannot
   * @param operatorId the id of the committing operator, which the snapshots record
   * @param catalogRetryTimeout how long a commit is tried again while the catalog cannot be reached
   */
  TransactionCommitter(Catalog catalog, String operatorId, Duration catalogRetryTimeout)
      throws Exception {
    if (!(catalog instanceof RESTCatalog rest)) {
      if (catalog instanceof AutoCloseable closeable) {
        closeable.close();
      }
      throw new IllegalArgumentException(
          "committing the tables of a checkpoint in one transaction needs a REST catalog, whose"
              + " multi-table commit it uses; catalog "
              + catalog.name()
              + " is a "
              + catalog.getClass().getName());
    }
    this.catalog = rest;
    this.operatorId = operatorId;
    this.catalogRetryTimeout = catalogRetryTimeout;
  }

  /**
   * Checks that each table's name, parsed as an identifier, names the table in the catalog: a
   * transaction names its tables so. A namespace or table name with a dot in it would not.
   */
  void checkNames(Map<String, TableCommitter> tables, TableThreads threads) throws Exception {
    threads.forEach(
        tables.entrySet(),
        table -> {
          String uuid = table.getValue().commits().tableUuid();
          String found;
          try {
            java.util.UUID named = catalog.loadTable(TableIdentifier.parse(table.getKey())).uuid();
            found = named == null ? null : named.toString();
          } catch (NoSuchTableException e) {
            found = "none";
          }
          if (uuid != null && !uuid.equals(found)) {
            throw new IllegalArgumentException(
                "table "
                    + table.getKey()
                    + " cannot be committed in one transaction with others: read as an identifier,"
                    + " its name names "
                    + ("none".equals(found) ? "no table" : "another table")
                    + " of the catalog (a namespace or table name with a dot in it?)");
          }
        });
  }

  /**
   * Makes the commits that are due, each checkpoint as one transaction of the tables it changed, in
   * the order of the checkpoints; the tables' work is done on {@code threads}.
   *
   * @param due what each table owes, by the name that is its identifier in the catalog
   */
  void commit(Map<String, TableCommitter.Due> due, TableThreads threads) throws Exception {
    NavigableMap<Long, Map<String, TableCommitter.Due.Commit>> byCheckpoint = new TreeMap<>();
    due.forEach(
        (table, owed) -> {
          for (TableCommitter.Due.Commit commit : owed.commits()) {
            byCheckpoint
                .computeIfAbsent(commit.checkpointId(), id -> new TreeMap<>())
                .put(table, commit);
          }
        });
    for (Map.Entry<Long, Map<String, TableCommitter.Due.Commit>> checkpoint :
        byCheckpoint.entrySet()) {
      commitCheckpoint(checkpoint.getKey(), checkpoint.getValue(), due, threads);
      checkpoint.getValue().forEach((table, commit) -> due.get(table).made(commit));
    }
    due.values().forEach(TableCommitter.Due::finish);
  }

  /**
   * Commits one checkpoint of the tables of {@code commits} in one transaction, or in several where
   * an attempt was committed to some of its tables only.
   */
  private void commitCheckpoint(
      long checkpointId,
      Map<String, TableCommitter.Due.Commit> commits,
      Map<String, TableCommitter.Due> due,
      TableThreads threads)
      throws Exception {
    CatalogOutage outage = new CatalogOutage(catalogRetryTimeout);
    Map<String, TableCommitter.Due.Commit> left = new TreeMap<>(commits);
    // The attempt sent to the catalog whose outcome is not settled: refused (a concurrent change),
    // or of an answer that was lost. It may have been committed to some of its tables: a catalog
    // may commit a transaction's tables one by one, and a client may send a request twice.
    Map<String, SnapshotCommitter.Attempt> sent = Map.of();
    boolean refused = false;
    int refusals = 0;
    Map<String, SnapshotCommitter.Attempt> committed;
    long committedMs;
    // The tables found holding the checkpoint after an answer lost or a refusal, told of with the
    // committed ones once the attempts are over.
    Map<String, Map.Entry<SnapshotCommitter.Attempt, org.apache.iceberg.Snapshot>> landed =
        new ConcurrentHashMap<>();
    while (true) {
      Map<String, SnapshotCommitter.Attempt> staged = Map.of();
      try {
        if (!sent.isEmpty()) {
          int before = landed.size();
          try {
            landed(sent, due, threads, landed);
          } finally {
            // Each found is told of once: where another table's log could not be read, the next
            // attempt looks again for the others only.
            left.keySet().removeAll(landed.keySet());
            Map<String, SnapshotCommitter.Attempt> notLanded = new TreeMap<>(sent);
            notLanded.keySet().removeAll(landed.keySet());
            sent = notLanded;
          }
          if (landed.size() > before) {
            LOG.info(
                "Checkpoint {} is in the snapshot logs of tables {} after the attempt whose answer"
                    + " was {}",
                checkpointId,
                new TreeMap<>(landed).keySet(),
                refused ? "a refusal" : "lost");
          }
          if (refused) {
            // Refused, and not in their logs: the files made for them are surely not committed.
            abandon(sent, due);
          }
          sent = Map.of();
          if (left.isEmpty()) {
            committed = Map.of();
            committedMs = 0;
            break;
          }
        }
        staged = stage(checkpointId, left, due, threads);
        List<TableCommit> transaction = new ArrayList<>(staged.size());
        staged.forEach(
            (table, attempt) -> transaction.add(attempt.toCommit(TableIdentifier.parse(table))));
        long start = System.nanoTime();
        sent = staged;
        refused = false;
        catalog.commitTransaction(transaction);
        long durationMs = (System.nanoTime() - start) / 1_000_000L;
        LOG.info(
            "Committed checkpoint {} to {} tables in one transaction in {} ms",
            checkpointId,
            staged.size(),
            durationMs);
        committed = staged;
        committedMs = durationMs;
        break;
      } catch (CommitFailedException e) {
        refused = true;
        if (++refusals >= MAX_ATTEMPTS) {
          throw new CommitException(
              "checkpoint "
                  + checkpointId
                  + " of tables "
                  + left.keySet()
                  + " was refused "
                  + MAX_ATTEMPTS
                  + " times, another writer changing one of them first: "
                  + e.getMessage(),
              e);
        }
        LOG.warn(
            "The transaction of checkpoint {} of tables {} was refused, another writer changed"
                + " one of them first (attempt {}): {}; making it again on the tables as they are",
            checkpointId,
            left.keySet(),
            refusals,
            e.getMessage());
      } catch (UnsupportedOperationException e) {
        // The server does not offer the endpoint: nothing was sent.
        abandon(staged, due);
        throw new CommitException(
            "the REST catalog does not offer multi-table commits (POST /v1/transactions/commit),"
                + " which sink.commit.atomic-across-tables needs: "
                + e.getMessage(),
            e,
            true);
      } catch (io.icebergcdc.commit.ReplacedTableException e) {
        // Its message names the table and the way out.
        throw e;
      } catch (RuntimeException e) {
        if (!CatalogOutage.isOutage(e)) {
          throw new CommitException(
              "cannot commit checkpoint "
                  + checkpointId
                  + " to tables "
                  + left.keySet()
                  + " in one transaction",
              e);
        }
        try {
          outage.pauseOrThrow(e);
        } catch (RuntimeException timedOut) {
          throw new CommitException(
              "the catalog could not be reached to commit checkpoint "
                  + checkpointId
                  + " to tables "
                  + left.keySet()
                  + " for "
                  + catalogRetryTimeout
                  + "; the job fails, and its restore reads the tables' snapshot logs to decide",
              timedOut);
        }
        LOG.warn(
            "The catalog cannot be reached to commit checkpoint {} to tables {} (attempt {});"
                + " trying again for up to {}: {}",
            checkpointId,
            left.keySet(),
            outage.failures(),
            catalogRetryTimeout,
            e.toString());
      }
    }
    // Told of outside the attempts: what fails now (a listener, reading a table back) is no
    // failure of the commit, which the catalog made.
    threads.forEach(
        landed.entrySet(),
        table ->
            due.get(table.getKey())
                .committer()
                .commits()
                .landedAs(table.getValue().getKey(), table.getValue().getValue()));
    long durationMs = committedMs;
    threads.forEach(
        committed.entrySet(),
        table ->
            due.get(table.getKey())
                .committer()
                .commits()
                .stagedCommitted(table.getValue(), durationMs));
  }

  /** Each table's snapshot of the checkpoint, made in a transaction of the table. */
  private static Map<String, SnapshotCommitter.Attempt> stage(
      long checkpointId,
      Map<String, TableCommitter.Due.Commit> commits,
      Map<String, TableCommitter.Due> due,
      TableThreads threads)
      throws Exception {
    Map<String, SnapshotCommitter.Attempt> staged = new ConcurrentHashMap<>();
    try {
      threads.forEach(
          commits.entrySet(),
          table -> {
            TableCommitter.Due owed = due.get(table.getKey());
            TableCommitter.Due.Commit commit = table.getValue();
            staged.put(
                table.getKey(),
                owed.committer()
                    .commits()
                    .stage(checkpointId, commit.committable(), commit.carried(), owed.jobId()));
          });
    } catch (Exception e) {
      abandon(staged, due);
      throw e;
    }
    return new TreeMap<>(staged);
  }

  /**
   * Adds to {@code landed} the tables of {@code sent} whose snapshot logs hold their attempt, with
   * the snapshot; throws, once all are looked at, what reading a log threw.
   */
  private static void landed(
      Map<String, SnapshotCommitter.Attempt> sent,
      Map<String, TableCommitter.Due> due,
      TableThreads threads,
      Map<String, Map.Entry<SnapshotCommitter.Attempt, org.apache.iceberg.Snapshot>> landed)
      throws Exception {
    threads.forEach(
        sent.entrySet(),
        table -> {
          org.apache.iceberg.Snapshot snapshot =
              due.get(table.getKey()).committer().commits().landed(table.getValue());
          if (snapshot != null) {
            landed.put(table.getKey(), Map.entry(table.getValue(), snapshot));
          }
        });
  }

  private static void abandon(
      Map<String, SnapshotCommitter.Attempt> staged, Map<String, TableCommitter.Due> due) {
    staged.forEach((table, attempt) -> due.get(table).committer().commits().abandon(attempt));
  }

  @Override
  public void close() throws Exception {
    catalog.close();
  }
}
