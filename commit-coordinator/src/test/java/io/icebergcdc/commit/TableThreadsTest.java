package io.icebergcdc.commit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchException;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The work of tables started one at a time and finished on the caller's thread. */
class TableThreadsTest {

  /**
   * Work runs on the threads, as many tables at once as there are threads; each table's finish runs
   * on the caller's thread in the order started, a table waiting for the oldest when all are busy.
   */
  @Test
  void tablesInFlightRunAtOnceUpToTheThreadsAndFinishInOrderOnTheCaller() throws Exception {
    String caller = Thread.currentThread().getName();
    AtomicInteger running = new AtomicInteger();
    AtomicInteger most = new AtomicInteger();
    CountDownLatch firstTwo = new CountDownLatch(2);
    List<String> finished = new ArrayList<>();
    try (TableThreads threads = TableThreads.of(2, "test-tables")) {
      TableThreads.InFlight<String> inFlight =
          threads.inFlight(
              table -> {
                most.accumulateAndGet(running.incrementAndGet(), Math::max);
                firstTwo.countDown();
                // The first two wait for each other: they run at once.
                assertThat(firstTwo.await(10, TimeUnit.SECONDS)).isTrue();
                Thread.sleep(20);
                running.decrementAndGet();
              },
              table -> {
                assertThat(Thread.currentThread().getName()).isEqualTo(caller);
                finished.add(table);
              });
      for (String table : List.of("a", "b", "c", "d", "e")) {
        inFlight.start(table);
      }
      assertThat(finished).as("finished as the threads were needed").containsExactly("a", "b", "c");
      inFlight.finishAll();
    }
    assertThat(finished).containsExactly("a", "b", "c", "d", "e");
    assertThat(most.get()).isEqualTo(2);
  }

  /** A table's failure is thrown when it is finished, after the tables started before it. */
  @Test
  void aFailureIsThrownAsItsTableIsFinished() throws Exception {
    List<String> finished = new ArrayList<>();
    try (TableThreads threads = TableThreads.of(4, "test-tables")) {
      TableThreads.InFlight<String> inFlight =
          threads.inFlight(
              table -> {
                if (table.equals("b")) {
                  throw new IllegalStateException("b failed");
                }
              },
              finished::add);
      inFlight.start("a");
      inFlight.start("b");
      inFlight.start("c");
      assertThatThrownBy(inFlight::finishAll).hasMessage("b failed");
    }
    assertThat(finished).containsExactly("a");
  }

  /**
   * With all threads' tables unfinished, a start finishes the oldest first and throws its failure;
   * after a failure, abandoning the tables in flight waits for their work without finishing them.
   */
  @Test
  void aStartThrowsTheOldestsFailureAndTheRestIsAbandoned() throws Exception {
    List<String> finished = new ArrayList<>();
    List<String> worked = java.util.Collections.synchronizedList(new ArrayList<>());
    try (TableThreads threads = TableThreads.of(1, "test-tables")) {
      TableThreads.InFlight<String> inFlight =
          threads.inFlight(
              table -> {
                if (table.equals("a")) {
                  throw new IllegalStateException("a failed");
                }
                Thread.sleep(50);
                worked.add(table);
                throw new IllegalStateException(table + " failed too");
              },
              finished::add);
      inFlight.start("a");
      Exception failure = catchException(() -> inFlight.start("b"));
      assertThat(failure).hasMessage("a failed");
      inFlight.start("c");
      inFlight.abandon(failure);
      // abandon returned once c's work was done, and its failure is the first's suppressed.
      assertThat(worked).containsExactly("c");
      assertThat(failure.getSuppressed())
          .extracting(Throwable::getMessage)
          .containsExactly("c failed too");
    }
    assertThat(finished).isEmpty();
  }

  /**
   * A caller interrupted while it waits (a task cancelled) interrupts the work in flight and waits
   * until it ends, even work that takes the interrupt for a retry's, then throws with its interrupt
   * flag set again; nothing is finished.
   */
  @Test
  void anInterruptedCallerWaitsForTheWorkInFlightToEnd() throws Exception {
    AtomicInteger interrupts = new AtomicInteger();
    java.util.concurrent.atomic.AtomicBoolean ended =
        new java.util.concurrent.atomic.AtomicBoolean();
    CountDownLatch started = new CountDownLatch(1);
    List<String> finished = new ArrayList<>();
    TableThreads threads = TableThreads.of(2, "test-tables");
    TableThreads.InFlight<String> inFlight =
        threads.inFlight(
            table -> {
              started.countDown();
              long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(300);
              while (System.nanoTime() < until) {
                try {
                  Thread.sleep(10);
                } catch (InterruptedException e) {
                  interrupts.incrementAndGet();
                }
              }
              ended.set(true);
            },
            finished::add);
    inFlight.start("a");
    assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
    Thread caller = Thread.currentThread();
    Thread interrupter =
        new Thread(
            () -> {
              try {
                Thread.sleep(50);
              } catch (InterruptedException e) {
                return;
              }
              caller.interrupt();
            });
    interrupter.start();
    try {
      assertThatThrownBy(inFlight::finishAll).isInstanceOf(InterruptedException.class);
      assertThat(ended).as("the work ended before the caller went on").isTrue();
      assertThat(interrupts.get()).as("the work was interrupted").isPositive();
      assertThat(Thread.interrupted()).as("the caller's interrupt flag, set again").isTrue();
      assertThat(finished).isEmpty();
    } finally {
      interrupter.join();
      Thread.interrupted();
      threads.close();
    }
  }

  /** Without threads, each table's work and finish run as it is started. */
  @Test
  void withoutThreadsEachTableRunsAsItStarts() throws Exception {
    List<String> done = new ArrayList<>();
    TableThreads.InFlight<String> inFlight =
        TableThreads.none()
            .inFlight(table -> done.add("work " + table), t -> done.add("then " + t));
    inFlight.start("a");
    assertThat(done).containsExactly("work a", "then a");
    inFlight.start("b");
    inFlight.finishAll();
    assertThat(done).containsExactly("work a", "then a", "work b", "then b");
  }
}
