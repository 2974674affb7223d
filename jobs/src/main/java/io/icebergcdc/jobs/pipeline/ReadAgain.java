package io.icebergcdc.jobs.pipeline;

import io.icebergcdc.jobs.capture.SourceTables;
import io.icebergcdc.jobs.definition.DatabaseSource;
import io.icebergcdc.jobs.definition.JobDefinition;
import io.icebergcdc.jobs.definition.JobDefinitionException;
import io.icebergcdc.jobs.definition.RuntimeDefinition;
import java.time.Duration;
import java.util.List;

/**
 * Drops a restored capture job's state of some of its tables, so that they are read whole again
 * from the source while the others go on from their state ({@code apply --read-again}): the job
 * runs without them, from its restore, until it has stopped with a savepoint. Every operator drops
 * its state of the tables the job was not built with (the source its chunks' progress, dedup and
 * the writers their keys, the committer its pending checkpoints, committed first as far as the
 * table's snapshot log lacks them, or forgotten where the catalog has no such table any more). The
 * job resumed from that savepoint with the tables takes them as tables added to the job: its
 * chunked snapshot reads them beside the log.
 */
public final class ReadAgain {

  /** How long the run without the tables may take to its savepoint before it is cancelled. */
  static final Duration TIMEOUT = Duration.ofMinutes(15);

  private ReadAgain() {}

  /**
   * Refuses tables the source does not capture (a name mistyped would drop nothing and read nothing
   * again), and all of them (the job would run without a table: start it without state instead), as
   * a {@link JobDefinitionException}, before anything runs.
   */
  static void checkCaptured(DatabaseSource source, List<String> tables) {
    List<String> captured = SourceTables.names(source);
    for (String table : tables) {
      if (!captured.contains(table)) {
        throw new JobDefinitionException(
            "--read-again "
                + table
                + ": "
                + source.origin()
                + " has no such table that --tables match; it captures "
                + captured);
      }
    }
    if (tables.containsAll(captured)) {
      throw new JobDefinitionException(
          "--read-again names every table the job captures ("
              + captured
              + "): start the job without state (no --restore-from) to read them all again");
    }
  }

  /**
   * Runs {@code job}, restored as its runtime says, without {@code tables} until it has stopped
   * with a savepoint (under its checkpoint directory's {@code savepoints}, else the cluster's
   * default).
   *
   * @param tables tables of the job's source ({@code schema.table} or {@code database.table})
   * @return the savepoint, which {@code job} resumes from to read the tables again
   */
  public static String dropStateOf(JobDefinition job, List<String> tables) throws Exception {
    if (!(job.source() instanceof DatabaseSource source)) {
      throw new IllegalArgumentException("only a database capture reads tables again");
    }
    RuntimeDefinition runtime = job.runtime();
    if (runtime.restoreFrom() == null) {
      throw new IllegalArgumentException("a job without state has no state of tables to drop");
    }
    checkCaptured(source, tables);
    JobDefinition without =
        new JobDefinition(
            source.without(tables),
            job.catalog(),
            job.tables(),
            job.sinkOptions(),
            job.deadLetters(),
            runtime.allowingNonRestoredState());
    return new JobRunner(without)
        .runToSavepoint(
            runtime.checkpointDirectory() == null
                ? null
                : new org.apache.flink.core.fs.Path(runtime.checkpointDirectory(), "savepoints")
                    .toString(),
            TIMEOUT);
  }
}
