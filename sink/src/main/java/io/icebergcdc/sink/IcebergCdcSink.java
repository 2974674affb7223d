package io.icebergcdc.sink;

import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.ChangeSchema;
import io.icebergcdc.cdc.ChangeStats;
import io.icebergcdc.cdc.DeadLetter;
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
import io.icebergcdc.sink.internal.CommittableOfStats;
import io.icebergcdc.sink.internal.OperatorUids;
import io.icebergcdc.sink.internal.PartitionOfRow;
import io.icebergcdc.sink.internal.PartitionedKeySelector;
import io.icebergcdc.sink.internal.PartitionedKeyTypeInfo;
import io.icebergcdc.sink.internal.PositionDeltaWriterOperator;
import io.icebergcdc.sink.internal.RowKeySelector;
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

  static final TypeInformation<ChangeCommittable> COMMITTABLE_TYPE =
      new SimpleVersionedTypeInfo<>(ChangeCommittable.class, ChangeCommittableSerializer::new);

  private final TableLoader tableLoader;

  /** The table for its writers (see {@link Builder#writerTable}). */
  private final TableLoader writerTableLoader;

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

  /** The table's latest source truncate that its summaries record, or null. */
  private final SourceSequence tableTruncatedAt;

  private final boolean inSourceOrder;

  /** The id of each Kafka topic the changes are read from, by its name; empty for other sources. */
  private final Map<String, String> kafkaTopicIds;

  private final Schema tableSchema;
  private final String tableName;
  private final String recordedKeyHashing;

  /** Run after the last commit of a bounded input; or null. */
  private final AfterLastCommit afterLastCommit;

  private IcebergCdcSink(Builder builder) {
    this.tableLoader = builder.tableLoader;
    this.writerTableLoader =
        builder.writerTableLoader == null ? builder.tableLoader : builder.writerTableLoader;
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
    this.tableTruncatedAt = builder.tableTruncatedAt;
    this.inSourceOrder = builder.skipChangesBeforeTablePosition;
    this.kafkaTopicIds = builder.kafkaTopicIds;
    this.tableSchema = builder.tableSchema;
    this.tableName = builder.tableName;
    this.recordedKeyHashing = builder.recordedKeyHashing;
    this.afterLastCommit = builder.afterLastCommit;
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
   * table with others ({@link MultiTableSink#commitTogether}): a job of many tables then has one
   * committer, not one per table.
   *
   * @param committedAs the name the table's contributions are tagged with for that committer,
   *     unique among its tables
   */
  public MultiTableSink.Written write(DataStream<ChangeEvent> changes, String committedAs) {
    Objects.requireNonNull(committedAs, "committedAs");
    OperatorUids uids = uids();
    Contributions contributions = contributions(changes, uids, committedAs);
    return new MultiTableSink.Written(
        Map.of(committedAs, committer(uids)),
        contributions.committables(),
        contributions.deadLetters());
  }

  /**
   * Whether this sink's table can be written with others by one operator ({@link
   * MultiTableSink#writeTogether}): a changelog, without an overwrite, its updates and deletes
   * written as positions or by key ({@code sink.delete-mode}), its changes distributed by primary
   * key or by partition.
   */
  public boolean writesWithOthers() {
    return followsSchemaChanges();
  }

  /**
   * Whether this sink's writer takes the rows of the schemas its table is evolved to while the job
   * runs ({@link ChangeEvent#rowSchemaId()}): that of a changelog without an overwrite, the
   * key-indexed writer ({@code sink.delete-mode = position}) and the writer of equality deletes
   * alike, distributed by primary key or by partition.
   */
  public boolean followsSchemaChanges() {
    return schema != null && overwrite == null;
  }

  /**
   * Whether this sink's writer applies its source's truncates: the key-indexed writer ({@code
   * sink.delete-mode = position}) of a changelog without an overwrite, which knows every key of the
   * table and so every row a truncate deletes.
   */
  public boolean appliesTruncates() {
    return followsSchemaChanges() && options.get(SinkOptions.DELETE_MODE) == DeleteMode.POSITION;
  }

  /** The uids of this sink's operators: prefixed as its options say, named for its distribution. */
  OperatorUids uids() {
    return new OperatorUids(options.get(SinkOptions.UID_PREFIX), distribution);
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
    if (overwrite == null) {
      // The dedup and the writer are one operator, with one state entry per key (in equality mode
      // without the row's location).
      SingleOutputStreamOperator<ChangeCommittable> written =
          writeIndexed(changes, keys, uids, parallelism, committedAs);
      return new Contributions(written, written.getSideOutput(Dedup.DEAD_LETTERS));
    }
    // An overwrite: the net changes' rows appended over what the overwrite leaves.
    SingleOutputStreamOperator<ChangeEvent> deduped = dedup(changes, keys, uids, parallelism);
    SingleOutputStreamOperator<ChangeCommittable> written =
        appendWriter(
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
            new AppendWriterOperator(writerTableLoader, rowType, writeProperties, countsRows))
        .uid(uids.appendWriter())
        .setParallelism(parallelism);
  }

  static void checkAlignedCheckpoints(DataStream<?> input) {
    if (input.getExecutionEnvironment().getCheckpointConfig().isUnalignedCheckpointsEnabled()) {
      throw new IllegalArgumentException(
          "the Iceberg CDC sink needs aligned checkpoints: each commit holds exactly what was"
              + " written before its checkpoint's barrier");
    }
  }

  int parallelism(DataStream<?> input) {
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
  ChangeKeySelector<?> keySelector() {
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
            "dedup by source sequence, write Parquet files and "
                + (options.get(SinkOptions.DELETE_MODE) == DeleteMode.POSITION
                    ? "position deletes"
                    : "equality deletes"),
            COMMITTABLE_TYPE,
            indexedWriter(keys, uids, committedAs))
        .uid(uids.indexedWriter())
        .setParallelism(parallelism);
  }

  /**
   * The writer of this table in the operator of several tables, tagged for a shared committer,
   * keyed as its own operator would be: by primary key, or by partition ({@link
   * SinkOptions#DISTRIBUTION}); deleting rows by position or by key as {@link
   * SinkOptions#DELETE_MODE} says.
   */
  PositionDeltaWriterOperator<?> indexedWriter(OperatorUids uids, String committedAs) {
    return indexedWriter(keySelector(), uids, committedAs);
  }

  private <K> PositionDeltaWriterOperator<K> indexedWriter(
      ChangeKeySelector<K> keys, OperatorUids uids, String committedAs) {
    PositionDeltaWriterOperator<K> writer =
        new PositionDeltaWriterOperator<>(
            writerTableLoader,
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
    writer.setTableTruncatedAt(tableTruncatedAt);
    writer.setDeleteMode(options.get(SinkOptions.DELETE_MODE));
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
        .sinkTo(
            afterLastCommit == null ? new DiscardingSink<>() : new EndOfInputSink(afterLastCommit))
        .name("end")
        .setParallelism(1);
  }

  /** How this sink's table is committed. */
  IcebergCommitter committer(OperatorUids uids) {
    return IcebergCommitter.of(tableLoader, commitListener)
        .overwrite(overwrite)
        .bounded(bounded)
        .catalogRetryTimeout(options.get(SinkOptions.COMMIT_CATALOG_RETRY_TIMEOUT))
        .maintenance(maintenance)
        .filesNamedFor(OwnedFileNames.sinkTag(uids.committer()))
        .sourceSequence(inSourceOrder, !options.get(DedupOptions.IGNORE_TABLE_POSITION))
        .kafkaTopicIds(kafkaTopicIds);
  }

  /** Builds an {@link IcebergCdcSink}. */
  public static final class Builder {
    private TableLoader tableLoader;
    private TableLoader writerTableLoader;
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
    private Map<String, String> kafkaTopicIds = Map.of();
    private Integer jobSchemaId;
    private boolean followsKeyHashingPin;
    private String recordedKeyHashing;
    private SourceSequence tablePosition;
    private SourceSequence tableTruncatedAt;
    private Schema tableSchema;
    private String tableName;
    private AfterLastCommit afterLastCommit;

    private Builder() {}

    /**
     * Work to run in the job after the committer's last commit, when a bounded input ends; its
     * failure fails the job.
     */
    public Builder afterLastCommit(AfterLastCommit action) {
      this.afterLastCommit = action;
      return this;
    }

    /** The table to write; its schema, primary key and partition spec are taken from it. */
    public Builder table(TableLoader loader) {
      this.tableLoader = loader;
      return this;
    }

    /**
     * The same table, loaded for its writers, which read its current snapshot and never its history
     * ({@link SharedCatalog#writerTableLoader}); the {@link #table} loader if not given.
     */
    public Builder writerTable(TableLoader loader) {
      this.writerTableLoader = loader;
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

    /**
     * Gives the write, committed once at the end of its bounded input, a write id (published at
     * most once) or the statement it carries out; see {@link BoundedWrite}.
     */
    public Builder boundedWrite(BoundedWrite bounded) {
      this.bounded = bounded == null ? BoundedWrite.NONE : bounded;
      return this;
    }

    /** Hears about every commit; optional. */
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

    /**
     * Builds the sink in the table's schema of this id rather than its current one: the schema a
     * restored writer of a table that appeared while the job ran was built with, whose columns its
     * dedup's fingerprints hash and its kept rows are serialized in. Null for the current schema.
     */
    public Builder jobSchemaId(Integer id) {
      this.jobSchemaId = id;
      return this;
    }

    /**
     * For changes read from Kafka: the id of each topic, by its name, as the job found it when it
     * was built, which the snapshots record beside their offsets, so that a job started later tells
     * a topic deleted and created again under its name from the one whose offsets the table holds.
     */
    public Builder kafkaTopicIds(Map<String, String> ids) {
      this.kafkaTopicIds = Map.copyOf(ids);
      return this;
    }

    /**
     * For a table taken while the job runs ({@link NewTables}): its keys are hashed over the
     * writers as the table's pin says ({@link KeyHashingPin}) where it has one, whatever its
     * distribution and partition spec are now.
     */
    Builder followKeyHashingPin() {
      this.followsKeyHashingPin = true;
      return this;
    }

    public IcebergCdcSink build() {
      Objects.requireNonNull(tableLoader, "table");
      try (TableLoader loader = tableLoader.clone()) {
        loader.open();
        Table table = loader.loadTable();
        tableName = table.name();
        tableSchema = jobSchemaId == null ? table.schema() : table.schemas().get(jobSchemaId);
        if (tableSchema == null) {
          throw new IllegalStateException(
              "table "
                  + table.name()
                  + " has no schema "
                  + jobSchemaId
                  + ", which its restored writer was built with");
        }
        rowType = FlinkSchemaUtil.convert(tableSchema);
        recordedKeyHashing = table.properties().get(KeyHashingPin.PROPERTY);
        KeyHashingPin.Hashing pinned = followsKeyHashingPin ? KeyHashingPin.read(table) : null;
        spec = pinned != null && pinned.spec() != null ? pinned.spec() : table.spec();
        if (tableSchema != table.schema()) {
          // A restored writer's schema: its key columns' partition values typed as it has them.
          spec = KeyHashingPin.bind(tableSchema, spec);
        }
        if (!tableSchema.identifierFieldIds().isEmpty()) {
          schema = new ChangeSchema(tableSchema);
          CdcTables.checkPartitionColumnsAreKeyColumns(tableSchema, spec);
        }
        Map<String, String> effective =
            WriteProperties.effective(table.name(), table.properties(), writeProperties);
        distribution = pinned != null ? pinned.distribution() : distribution(effective);
        maintenance = MaintenanceOptions.policy(options, table.properties());
        if (!options.get(DedupOptions.IGNORE_TABLE_POSITION)) {
          if (skipChangesBeforeTablePosition) {
            tablePosition = TablePosition.of(table);
          }
          // Changes before a truncate are stale whatever the order the source delivers them in.
          tableTruncatedAt = TablePosition.truncatedAt(table);
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

  /** How this sink hashes its keys over the writers, as {@link KeyHashingPin} records it. */
  String keyHashing() {
    return KeyHashingPin.of(distribution, spec);
  }

  /** What the table's {@link KeyHashingPin} said when this sink was built; null for nothing. */
  String recordedKeyHashing() {
    return recordedKeyHashing;
  }

  /** How long the dedup's tombstones of this table live ({@link DedupOptions#TOMBSTONE_TTL}). */
  java.time.Duration tombstoneTtl() {
    return options.get(DedupOptions.TOMBSTONE_TTL);
  }

  /** The name of the table. */
  String tableName() {
    return tableName;
  }

  /** The schema of the changelog this sink accepts; null for a table without a primary key. */
  public ChangeSchema schema() {
    return schema;
  }

  /** One dead letter of the parser, as a count for the committer. */
  static final class CountOfDeadLetter
      implements org.apache.flink.api.common.functions.MapFunction<DeadLetter, ChangeCommittable> {
    private static final long serialVersionUID = 1L;
    static final ChangeCommittable ONE =
        ChangeCommittable.ofStats(new ChangeStats(0, 0, 0, 0, 0, 1, null));

    @Override
    public ChangeCommittable map(DeadLetter letter) {
      return ONE;
    }
  }
}
