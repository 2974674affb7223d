package io.icebergcdc.sink;

import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.ChangeSchema;
import io.icebergcdc.cdc.ChangeStats;
import io.icebergcdc.cdc.DeadLetter;
import io.icebergcdc.cdc.RowKey;
import io.icebergcdc.cdc.SourceSequence;
import io.icebergcdc.cdc.typeutils.ChangeEventTypeInfo;
import io.icebergcdc.cdc.typeutils.RowKeyTypeInfo;
import io.icebergcdc.cdc.typeutils.SimpleVersionedTypeInfo;
import io.icebergcdc.commit.BoundedWrite;
import io.icebergcdc.commit.ChangeCommittable;
import io.icebergcdc.commit.ChangeCommittableSerializer;
import io.icebergcdc.commit.CommitListener;
import io.icebergcdc.commit.IcebergCommitter;
import io.icebergcdc.commit.MaintenancePolicy;
import io.icebergcdc.commit.Overwrite;
import io.icebergcdc.commit.OwnedFileNames;
import io.icebergcdc.dedup.Dedup;
import io.icebergcdc.dedup.DedupOptions;
import io.icebergcdc.sink.internal.AppendWriterOperator;
import io.icebergcdc.sink.internal.ChangeKeySelector;
import io.icebergcdc.sink.internal.ChangeWriterOperator;
import io.icebergcdc.sink.internal.CommittableOfStats;
import io.icebergcdc.sink.internal.OperatorUids;
import io.icebergcdc.sink.internal.PartitionOfRow;
import io.icebergcdc.sink.internal.PartitionedKeySelector;
import io.icebergcdc.sink.internal.PartitionedKeyTypeInfo;
import io.icebergcdc.sink.internal.PositionDeltaWriterOperator;
import io.icebergcdc.sink.internal.RowKeySelector;
import io.icebergcdc.sink.internal.TableKeySelector;
import java.util.Map;
import java.util.Objects;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.DataStreamSink;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.types.logical.RowType;
import org.apache.iceberg.DistributionMode;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.flink.FlinkSchemaUtil;
import org.apache.iceberg.flink.TableLoader;

/**
 * Applies a changelog to one Iceberg table, exactly once:
 *
 * <pre>
 *   changes -> keyBy(primary key) -> dedup -> [keyBy(partition)] -> writers -> committer (1)
 * </pre>
 *
 * <p>The dedup orders the changes of each key by source sequence and collapses each checkpoint's
 * changes of a key to its net change; the writers write Parquet data and delete files; the
 * committer commits each completed checkpoint as one Iceberg snapshot. See the README for the
 * semantics and {@link SinkOptions} and {@link DedupOptions} for the options.
 *
 * <p>Immutable; built by {@link #builder()}.
 */
public final class IcebergCdcSink {

  private static final TypeInformation<ChangeCommittable> COMMITTABLE_TYPE =
      new SimpleVersionedTypeInfo<>(ChangeCommittable.class, ChangeCommittableSerializer::new);

  private final TableLoader tableLoader;
  private final ChangeSchema schema;
  private final PartitionSpec spec;
  private final Configuration options;
  private final CommitListener commitListener;
  private final Map<String, String> writeProperties;
  private final Overwrite overwrite;
  private final BoundedWrite bounded;
  private final Distribution distribution;
  private final RowType rowType;
  private final MaintenancePolicy maintenance;
  private final SourceSequence tablePosition;
  private final boolean inSourceOrder;

  private final Schema tableSchema;
  private final String tableName;

  private IcebergCdcSink(Builder builder) {
    this.tableLoader = builder.tableLoader;
    this.schema = builder.schema;
    this.spec = builder.spec;
    this.options = builder.options;
    this.commitListener = builder.commitListener;
    this.writeProperties = builder.writeProperties;
    this.overwrite = builder.overwrite;
    this.bounded = builder.bounded;
    this.distribution = builder.distribution;
    this.rowType = builder.rowType;
    this.maintenance = builder.maintenance;
    this.tablePosition = builder.tablePosition;
    this.inSourceOrder = builder.skipChangesBeforeTablePosition;
    this.tableSchema = builder.tableSchema;
    this.tableName = builder.tableName;
  }

  public static Builder builder() {
    return new Builder();
  }

  /**
   * Adds the sink's operators after {@code changes}.
   *
   * @return the changes refused as ambiguous, when {@link DedupOptions#ON_AMBIGUOUS_CHANGE} sends
   *     them to a dead-letter output; an empty stream otherwise
   */
  public DataStream<DeadLetter> apply(DataStream<ChangeEvent> changes) {
    return applyTo(changes).deadLetters();
  }

  /**
   * Adds the sink's operators after {@code changes}, with the records that the parser before it
   * sent to the dead-letter output instead of into {@code changes} ({@code refusedUpstream}): they
   * are counted in the summary of the snapshot of the checkpoint they were refused in ({@link
   * io.icebergcdc.commit.SnapshotSummaryKeys#DEAD_LETTERED}), with the changes the dedup refuses.
   *
   * @return the changes refused as ambiguous, as {@link #apply(DataStream)}
   */
  public DataStream<DeadLetter> apply(
      DataStream<ChangeEvent> changes, DataStream<DeadLetter> refusedUpstream) {
    return applyTo(changes, refusedUpstream).deadLetters();
  }

  /** Adds the sink's operators after {@code changes}, and returns what it added. */
  public Applied applyTo(DataStream<ChangeEvent> changes) {
    return applyTo(changes, null);
  }

  private Applied applyTo(DataStream<ChangeEvent> changes, DataStream<DeadLetter> refusedUpstream) {
    OperatorUids uids = uids();
    Contributions contributions = contributions(changes, uids, null);
    return new Applied(
        commit(contributions.committables(), uids, refusedUpstream), contributions.deadLetters());
  }

  /**
   * Adds the sink's dedup and writers after {@code changes}, for a committer that commits this
   * table with others ({@link #commitTogether}): a job of many tables then has one committer, not
   * one per table.
   *
   * @param committedAs the name the table's contributions are tagged with for that committer,
   *     unique among its tables
   */
  public Written write(DataStream<ChangeEvent> changes, String committedAs) {
    Objects.requireNonNull(committedAs, "committedAs");
    OperatorUids uids = uids();
    Contributions contributions = contributions(changes, uids, committedAs);
    return new Written(
        Map.of(committedAs, committer(uids)),
        contributions.committables(),
        contributions.deadLetters());
  }

  /**
   * Whether this sink's table can be written with others by one operator ({@link #writeTogether}):
   * a changelog, without an overwrite, whose updates and deletes are written as positions ({@code
   * sink.delete-mode = position}) and whose changes are distributed by primary key.
   */
  public boolean writesWithOthers() {
    return followsSchemaChanges() && distribution == Distribution.PRIMARY_KEY;
  }

  /**
   * Whether this sink's writer takes the rows of the schemas its table is evolved to while the job
   * runs ({@link ChangeEvent#rowSchemaId()}): the key-indexed writer of a changelog without an
   * overwrite ({@code sink.delete-mode = position}), distributed by primary key or by partition.
   */
  public boolean followsSchemaChanges() {
    return schema != null
        && overwrite == null
        && options.get(SinkOptions.DELETE_MODE) == DeleteMode.POSITION;
  }

  /**
   * Adds one operator that dedups and writes the changes of several tables, for a committer that
   * commits them with others ({@link #commitTogether}): the operators of a job do not grow with its
   * tables. Each table is written as its own sink's writer would ({@link #write}), with its own
   * files, schema, write properties and key index, its contributions tagged as {@code committedAs}
   * says.
   *
   * @param changes the changes of all the tables, each naming its table ({@link
   *     ChangeEvent#table()}) as the keys of {@code sinks} do; at the parallelism of the first sink
   * @param sinks the sink of each table by the name its changes carry; each {@link
   *     #writesWithOthers}
   * @param committedAs the name each table's contributions are tagged with for the committer, by
   *     the name its changes carry; unique
   * @param uid the writer's uid
   */
  public static Written writeTogether(
      DataStream<ChangeEvent> changes,
      Map<String, IcebergCdcSink> sinks,
      Map<String, String> committedAs,
      String uid) {
    return writeTogether(changes, sinks, committedAs, uid, null);
  }

  /**
   * Adds one operator that dedups and writes the changes of several tables, as {@link
   * #writeTogether(DataStream, Map, Map, String)}, and of the tables that appear while the job
   * runs: a change of a table it was not built with makes it write that table as {@code newTables}
   * says, committed as its name (null: such a change fails the job).
   */
  public static Written writeTogether(
      DataStream<ChangeEvent> changes,
      Map<String, IcebergCdcSink> sinks,
      Map<String, String> committedAs,
      String uid,
      NewTables newTables) {
    if (sinks.isEmpty()) {
      throw new IllegalArgumentException("no table to write");
    }
    checkAlignedCheckpoints(changes);
    Map<String, PositionDeltaWriterOperator<?>> writers = new java.util.TreeMap<>();
    Map<String, IcebergCommitter> committers = new java.util.TreeMap<>();
    Integer parallelism = null;
    java.time.Duration tombstoneTtl = null;
    for (Map.Entry<String, IcebergCdcSink> table : sinks.entrySet()) {
      IcebergCdcSink sink = table.getValue();
      // The tables share the dedup's keyed state, whose tombstones live as long as the first
      // table's option says.
      java.time.Duration ttl = sink.options.get(DedupOptions.TOMBSTONE_TTL);
      if (tombstoneTtl != null && !tombstoneTtl.equals(ttl)) {
        throw new IllegalArgumentException(
            "the tables written together must have the same "
                + DedupOptions.TOMBSTONE_TTL.key()
                + ": table "
                + sink.tableName
                + " has "
                + ttl
                + ", others "
                + tombstoneTtl);
      }
      tombstoneTtl = ttl;
      String tag = committedAs.get(table.getKey());
      if (tag == null) {
        throw new IllegalArgumentException("table " + table.getKey() + " has no name to commit as");
      }
      if (!sink.writesWithOthers()) {
        throw new IllegalArgumentException(
            "table "
                + sink.tableName
                + " cannot be written with others (an overwrite, equality deletes, or changes"
                + " distributed by partition): write it with write()");
      }
      OperatorUids uids = sink.uids();
      writers.put(table.getKey(), sink.indexedWriter(uids, tag));
      if (committers.put(tag, sink.committer(uids)) != null) {
        throw new IllegalArgumentException("two tables are committed as " + tag);
      }
      if (parallelism == null) {
        parallelism = sink.parallelism(changes);
      }
    }
    java.util.Set<String> tables = new java.util.TreeSet<>(sinks.keySet());
    SingleOutputStreamOperator<ChangeCommittable> written =
        changes
            .keyBy(new TableKeySelector(), io.icebergcdc.cdc.typeutils.TableKeyTypeInfo.INSTANCE)
            .transform(
                "dedup by source sequence, write Parquet files and position deletes ("
                    + tables.size()
                    + (tables.size() == 1 ? " table)" : " tables)"),
                COMMITTABLE_TYPE,
                PositionDeltaWriterOperator.ofTables(
                    writers, newTables == null ? null : table -> newWriter(newTables, table)))
            .uid(uid)
            .setParallelism(parallelism);
    return new Written(committers, written, written.getSideOutput(Dedup.DEAD_LETTERS));
  }

  /** The uids of this sink's operators: prefixed as its options say, named for its distribution. */
  private OperatorUids uids() {
    return new OperatorUids(options.get(SinkOptions.UID_PREFIX), distribution);
  }

  /** The writer of a table that appeared while the job runs, committed as its name. */
  private static PositionDeltaWriterOperator<?> newWriter(NewTables newTables, String table) {
    IcebergCdcSink sink = newTables.sinkOf(table);
    return sink.indexedWriter(sink.uids(), table);
  }

  /** The committer of a table that appeared while the job runs. */
  private static IcebergCommitter newCommitter(NewTables newTables, String table) {
    IcebergCdcSink sink = newTables.sinkOf(table);
    return sink.committer(sink.uids());
  }

  /**
   * The part of a job whose tables share a committer that {@link #write} or {@link #writeTogether}
   * added.
   *
   * @param committers how the shared committer commits each table, by the name its contributions
   *     are tagged with
   * @param committables the writers' contributions, tagged
   * @param deadLetters the changes refused as ambiguous, as {@link #apply} returns them
   */
  public record Written(
      Map<String, IcebergCommitter> committers,
      DataStream<ChangeCommittable> committables,
      DataStream<DeadLetter> deadLetters) {}

  /**
   * Adds one committer, at parallelism 1, that commits each of {@code tables} as its own sink's
   * committer would: one snapshot of each table per checkpoint that changed it, with the same
   * summaries and exactly-once restore; the tables of a checkpoint are committed one after the
   * other, not atomically (see the overload for one transaction).
   *
   * @param refusedUpstream what the parser before the sinks sent to the dead-letter output, counted
   *     in the summaries of the tables {@code tableOfDeadLetter} names for them (by {@link
   *     DeadLetter#table()}); null for none
   * @param catalog the tables' catalog, where each table is committed as its identifier ({@link
   *     #write}'s {@code committedAs}): a restored table the job no longer writes has its pending
   *     checkpoints committed through it; null fails the restore of such state
   * @param uid the committer's uid
   * @return the end of the commit chain
   */
  public static DataStreamSink<Void> commitTogether(
      java.util.List<Written> tables,
      DataStream<DeadLetter> refusedUpstream,
      Map<String, String> tableOfDeadLetter,
      org.apache.iceberg.flink.CatalogLoader catalog,
      String uid) {
    return commitTogether(tables, refusedUpstream, tableOfDeadLetter, catalog, false, uid);
  }

  /**
   * Adds one committer, as {@link #commitTogether(java.util.List, DataStream, Map,
   * org.apache.iceberg.flink.CatalogLoader, String)}; where {@code inOneTransaction}, the tables of
   * each checkpoint are committed in one transaction of {@code catalog}, which must be a REST
   * catalog ({@link SinkOptions#COMMIT_ATOMIC_ACROSS_TABLES}): a reader sees all the tables a
   * checkpoint changed take their new snapshots at once, or none of them.
   */
  public static DataStreamSink<Void> commitTogether(
      java.util.List<Written> tables,
      DataStream<DeadLetter> refusedUpstream,
      Map<String, String> tableOfDeadLetter,
      org.apache.iceberg.flink.CatalogLoader catalog,
      boolean inOneTransaction,
      String uid) {
    return commitTogether(
        tables, refusedUpstream, tableOfDeadLetter, catalog, inOneTransaction, uid, null);
  }

  /**
   * Adds one committer, as {@link #commitTogether(java.util.List, DataStream, Map,
   * org.apache.iceberg.flink.CatalogLoader, boolean, String)}, that commits the tables that appear
   * while the job runs too, as {@code newTables} says (null: none may).
   */
  public static DataStreamSink<Void> commitTogether(
      java.util.List<Written> tables,
      DataStream<DeadLetter> refusedUpstream,
      Map<String, String> tableOfDeadLetter,
      org.apache.iceberg.flink.CatalogLoader catalog,
      boolean inOneTransaction,
      String uid,
      NewTables newTables) {
    if (tables.isEmpty()) {
      throw new IllegalArgumentException("no table to commit");
    }
    Map<String, IcebergCommitter> committers = new java.util.TreeMap<>();
    DataStream<ChangeCommittable> all = null;
    for (Written written : tables) {
      for (Map.Entry<String, IcebergCommitter> table : written.committers().entrySet()) {
        if (committers.put(table.getKey(), table.getValue()) != null) {
          throw new IllegalArgumentException("two tables are committed as " + table.getKey());
        }
      }
      all = all == null ? written.committables() : all.union(written.committables());
    }
    if (refusedUpstream != null) {
      all =
          all.union(
              refusedUpstream
                  .flatMap(new CountsOfDeadLetters(new java.util.HashMap<>(tableOfDeadLetter)))
                  .returns(COMMITTABLE_TYPE)
                  .name("dead letters of the parser, counted")
                  .uid(uid + "-upstream-dead-letters"));
    }
    return all.transform(
            "commit to Iceberg ("
                + committers.size()
                + (committers.size() == 1 ? " table)" : " tables)"),
            Types.VOID,
            IcebergCommitter.ofTables(
                committers,
                catalog,
                inOneTransaction,
                newTables == null ? null : table -> newCommitter(newTables, table)))
        .uid(uid)
        .setParallelism(1)
        .setMaxParallelism(1)
        .sinkTo(new DiscardingSink<>())
        .name("end")
        .setParallelism(1);
  }

  /** The writers' contributions, tagged with {@code committedAs} (null for none), and refusals. */
  private record Contributions(
      DataStream<ChangeCommittable> committables, DataStream<DeadLetter> deadLetters) {}

  private Contributions contributions(
      DataStream<ChangeEvent> changes, OperatorUids uids, String committedAs) {
    checkAlignedCheckpoints(changes);
    if (schema == null) {
      throw new IllegalArgumentException(
          "table "
              + tableName
              + " has no primary key (Iceberg identifier fields), so it cannot take a changelog;"
              + " append rows to it with appendRows");
    }
    int parallelism = parallelism(changes);

    ChangeKeySelector<?> keys = keySelector();
    if (overwrite == null && options.get(SinkOptions.DELETE_MODE) == DeleteMode.POSITION) {
      // The dedup and the key-indexed writer are one operator, with one state entry per key.
      SingleOutputStreamOperator<ChangeCommittable> written =
          writeIndexed(changes, keys, uids, parallelism, committedAs);
      return new Contributions(written, written.getSideOutput(Dedup.DEAD_LETTERS));
    }
    SingleOutputStreamOperator<ChangeEvent> deduped = dedup(changes, keys, uids, parallelism);
    SingleOutputStreamOperator<ChangeCommittable> written =
        overwrite == null
            ? deduped
                .transform(
                    "write Parquet files and equality deletes",
                    COMMITTABLE_TYPE,
                    new ChangeWriterOperator(tableLoader, schema, writeProperties))
                .uid(uids.writer())
                .setParallelism(parallelism)
            : appendWriter(
                deduped
                    .map(ChangeEvent::after)
                    .returns(org.apache.flink.table.runtime.typeutils.InternalTypeInfo.of(rowType))
                    .name("rows of the net changes")
                    .setParallelism(parallelism),
                uids,
                parallelism,
                false);
    DataStream<ChangeCommittable> stats =
        deduped
            .getSideOutput(Dedup.STATS)
            .map(new CommittableOfStats())
            .returns(COMMITTABLE_TYPE)
            .name("dedup statistics")
            .uid(uids.stats())
            .setParallelism(parallelism);
    DataStream<ChangeCommittable> committables = written.union(stats);
    if (committedAs != null) {
      committables =
          committables
              .map(new CommittedAs(committedAs))
              .returns(COMMITTABLE_TYPE)
              .name("contributions to " + committedAs)
              .uid(uids.committedAs())
              .setParallelism(parallelism);
    }
    return new Contributions(committables, deduped.getSideOutput(Dedup.DEAD_LETTERS));
  }

  /** Tags contributions with their table, for a committer of several tables. */
  private static final class CommittedAs
      implements org.apache.flink.api.common.functions.MapFunction<
          ChangeCommittable, ChangeCommittable> {
    private static final long serialVersionUID = 1L;
    private final String table;

    CommittedAs(String table) {
      this.table = table;
    }

    @Override
    public ChangeCommittable map(ChangeCommittable committable) {
      return committable.forTable(table);
    }
  }

  /**
   * Adds a writer and the committer after {@code rows}, which are rows to insert in the order of
   * the table's columns: the path of tables without a primary key, and of any overwrite. Under
   * {@code write.distribution-mode = hash} the rows of a partitioned table are spread over the
   * writers by partition, so that each partition's rows land in few files.
   *
   * @return the end of the commit chain
   */
  public DataStreamSink<Void> appendRows(DataStream<RowData> rows) {
    checkAlignedCheckpoints(rows);
    OperatorUids uids =
        new OperatorUids(options.get(SinkOptions.UID_PREFIX), Distribution.PRIMARY_KEY);
    int parallelism = parallelism(rows);
    DataStream<RowData> distributed = rows;
    if (distribution == Distribution.PARTITION) {
      distributed = rows.keyBy(new PartitionOfRow(tableSchema, spec, rowType));
    }
    return commit(appendWriter(distributed, uids, parallelism, true), uids, null);
  }

  private SingleOutputStreamOperator<ChangeCommittable> appendWriter(
      DataStream<RowData> rows, OperatorUids uids, int parallelism, boolean countsRows) {
    return rows.transform(
            "write Parquet files",
            COMMITTABLE_TYPE,
            new AppendWriterOperator(tableLoader, rowType, writeProperties, countsRows))
        .uid(uids.appendWriter())
        .setParallelism(parallelism);
  }

  private static void checkAlignedCheckpoints(DataStream<?> input) {
    if (input.getExecutionEnvironment().getCheckpointConfig().isUnalignedCheckpointsEnabled()) {
      throw new IllegalArgumentException(
          "the Iceberg CDC sink needs aligned checkpoints: each commit holds exactly what was"
              + " written before its checkpoint's barrier");
    }
  }

  private int parallelism(DataStream<?> input) {
    return options
        .getOptional(SinkOptions.PARALLELISM)
        .orElse(input.getExecutionEnvironment().getParallelism());
  }

  /**
   * What {@link #applyTo} added.
   *
   * @param end the end of the commit chain: the sink that a caller who must hand back one sink (a
   *     Table API sink provider) returns
   * @param deadLetters the changes refused as ambiguous, as {@link #apply} returns them
   */
  public record Applied(DataStreamSink<Void> end, DataStream<DeadLetter> deadLetters) {}

  /**
   * The key of the dedup and the writers: the primary key, hashed by primary key or by partition as
   * {@link SinkOptions#DISTRIBUTION} says. Either way keyed state is per primary key and the
   * writers follow the dedup without a shuffle.
   */
  private ChangeKeySelector<?> keySelector() {
    return distribution == Distribution.PARTITION
        ? new PartitionedKeySelector(schema, spec)
        : new RowKeySelector();
  }

  @SuppressWarnings("unchecked")
  private static <K> TypeInformation<K> keyType(ChangeKeySelector<K> keys) {
    return (TypeInformation<K>)
        (keys instanceof PartitionedKeySelector
            ? PartitionedKeyTypeInfo.INSTANCE
            : RowKeyTypeInfo.INSTANCE);
  }

  private <K> SingleOutputStreamOperator<ChangeEvent> dedup(
      DataStream<ChangeEvent> changes,
      ChangeKeySelector<K> keys,
      OperatorUids uids,
      int parallelism) {
    OneInputStreamOperator<ChangeEvent, ChangeEvent> dedup =
        Dedup.operator(
            schema,
            options.get(DedupOptions.TOMBSTONE_TTL),
            options.get(DedupOptions.ON_AMBIGUOUS_CHANGE),
            options.get(DedupOptions.INDEX_MAX_KEYS),
            tablePosition);
    return changes
        .keyBy(keys, keyType(keys))
        .transform("dedup by source sequence", ChangeEventTypeInfo.of(schema), dedup)
        .uid(uids.dedup())
        .setParallelism(parallelism);
  }

  private <K> SingleOutputStreamOperator<ChangeCommittable> writeIndexed(
      DataStream<ChangeEvent> changes,
      ChangeKeySelector<K> keys,
      OperatorUids uids,
      int parallelism,
      String committedAs) {
    return changes
        .keyBy(keys, keyType(keys))
        .transform(
            "dedup by source sequence, write Parquet files and position deletes",
            COMMITTABLE_TYPE,
            indexedWriter(keys, uids, committedAs))
        .uid(uids.indexedWriter())
        .setParallelism(parallelism);
  }

  /** The key-indexed writer of this table, keyed by primary key, tagged for a shared committer. */
  private PositionDeltaWriterOperator<RowKey> indexedWriter(OperatorUids uids, String committedAs) {
    return indexedWriter(new RowKeySelector(), uids, committedAs);
  }

  private <K> PositionDeltaWriterOperator<K> indexedWriter(
      ChangeKeySelector<K> keys, OperatorUids uids, String committedAs) {
    PositionDeltaWriterOperator<K> writer =
        new PositionDeltaWriterOperator<>(
            tableLoader,
            schema,
            keys,
            options.get(SinkOptions.BOOTSTRAP_INDEX),
            writeProperties,
            options.get(DedupOptions.TOMBSTONE_TTL),
            options.get(DedupOptions.ON_AMBIGUOUS_CHANGE),
            options.get(SinkOptions.COMPACTION_DELETED_RATIO));
    writer.setIndexMaxKeys(options.get(DedupOptions.INDEX_MAX_KEYS));
    writer.setCompactionCacheBytes(options.get(SinkOptions.COMPACTION_CACHE_SIZE).getBytes());
    writer.setSmallFileSize(options.get(SinkOptions.COMPACTION_SMALL_FILE_SIZE).getBytes());
    writer.setTablePosition(tablePosition);
    writer.setSinkTag(OwnedFileNames.sinkTag(uids.committer()));
    writer.setCommittedAs(committedAs);
    return writer;
  }

  /**
   * @param refusedUpstream what the parser before the sink sent to the dead-letter output, counted
   *     in the summaries; null for none
   */
  private DataStreamSink<Void> commit(
      DataStream<ChangeCommittable> committables,
      OperatorUids uids,
      DataStream<DeadLetter> refusedUpstream) {
    if (refusedUpstream != null) {
      committables =
          committables.union(
              refusedUpstream
                  .map(new CountOfDeadLetter())
                  .returns(COMMITTABLE_TYPE)
                  .name("dead letters of the parser, counted")
                  .uid(uids.upstreamDeadLetters()));
    }
    return committables
        .transform("commit to Iceberg", Types.VOID, committer(uids).operator())
        .uid(uids.committer())
        .setParallelism(1)
        .setMaxParallelism(1)
        .sinkTo(new DiscardingSink<>())
        .name("end")
        .setParallelism(1);
  }

  /** How this sink's table is committed. */
  private IcebergCommitter committer(OperatorUids uids) {
    return IcebergCommitter.of(tableLoader, commitListener)
        .overwrite(overwrite)
        .bounded(bounded)
        .catalogRetryTimeout(options.get(SinkOptions.COMMIT_CATALOG_RETRY_TIMEOUT))
        .maintenance(maintenance)
        .filesNamedFor(OwnedFileNames.sinkTag(uids.committer()))
        .sourceSequence(inSourceOrder, !options.get(DedupOptions.IGNORE_TABLE_POSITION));
  }

  /** Builds an {@link IcebergCdcSink}. */
  public static final class Builder {
    private TableLoader tableLoader;
    private ChangeSchema schema;
    private PartitionSpec spec;
    private Configuration options = new Configuration();
    private CommitListener commitListener;
    private Map<String, String> writeProperties = Map.of();
    private Overwrite overwrite;
    private BoundedWrite bounded = BoundedWrite.NONE;
    private Distribution distribution;
    private RowType rowType;
    private MaintenancePolicy maintenance;
    private boolean skipChangesBeforeTablePosition;
    private SourceSequence tablePosition;
    private Schema tableSchema;
    private String tableName;

    private Builder() {}

    /** The table to write; its schema, primary key and partition spec are taken from it. */
    public Builder table(TableLoader loader) {
      this.tableLoader = loader;
      return this;
    }

    /**
     * Sink and dedup options; see {@link SinkOptions} and {@link DedupOptions}.
     *
     * @throws IllegalArgumentException for an unknown key in the {@code sink.} or {@code dedup.}
     *     namespace
     */
    public Builder options(Configuration config) {
      SinkOptions.validate(config);
      this.options = new Configuration(config);
      return this;
    }

    /**
     * This write's own write properties (full keys or {@link WriteProperties#ALIASES}), used over
     * the table's by the writers; the table's properties are not changed.
     */
    public Builder writeProperties(Map<String, String> properties) {
      this.writeProperties = Map.copyOf(properties);
      return this;
    }

    /**
     * Makes the write an overwrite of what {@code overwrite} names, committed once at the end of a
     * bounded input that runs without checkpoints (batch execution); its input must be rows to
     * insert. Unset, each checkpoint commits what it wrote.
     */
    public Builder overwrite(Overwrite overwrite) {
      this.overwrite = overwrite;
      return this;
    }

    /** The overwrite given, or null. */
    public Overwrite overwrite() {
      return overwrite;
    }

    /** Hears about every commit; optional. */
    /**
     * Gives the write, committed once at the end of its bounded input, a write id (published at
     * most once) or the statement it carries out; see {@link BoundedWrite}.
     */
    public Builder boundedWrite(BoundedWrite bounded) {
      this.bounded = bounded == null ? BoundedWrite.NONE : bounded;
      return this;
    }

    public Builder commitListener(CommitListener listener) {
      this.commitListener = listener;
      return this;
    }

    /**
     * For a changelog read from its source in the source's own global order (a file, a database's
     * log; not Kafka, whose partitions interleave): in a job without state, the changes at or
     * before the source position the table holds are dropped as stale ({@link
     * DedupOptions#IGNORE_TABLE_POSITION} turns it off), so that reading the changelog again
     * changes nothing the table already has.
     */
    public Builder skipChangesBeforeTablePosition(boolean skip) {
      this.skipChangesBeforeTablePosition = skip;
      return this;
    }

    public IcebergCdcSink build() {
      Objects.requireNonNull(tableLoader, "table");
      try (TableLoader loader = tableLoader.clone()) {
        loader.open();
        Table table = loader.loadTable();
        tableName = table.name();
        tableSchema = table.schema();
        rowType = FlinkSchemaUtil.convert(tableSchema);
        spec = table.spec();
        if (!tableSchema.identifierFieldIds().isEmpty()) {
          schema = new ChangeSchema(tableSchema);
          CdcTables.checkPartitionColumnsAreKeyColumns(tableSchema, spec);
        }
        Map<String, String> effective =
            WriteProperties.effective(table.name(), table.properties(), writeProperties);
        distribution = distribution(effective);
        maintenance = MaintenanceOptions.policy(options, table.properties());
        if (skipChangesBeforeTablePosition && !options.get(DedupOptions.IGNORE_TABLE_POSITION)) {
          tablePosition = TablePosition.of(table);
        }
      } catch (java.io.IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
      return new IcebergCdcSink(this);
    }

    /**
     * The distribution: {@link SinkOptions#DISTRIBUTION} where it is set, else the table's (or this
     * write's) {@code write.distribution-mode}: {@code hash} spreads a partitioned table's rows by
     * partition, {@code none} (and {@code hash} on an unpartitioned table) by primary key, or as
     * they come without one. Changes of one key always go to one writer.
     */
    private Distribution distribution(Map<String, String> properties) {
      Distribution chosen;
      if (options.contains(SinkOptions.DISTRIBUTION)) {
        chosen = options.get(SinkOptions.DISTRIBUTION);
        if (chosen == Distribution.PARTITION && spec.isUnpartitioned()) {
          throw new IllegalArgumentException(
              SinkOptions.DISTRIBUTION.key()
                  + " = PARTITION needs a partitioned table; "
                  + tableName
                  + " is not");
        }
        return chosen;
      }
      String mode = properties.get(TableProperties.WRITE_DISTRIBUTION_MODE);
      boolean hash = mode != null && DistributionMode.fromName(mode) == DistributionMode.HASH;
      return hash && !spec.isUnpartitioned() ? Distribution.PARTITION : Distribution.PRIMARY_KEY;
    }
  }

  /** The schema of the changelog this sink accepts; null for a table without a primary key. */
  public ChangeSchema schema() {
    return schema;
  }

  /** One dead letter of the parser, as a count for the committer. */
  private static final class CountOfDeadLetter
      implements org.apache.flink.api.common.functions.MapFunction<DeadLetter, ChangeCommittable> {
    private static final long serialVersionUID = 1L;
    static final ChangeCommittable ONE =
        ChangeCommittable.ofStats(new ChangeStats(0, 0, 0, 0, 0, 1, null));

    @Override
    public ChangeCommittable map(DeadLetter letter) {
      return ONE;
    }
  }

  /**
   * The parser's dead letters of the tables a committer of several tables commits, as counts for
   * it, each tagged with its table; dead letters of other tables are not counted.
   */
  private static final class CountsOfDeadLetters
      implements org.apache.flink.api.common.functions.FlatMapFunction<
          DeadLetter, ChangeCommittable> {
    private static final long serialVersionUID = 1L;

    /** The committed table by dead letters' table. */
    private final java.util.HashMap<String, String> tables;

    CountsOfDeadLetters(java.util.HashMap<String, String> tables) {
      this.tables = tables;
    }

    @Override
    public void flatMap(DeadLetter letter, org.apache.flink.util.Collector<ChangeCommittable> out) {
      String table = tables.get(letter.table());
      if (table != null) {
        out.collect(CountOfDeadLetter.ONE.forTable(table));
      }
    }
  }
}
