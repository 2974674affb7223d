package io.icebergcdc.jobs.pipeline;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.icebergcdc.cdc.NewSourceTableException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.flink.api.common.JobID;
import org.apache.flink.runtime.client.JobExecutionException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Where a job that ended for a new source table is built again from. */
class JobRunnerResumeTest {

  @TempDir Path dir;

  private final JobID ended = new JobID();
  private final NewSourceTableException newTable =
      new NewSourceTableException("shop.returns", "the source's tables");
  private final Exception failure =
      new Exception(new JobExecutionException(ended, "Job execution failed.", newTable));

  @Test
  void resumesFromTheEndedJobsLatestCheckpoint() throws Exception {
    Path older = Files.createDirectories(dir.resolve(ended.toString()).resolve("chk-3"));
    Files.writeString(older.resolve("_metadata"), "m");
    Files.setLastModifiedTime(
        older.resolve("_metadata"), java.nio.file.attribute.FileTime.fromMillis(1_000));
    Path newer = Files.createDirectories(dir.resolve(ended.toString()).resolve("chk-4"));
    Files.writeString(newer.resolve("_metadata"), "m");

    assertThat(JobRunner.resumePoint(dir.toString(), "/savepoints/s-1", newTable, failure))
        .isEqualTo(newer.toString());
  }

  @Test
  void resumesFromWhereItStartedIfItCompletedNoCheckpoint() throws Exception {
    Files.createDirectories(dir.resolve(ended.toString()).resolve("shared"));

    assertThat(JobRunner.resumePoint(dir.toString(), "/savepoints/s-1", newTable, failure))
        .isEqualTo("/savepoints/s-1");
    assertThat(JobRunner.resumePoint(dir.toString(), null, newTable, failure)).isNull();
  }

  /**
   * A directory that only the cluster mounts: resuming from where the job started would read again
   * (or skip) what it did since, so the command ends, saying how to resume.
   */
  /**
   * The checkpoint directory seen, not the job's: on a file system, another directory at the
   * cluster's path (the job's is where only the cluster sees it), so the command ends rather than
   * resume from where the job started; on an object store the job's shows only once a checkpoint
   * wrote there.
   */
  @Test
  void onlyAnObjectStoreMayShowTheCheckpointDirectoryWithoutTheJobs() {
    assertThatThrownBy(
            () -> JobRunner.resumePoint(dir.toString(), "/savepoints/s-1", newTable, failure))
        .hasMessageContaining("its checkpoints cannot be seen from here");
    assertThat(io.icebergcdc.jobs.Checkpoints.isObjectStore("s3://lake/checkpoints")).isTrue();
    assertThat(io.icebergcdc.jobs.Checkpoints.isObjectStore("S3A://lake/checkpoints")).isTrue();
    assertThat(io.icebergcdc.jobs.Checkpoints.isObjectStore(dir.toString())).isFalse();
    assertThat(io.icebergcdc.jobs.Checkpoints.isObjectStore("hdfs://nn/checkpoints")).isFalse();
  }

  @Test
  void endsWhereTheEndedJobsCheckpointsCannotBeSeen() {
    String onlyTheCluster = dir.resolve("mounted-on-the-cluster").toString();
    assertThatThrownBy(
            () -> JobRunner.resumePoint(onlyTheCluster, "/savepoints/s-1", newTable, failure))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage(
            "source shop.returns appeared, and the job ended to be built again with a table for"
                + " it, but its checkpoints cannot be seen from here (under "
                + onlyTheCluster
                + "): run it again with --restore-from and the job's latest checkpoint");
    assertThatThrownBy(
            () ->
                JobRunner.resumePoint(
                    onlyTheCluster, "/savepoints/s-1", newTable, new Exception(newTable)))
        .hasMessageContaining("its checkpoints cannot be seen from here: run it again");
  }
}
