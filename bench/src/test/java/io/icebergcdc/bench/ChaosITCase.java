package io.icebergcdc.bench;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * The short chaos run of CI (the long one is {@code bench/chaos.sh}, a hundred failures): twenty
 * failures, at least two of each kind (SIGKILL of the job's JVM, exceptions in a writer and in the
 * committer before, during and after its commit, the REST catalog down, another engine's
 * compaction), each recovered from, then the table equal to the model, each checkpoint committed
 * once, no referenced file missing and no orphan left ({@link ChaosBenchmark}).
 */
class ChaosITCase {

  @Test
  void twentyFailuresOfMixedKindsLeaveAnExactTableAndNoOrphans() throws Exception {
    ChaosBenchmark.Outcome outcome = ChaosBenchmark.run(20, 2500, 2000, 11, "1s");
    System.out.println(outcome.report());

    assertThat(outcome.passed()).as(outcome.report()).isTrue();
    assertThat(outcome.survived().values().stream().mapToInt(Integer::intValue).sum())
        .isEqualTo(20);
    assertThat(outcome.survived().keySet())
        .containsExactlyInAnyOrderElementsOf(ChaosBenchmark.KINDS);
    assertThat(outcome.verdict().snapshots()).as("commits").isGreaterThan(40);
  }
}
