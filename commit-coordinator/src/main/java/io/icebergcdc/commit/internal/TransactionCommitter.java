package io.icebergcdc.commit.internal;

import io.icebergcdc.commit.CommitException;
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
 * ({@link CatalogOutage}); before each new attempt the snapshot log of a table of the transaction
 * says whether the attempt whose answer was lost committed after all (all tables did, or none). Any
 * other failure fails the job, and the restore decides from the snapshot logs, as for a commit of
 * one table: each restored checkpoint was committed to all its tables or to none.
 */
final class TransactionCommitter implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(TransactionCommitter.class);

  /** How often a checkpoint's transaction is made again after another writer changed a table. */
  static final int MAX_ATTEMPTS = 5;

  private final RESTCatalog catalog;
  private final String operatorId;
  private final Duration catalogRetryTimeout;

  /**
   * @param catalog the tables' catalog, which must commit several tables at once
   * @param operatorId the id of the committing operator, which the snapshots record
   * @param catalogRetryTimeout how long a commit is tried again while the catalog cannot be reached
   */
  TransactionCommitter(Catalog catalog, String operatorId, Duration catalogRetryTimeout) {
    if (!(catalog instanceof RESTCatalog rest)) {
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
   * Makes the commits that are due, each checkpoint as one transaction of the tables it changed, in
   * the order of the checkpoints; the tables' work is done on {@code threads}.
   *
   * @param due what each table owes, by the name that is its identifier in the catalog
   */
  void commit(Map<String, TableCommitter.Due> due, CommitThreads threads) throws Exception {
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

  private void commitCheckpoint(
      long checkpointId,
      Map<String, TableCommitter.Due.Commit> commits,
      Map<String, TableCommitter.Due> due,
      CommitThreads threads)
      throws Exception {
    CatalogOutage outage = new CatalogOutage(catalogRetryTimeout);
    Map<String, SnapshotCommitter.Attempt> staged = Map.of();
    for (int conflicts = 0; ; ) {
      if (outage.failures() > 0 && committedAlready(checkpointId, commits.keySet(), due)) {
        LOG.info(
            "Checkpoint {} was committed to tables {} by the transaction whose answer was lost",
            checkpointId,
            commits.keySet());
        committed(staged, due, threads, 0);
        return;
      }
      staged = stage(checkpointId, commits, due, threads);
      long start = System.nanoTime();
      try {
        List<TableCommit> transaction = new ArrayList<>(staged.size());
        staged.forEach(
            (table, attempt) -> transaction.add(attempt.toCommit(TableIdentifier.parse(table))));
        catalog.commitTransaction(transaction);
      } catch (CommitFailedException e) {
        abandon(staged, due);
        if (++conflicts >= MAX_ATTEMPTS) {
          throw new CommitException(
              "checkpoint "
                  + checkpointId
                  + " of tables "
                  + commits.keySet()
                  + " lost the race to commit to one of them "
                  + MAX_ATTEMPTS
                  + " times: "
                  + e.getMessage(),
              e,
              true);
        }
        LOG.warn(
            "The transaction of checkpoint {} of tables {} was refused, another writer changed"
                + " one of them first (attempt {}): {}; making it again on the tables as they are",
            checkpointId,
            commits.keySet(),
            conflicts,
            e.getMessage());
        continue;
      } catch (RuntimeException e) {
        if (!CatalogOutage.isOutage(e)) {
          throw new CommitException(
              "cannot commit checkpoint "
                  + checkpointId
                  + " to tables "
                  + commits.keySet()
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
                  + commits.keySet()
                  + " for "
                  + catalogRetryTimeout
                  + "; the job fails, and its restore reads the tables' snapshot logs to decide",
              timedOut);
        }
        LOG.warn(
            "The catalog cannot be reached to commit checkpoint {} to tables {} (attempt {});"
                + " trying again for up to {}: {}",
            checkpointId,
            commits.keySet(),
            outage.failures(),
            catalogRetryTimeout,
            e.toString());
        continue;
      }
      long durationMs = (System.nanoTime() - start) / 1_000_000L;
      LOG.info(
          "Committed checkpoint {} to {} tables in one transaction in {} ms",
          checkpointId,
          staged.size(),
          durationMs);
      committed(staged, due, threads, durationMs);
      return;
    }
  }

  /** Each table's snapshot of the checkpoint, made in a transaction of the table. */
  private static Map<String, SnapshotCommitter.Attempt> stage(
      long checkpointId,
      Map<String, TableCommitter.Due.Commit> commits,
      Map<String, TableCommitter.Due> due,
      CommitThreads threads)
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

  /** Whether the tables' snapshot logs show the checkpoint committed: to one table is to all. */
  private boolean committedAlready(
      long checkpointId, java.util.Collection<String> tables, Map<String, TableCommitter.Due> due) {
    TableCommitter.Due owed = due.get(tables.iterator().next());
    org.apache.iceberg.Table table = owed.committer().commits().refreshed();
    return CommitHistory.maxCommittedCheckpointId(table, owed.jobId(), operatorId) >= checkpointId;
  }

  private static void committed(
      Map<String, SnapshotCommitter.Attempt> staged,
      Map<String, TableCommitter.Due> due,
      CommitThreads threads,
      long durationMs)
      throws Exception {
    threads.forEach(
        staged.entrySet(),
        table ->
            due.get(table.getKey())
                .committer()
                .commits()
                .stagedCommitted(table.getValue(), durationMs));
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
