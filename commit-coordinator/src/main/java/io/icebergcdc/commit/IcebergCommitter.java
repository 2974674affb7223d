package io.icebergcdc.commit;

import io.icebergcdc.commit.internal.IcebergCommitterOperator;
import java.time.Duration;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.iceberg.flink.TableLoader;

/**
 * The committer of a sink, as the sink's topology adds it: one operator at parallelism 1 that takes
 * the writers' {@link ChangeCommittable}s and commits each checkpoint's to the table once (see the
 * README, "Commits"). Settings not given keep their defaults: no overwrite, no bounded write, no
 * maintenance, no source position recorded.
 */
public final class IcebergCommitter {

  private final TableLoader tableLoader;
  private final CommitListener listener;
  private Overwrite overwrite;
  private BoundedWrite bounded = BoundedWrite.NONE;
  private Duration catalogRetryTimeout = IcebergCommitterOperator.DEFAULT_CATALOG_RETRY_TIMEOUT;
  private MaintenancePolicy maintenance = MaintenancePolicy.NONE;
  private String sinkTag;
  private boolean recordsSourceSequence;
  private boolean positionNeverGoesBack;
  private java.util.Map<String, String> kafkaTopicIds = java.util.Map.of();

  private IcebergCommitter(TableLoader tableLoader, CommitListener listener) {
    this.tableLoader = tableLoader;
    this.listener = listener;
  }

  /**
   * @param listener told before and after each commit (tests and benchmarks); null for none
   */
  public static IcebergCommitter of(TableLoader tableLoader, CommitListener listener) {
    return new IcebergCommitter(tableLoader, listener);
  }

  /**
   * What the job's bounded input replaces, committed once at its end; null (the default) for one
   * commit per checkpoint.
   */
  public IcebergCommitter overwrite(Overwrite overwrite) {
    this.overwrite = overwrite;
    return this;
  }

  /** The write id and statement of a bounded write, committed once at the end of its input. */
  public IcebergCommitter bounded(BoundedWrite bounded) {
    this.bounded = bounded;
    return this;
  }

  /** How long a commit is tried again while the catalog cannot be reached, before the job fails. */
  public IcebergCommitter catalogRetryTimeout(Duration timeout) {
    this.catalogRetryTimeout = timeout;
    return this;
  }

  /** What the committer does after its commits to keep the table healthy. */
  public IcebergCommitter maintenance(MaintenancePolicy policy) {
    this.maintenance = policy;
    return this;
  }

  /** The tag in the names of the files this sink's writers write ({@link OwnedFileNames}). */
  public IcebergCommitter filesNamedFor(String sinkTag) {
    this.sinkTag = sinkTag;
    return this;
  }

  /**
   * Whether snapshots record the source position they reach, and whether a commit may never move it
   * back.
   */
  public IcebergCommitter sourceSequence(boolean record, boolean neverBack) {
    this.recordsSourceSequence = record;
    this.positionNeverGoesBack = neverBack;
    return this;
  }

  /**
   * The id of each Kafka topic, by its name, that the table's changes are read from, as the job
   * found it when it was built: each snapshot records them beside its offsets ({@link
   * SnapshotSummaryKeys#KAFKA_TOPIC_IDS}), so that a job started later tells a topic deleted and
   * created again under its name from the one whose offsets the table holds. None by default.
   */
  public IcebergCommitter kafkaTopicIds(java.util.Map<String, String> ids) {
    this.kafkaTopicIds = java.util.Map.copyOf(ids);
    return this;
  }

  /**
   * One operator that commits several tables, for {@code transform} at parallelism 1: each table as
   * its committer given here would commit it, by the name its writers tag their contributions with
   * ({@link ChangeCommittable#forTable}). The tables of a checkpoint are committed one after the
   * other, each in a snapshot of its own.
   */
  public static OneInputStreamOperator<ChangeCommittable, Void> ofTables(
      java.util.Map<String, IcebergCommitter> tables) {
    return ofTables(tables, null);
  }

  /**
   * One operator that commits several tables, as {@link #ofTables(java.util.Map)}, named by their
   * identifiers in {@code catalog}: the pending checkpoints of a restored table that the operator
   * no longer commits (a table taken out of the job) are committed to it, as far as its snapshot
   * log lacks them, and then forgotten. Without a catalog, such state fails the restore.
   */
  public static OneInputStreamOperator<ChangeCommittable, Void> ofTables(
      java.util.Map<String, IcebergCommitter> tables,
      org.apache.iceberg.flink.CatalogLoader catalog) {
    return ofTables(tables, catalog, false);
  }

  /**
   * One operator that commits several tables, as {@link #ofTables(java.util.Map,
   * org.apache.iceberg.flink.CatalogLoader)}; where {@code inOneTransaction}, the tables of each
   * checkpoint are committed in one transaction of {@code catalog}, a REST catalog's multi-table
   * commit: a reader sees all the tables a checkpoint changed take their new snapshots at once, or
   * none of them. Any other catalog fails the operator when it starts.
   */
  public static OneInputStreamOperator<ChangeCommittable, Void> ofTables(
      java.util.Map<String, IcebergCommitter> tables,
      org.apache.iceberg.flink.CatalogLoader catalog,
      boolean inOneTransaction) {
    return ofTables(tables, catalog, inOneTransaction, null);
  }

  /**
   * The committer of a table that appears while the job runs (a topic created for a job that reads
   * topics by a pattern), built in the task by the name its writers tag its contributions with,
   * which is its identifier in the catalog.
   */
  @FunctionalInterface
  public interface OfNewTable extends java.io.Serializable {
    IcebergCommitter committerOf(String table);
  }

  /**
   * One operator that commits several tables, as {@link #ofTables(java.util.Map,
   * org.apache.iceberg.flink.CatalogLoader, boolean)}, and the tables that appear while the job
   * runs: the first contribution to a table it does not commit, or a restored state that holds one,
   * makes it commit that table too, as {@code newTables} builds its committer (null: such a
   * contribution fails the job, and a restored table it does not commit is a former table).
   */
  public static OneInputStreamOperator<ChangeCommittable, Void> ofTables(
      java.util.Map<String, IcebergCommitter> tables,
      org.apache.iceberg.flink.CatalogLoader catalog,
      boolean inOneTransaction,
      OfNewTable newTables) {
    java.util.Map<String, IcebergCommitterOperator> operators = new java.util.TreeMap<>();
    tables.forEach((name, committer) -> operators.put(name, committer.operatorOfOneTable()));
    return IcebergCommitterOperator.ofTables(
        operators,
        catalog,
        inOneTransaction,
        newTables == null ? null : table -> newTables.committerOf(table).operatorOfOneTable());
  }

  /** The operator, for {@code transform} at parallelism 1. */
  public OneInputStreamOperator<ChangeCommittable, Void> operator() {
    return operatorOfOneTable();
  }

  private IcebergCommitterOperator operatorOfOneTable() {
    return new IcebergCommitterOperator(
            tableLoader, listener, overwrite, bounded, catalogRetryTimeout)
        .maintenance(maintenance)
        .filesNamedFor(sinkTag)
        .sourceSequence(recordsSourceSequence, positionNeverGoesBack)
        .kafkaTopicIds(kafkaTopicIds);
  }
}
