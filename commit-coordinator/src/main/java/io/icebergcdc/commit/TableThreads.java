package io.icebergcdc.commit;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.apache.flink.util.ExceptionUtils;
import org.apache.flink.util.concurrent.ExecutorThreadFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where an operator of several tables does the work of each table that mostly waits on the catalog
 * and the file system (the committer's commits, restores and staging; the writers' reads of their
 * tables for compaction and the closing of their files at a checkpoint, which on object storage
 * uploads them): on threads of its own, several tables at once, each table on one thread at a time,
 * while the task thread waits until all are done ({@link #forEach}) or goes on with other tables
 * ({@link #inFlight}). An operator of one table works on the task thread, but for the closing of
 * its files of several partitions, where each file is the work of a thread: any work that mostly
 * waits and touches nothing of the others'.
 *
 * <p>A job of hundreds of tables committed one after the other took longer than its checkpoint
 * interval; on object storage its writers' reads of their tables, and then the uploads of their
 * files, one after the other, took most of their task threads' busy time.
 */
public final class TableThreads implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(TableThreads.class);

  /** What is done for each table. */
  @FunctionalInterface
  public interface Action<T> {
    void run(T table) throws Exception;
  }

  /** The threads, or null to work on the caller's. */
  private final ExecutorService threads;

  private final int count;

  /** Whether {@link #close} waits for the work in flight to end. */
  private final boolean waitsOnClose;

  private TableThreads(ExecutorService threads, int count, boolean waitsOnClose) {
    this.threads = threads;
    this.count = count;
    this.waitsOnClose = waitsOnClose;
  }

  /** Work on the caller's thread, one table after the other. */
  public static TableThreads none() {
    return new TableThreads(null, 1, true);
  }

  /** How many tables' work runs at once: 1 on the caller's thread. */
  public int threads() {
    return count;
  }

  /** Up to {@code count} threads, named after {@code name}. */
  public static TableThreads of(int count, String name) {
    return new TableThreads(pool(count, name), count, true);
  }

  /**
   * Up to {@code count} threads for work that changes nothing outside the task (reads): {@link
   * #close} interrupts it without waiting for it to end, so that a read blocked on the network does
   * not hold up the task's cancellation.
   */
  public static TableThreads forReads(int count, String name) {
    return new TableThreads(pool(count, name), count, false);
  }

  /** Up to {@code count} threads, started as work comes and ended after a minute without any. */
  private static ExecutorService pool(int count, String name) {
    ThreadPoolExecutor pool =
        new ThreadPoolExecutor(
            count,
            count,
            1,
            TimeUnit.MINUTES,
            new LinkedBlockingQueue<>(),
            new ExecutorThreadFactory(name));
    pool.allowCoreThreadTimeOut(true);
    return pool;
  }

  /**
   * Runs {@code action} for each of {@code tables}, all done before this returns. The first failure
   * is thrown once all are done, with the others suppressed.
   */
  public <T> void forEach(Collection<T> tables, Action<T> action) throws Exception {
    if (threads == null) {
      for (T table : tables) {
        action.run(table);
      }
      return;
    }
    List<Future<?>> running = new ArrayList<>(tables.size());
    for (T table : tables) {
      running.add(submit(table, action));
    }
    Exception failure = null;
    for (Future<?> table : running) {
      try {
        await(table);
      } catch (InterruptedException e) {
        throw e;
      } catch (Exception e) {
        failure = ExceptionUtils.firstOrSuppressed(e, failure);
      }
    }
    if (failure != null) {
      throw failure;
    }
  }

  /**
   * Work for tables started one at a time ({@link InFlight#start}) and run on these threads, at
   * most {@link #threads()} tables started and not finished at once, while the caller goes on; once
   * a table's {@code work} is done, its {@code then} runs on the caller's thread, in the order the
   * tables were started: when the caller starts one more than that many, or at {@link
   * InFlight#finishAll}. Without threads ({@link #none}) both run at the start.
   */
  public <T> InFlight<T> inFlight(Action<T> work, Action<T> then) {
    return new InFlight<>(work, then);
  }

  /** See {@link #inFlight}. Not thread-safe: the caller's thread only. */
  public final class InFlight<T> {
    private final Action<T> work;
    private final Action<T> then;
    private final ArrayDeque<Map.Entry<T, Future<?>>> running = new ArrayDeque<>();

    private InFlight(Action<T> work, Action<T> then) {
      this.work = work;
      this.then = then;
    }

    /**
     * Starts the work for {@code table}, first finishing the oldest table's where as many tables as
     * threads are started and not finished. A failure of the oldest is thrown here, the others'
     * work going on: {@link #abandon} waits for it.
     */
    public void start(T table) throws Exception {
      if (threads == null) {
        work.run(table);
        then.run(table);
        return;
      }
      if (running.size() >= count) {
        finishOldest();
      }
      running.add(Map.entry(table, submit(table, work)));
    }

    /** Finishes every table started, in the order started; a failure is thrown as it comes. */
    public void finishAll() throws Exception {
      while (!running.isEmpty()) {
        finishOldest();
      }
    }

    /**
     * After {@code failure} of the caller: waits for the work of every table started and not
     * finished, without finishing it, so that nothing of it runs once the caller goes on; its
     * failures are added to {@code failure}'s suppressed.
     */
    public void abandon(Exception failure) {
      while (!running.isEmpty()) {
        try {
          await(running.poll().getValue());
        } catch (InterruptedException e) {
          failure.addSuppressed(e);
          return;
        } catch (Exception e) {
          failure.addSuppressed(e);
        }
      }
    }

    private void finishOldest() throws Exception {
      Map.Entry<T, Future<?>> oldest = running.poll();
      await(oldest.getValue());
      then.run(oldest.getKey());
    }
  }

  private <T> Future<?> submit(T table, Action<T> action) {
    return threads.submit(
        () -> {
          action.run(table);
          return null;
        });
  }

  /** Waits for {@code running}: its failure is thrown; an interrupt ends the work in flight. */
  private void await(Future<?> running) throws Exception {
    try {
      running.get();
    } catch (InterruptedException e) {
      // The task is cancelled. No commit of this attempt may land after it ends, when the next
      // attempt reads the snapshot logs, and no file may be closed after the task removes those it
      // did not hand on: the work in flight ends before it does.
      close();
      Thread.currentThread().interrupt();
      throw e;
    } catch (ExecutionException e) {
      throw e.getCause() instanceof Exception ? (Exception) e.getCause() : new Exception(e);
    }
  }

  /**
   * Interrupts the threads and waits until they have ended, whatever interrupts this thread
   * meanwhile (Flink's cancellation watchdog ends a task that never does): a commit of this attempt
   * that landed after the task ended could be committed again by the next attempt. Threads {@link
   * #forReads} are interrupted only.
   */
  @Override
  public void close() {
    if (threads == null) {
      return;
    }
    threads.shutdownNow();
    if (!waitsOnClose) {
      return;
    }
    boolean interrupted = false;
    while (true) {
      try {
        if (threads.awaitTermination(1, TimeUnit.SECONDS)) {
          break;
        }
        LOG.info("Waiting for the work of the tables in flight to end");
      } catch (InterruptedException e) {
        // Passed on: work that took the first interrupt for a retry's may heed another.
        interrupted = true;
        threads.shutdownNow();
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }
}
