package io.icebergcdc.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.icebergcdc.commit.SnapshotSummaryKeys;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.Set;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;

/** What the snapshot summaries of a table say about the jobs that committed to it. */
final class Commits {

  private Commits() {}

  /**
   * The jobs that committed to the table, in the order of their first commit; fails if any of their
   * checkpoints was committed twice, or if nothing was committed.
   */
  static Set<String> jobsThatCommittedEachCheckpointOnce(Table table) {
    Set<String> commits = new HashSet<>();
    Set<String> jobs = new LinkedHashSet<>();
    for (Snapshot snapshot : table.snapshots()) {
      String job = snapshot.summary().get(SnapshotSummaryKeys.JOB_ID);
      String checkpoint = snapshot.summary().get(SnapshotSummaryKeys.CHECKPOINT_ID);
      if (checkpoint == null) {
        continue; // not ours
      }
      assertThat(commits.add(job + "/" + checkpoint))
          .as("checkpoint %s of job %s committed once to %s", checkpoint, job, table.name())
          .isTrue();
      jobs.add(job);
    }
    assertThat(commits).as("commits to %s", table.name()).isNotEmpty();
    return jobs;
  }
}
