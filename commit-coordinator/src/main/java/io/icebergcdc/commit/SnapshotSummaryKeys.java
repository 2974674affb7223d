package io.icebergcdc.commit;

/** The properties that the committer adds to the summary of every snapshot it commits. */
public final class SnapshotSummaryKeys {

  private SnapshotSummaryKeys() {}

  private static final String PREFIX = "iceberg-cdc.";

  /** Whether {@code key} is one of these (they share a prefix). */
  public static boolean isOwn(String key) {
    return key.startsWith(PREFIX);
  }

  /** The Flink job whose checkpoint this snapshot commits. */
  public static final String JOB_ID = PREFIX + "job-id";

  /** The committer operator's id: stable across restarts as long as its uid is. */
  public static final String OPERATOR_ID = PREFIX + "operator-id";

  /** The checkpoint this snapshot commits. */
  public static final String CHECKPOINT_ID = PREFIX + "checkpoint-id";

  /**
   * The {@link #CHECKPOINT_ID} of the one commit at the end of a bounded input that ran without
   * checkpoints (a batch load, a drained file): {@link Long#MAX_VALUE}, later than any checkpoint.
   */
  public static final long END_OF_INPUT_CHECKPOINT_ID = Long.MAX_VALUE;

  /**
   * The run of a job without checkpoints (batch) whose end of input this snapshot commits: it tells
   * that run's commit, which a task run again after a failure finds, from that of an earlier run
   * under the same job id (Flink's application mode with high availability derives the job id from
   * {@code high-availability.cluster-id}, the same for every run of a deployment).
   */
  public static final String RUN_ID = PREFIX + "run-id";

  /**
   * The staging table whose load an atomic {@code CREATE TABLE ... AS SELECT} created the table
   * with, on the table's first snapshot.
   */
  public static final String CREATED_FROM = PREFIX + "created-from";

  public static final String ROWS_INSERTED = PREFIX + "rows-inserted";
  public static final String ROWS_UPDATED = PREFIX + "rows-updated";
  public static final String ROWS_DELETED = PREFIX + "rows-deleted";
  public static final String STALE_DROPPED = PREFIX + "stale-changes-dropped";
  public static final String DUPLICATES_DROPPED = PREFIX + "duplicate-changes-dropped";
  public static final String DEAD_LETTERED = PREFIX + "dead-lettered-changes";

  /**
   * Deletes written as equality deletes because the row's position was unknown or its data file had
   * been replaced by another writer.
   */
  public static final String DELETES_FELL_BACK = PREFIX + "deletes-fell-back";

  /**
   * Data files that the writers compacted in this snapshot: their live rows were written again into
   * the snapshot's new data files and the files removed, with their deletion vectors.
   */
  public static final String DATA_FILES_COMPACTED = PREFIX + "data-files-compacted";

  /**
   * Data files that this snapshot removes because it deletes the last of their live rows: a
   * deletion vector (or position delete file) that would mask every row is not written, the file
   * and its earlier deletes go instead.
   */
  public static final String DATA_FILES_EMPTIED = PREFIX + "data-files-emptied";

  /**
   * Rows that another writer deleted from a compacted data file while the compaction copied them:
   * this snapshot deletes their copies as well. Present only when there were any.
   */
  public static final String COMPACTED_ROWS_DELETED_MEANWHILE =
      PREFIX + "compacted-rows-deleted-meanwhile";

  /**
   * For changes read from Kafka: per topic partition, the highest offset of a record whose changes
   * this snapshot or an earlier one of the same committer holds, as {@code topic/partition=offset}
   * pairs separated by commas.
   */
  public static final String KAFKA_OFFSETS = PREFIX + "kafka-offsets";

  /**
   * For changes read from Kafka: the id of each topic whose offsets {@link #KAFKA_OFFSETS} holds,
   * as the job that committed the snapshot found it when it was built ({@code topic=id} pairs
   * separated by commas). A topic deleted and created again under its name has another id, and
   * offsets of the old topic say nothing of the new one's records.
   */
  public static final String KAFKA_TOPIC_IDS = PREFIX + "kafka-topic-ids";

  /** For an overwrite of a bounded input, what it replaced, as {@link Overwrite#describe()}. */
  public static final String OVERWRITE = PREFIX + "overwrite";

  /** {@code true} on the snapshot of a {@code TRUNCATE TABLE}, which removed every row. */
  public static final String TRUNCATE = PREFIX + "truncate";

  /**
   * The write id of a load ({@link BoundedWrite#writeId()}): a load with a write id that a snapshot
   * of the table records is not published again.
   */
  public static final String WRITE_ID = PREFIX + "write-id";

  /** The SQL statement a snapshot carries out: {@code UPDATE} or {@code DELETE}. */
  public static final String STATEMENT = PREFIX + "statement";

  /** On a snapshot of {@code add_files}: how many existing Parquet files it adopted. */
  public static final String ADDED_FILES = PREFIX + "added-files";

  /** On a snapshot of {@code add_files}: the location its files were listed under, as given. */
  public static final String ADDED_FILES_SOURCE = PREFIX + "added-files-source";

  /** The latest source position among the changes this snapshot commits. */
  public static final String SOURCE_POSITION = PREFIX + "source-position";

  /**
   * {@link #SOURCE_POSITION} as {@code SourceSequence#encode()} writes it, for a job that starts
   * without state to read back: changes of a source with one global order at or before it are
   * already in the table.
   */
  public static final String SOURCE_SEQUENCE = PREFIX + "source-sequence";

  /**
   * The source position of the latest truncate of the table that the job's key-indexed writers know
   * of (applied, or taken up from the table), as {@code SourceSequence#encode()} writes it; given
   * by each later snapshot they commit, so that a job that starts without state drops the changes
   * before it (a Kafka partition behind the others delivers one after a restart from the table's
   * offsets).
   */
  public static final String TRUNCATED_AT = PREFIX + "truncated-at";
}
