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
 * ({@link CatalogOutage}); before each new attempt the snapshot logs of the transaction's tables
 * say whether the attempt whose answer was lost committed after all: the tables that show it are
 * done, and the others go into the next attempt (a catalog that commits a transaction's tables one
 * by one may have committed some). Any other failure fails the job, and the restore decides from
 * the snapshot logs, as for a commit of one table: each restored checkpoint was committed to all
 * its tables or to none.
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
    Map<String, TableCommitter.Due.Commit> left = new TreeMap<>(commits);
    for (int conflicts = 0; ; ) {
      if (outage.failures() > 0) {
        // The attempt whose answer was lost may have committed: to all its tables, or, with a
        // catalog that commits them one by one, to some. Those whose log shows it are done.
        Map<String, SnapshotCommitter.Attempt> landed = landed(checkpointId, staged, due);
        if (!landed.isEmpty()) {
          LOG.info(
              "Checkpoint {} was committed to tables {} by the transaction whose answer was lost",
              checkpointId,
              landed.keySet());
          committed(landed, due, threads, 0);
          left.keySet().removeAll(landed.keySet());
          if (left.isEmpty()) {
            return;
          }
        }
      }
      staged = stage(checkpointId, left, due, threads);
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
                  + left.keySet()
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
            left.keySet(),
            conflicts,
            e.getMessage());
        continue;
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

  /** The attempts of {@code staged} whose tables' snapshot logs show the checkpoint committed. */
  private Map<String, SnapshotCommitter.Attempt> landed(
      long checkpointId,
      Map<String, SnapshotCommitter.Attempt> staged,
      Map<String, TableCommitter.Due> due) {
    Map<String, SnapshotCommitter.Attempt> landed = new TreeMap<>();
    staged.forEach(
        (name, attempt) -> {
          TableCommitter.Due owed = due.get(name);
          org.apache.iceberg.Table table = owed.committer().commits().refreshed();
          if (CommitHistory.maxCommittedCheckpointId(table, owed.jobId(), operatorId)
              >= checkpointId) {
            landed.put(name, attempt);
          }
        });
    return landed;
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
