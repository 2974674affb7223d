package io.icebergcdc.sink;

import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.ChangeSchema;
import io.icebergcdc.cdc.DeadLetter;
import io.icebergcdc.cdc.typeutils.ChangeEventTypeInfo;
import io.icebergcdc.cdc.typeutils.RowKeyTypeInfo;
import io.icebergcdc.cdc.typeutils.SimpleVersionedTypeInfo;
import io.icebergcdc.commit.ChangeCommittable;
import io.icebergcdc.commit.ChangeCommittableSerializer;
import io.icebergcdc.commit.CommitListener;
import io.icebergcdc.commit.internal.IcebergCommitterOperator;
import io.icebergcdc.dedup.DedupOptions;
import io.icebergcdc.dedup.internal.DedupOperator;
import io.icebergcdc.sink.internal.ChangeWriterOperator;
import io.icebergcdc.sink.internal.CommittableOfStats;
import io.icebergcdc.sink.internal.OperatorUids;
import io.icebergcdc.sink.internal.PartitionKeySelector;
import io.icebergcdc.sink.internal.RowKeySelector;
import java.util.Objects;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Table;
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

  private IcebergCdcSink(Builder builder) {
    this.tableLoader = builder.tableLoader;
    this.schema = builder.schema;
    this.spec = builder.spec;
    this.options = builder.options;
    this.commitListener = builder.commitListener;
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
    if (changes.getExecutionEnvironment().getCheckpointConfig().isUnalignedCheckpointsEnabled()) {
      throw new IllegalArgumentException(
          "the Iceberg CDC sink needs aligned checkpoints: each commit holds exactly what was"
              + " written before its checkpoint's barrier");
    }
    OperatorUids uids = new OperatorUids(options.get(SinkOptions.UID_PREFIX));
    int parallelism =
        options
            .getOptional(SinkOptions.PARALLELISM)
            .orElse(changes.getExecutionEnvironment().getParallelism());

    SingleOutputStreamOperator<ChangeEvent> deduped = dedup(changes, uids, parallelism);
    SingleOutputStreamOperator<ChangeCommittable> written = write(deduped, uids, parallelism);
    DataStream<ChangeCommittable> stats =
        deduped
            .getSideOutput(DedupOperator.STATS)
            .map(new CommittableOfStats())
            .returns(COMMITTABLE_TYPE)
            .name("dedup statistics")
            .uid(uids.stats())
            .setParallelism(parallelism);
    commit(written.union(stats), uids);
    return deduped.getSideOutput(DedupOperator.DEAD_LETTERS);
  }

  private SingleOutputStreamOperator<ChangeEvent> dedup(
      DataStream<ChangeEvent> changes, OperatorUids uids, int parallelism) {
    return changes
        .keyBy(new RowKeySelector(), RowKeyTypeInfo.INSTANCE)
        .transform(
            "dedup by source sequence",
            ChangeEventTypeInfo.of(schema),
            new DedupOperator(
                schema,
                options.get(DedupOptions.TOMBSTONE_TTL),
                options.get(DedupOptions.ON_AMBIGUOUS_CHANGE)))
        .uid(uids.dedup())
        .setParallelism(parallelism);
  }

  private SingleOutputStreamOperator<ChangeCommittable> write(
      DataStream<ChangeEvent> deduped, OperatorUids uids, int parallelism) {
    DataStream<ChangeEvent> distributed;
    switch (options.get(SinkOptions.DISTRIBUTION)) {
      case PARTITION:
        if (spec.isUnpartitioned()) {
          throw new IllegalArgumentException(
              SinkOptions.DISTRIBUTION.key()
                  + " = PARTITION needs a partitioned table; this one is not");
        }
        distributed = deduped.keyBy(new PartitionKeySelector(schema, spec), Types.STRING);
        break;
      case PRIMARY_KEY:
      default:
        // The dedup's output is already grouped by key: forward it, chained.
        distributed = deduped;
    }
    return distributed
        .transform(
            "write Parquet files", COMMITTABLE_TYPE, new ChangeWriterOperator(tableLoader, schema))
        .uid(uids.writer())
        .setParallelism(parallelism);
  }

  private void commit(DataStream<ChangeCommittable> committables, OperatorUids uids) {
    committables
        .transform(
            "commit to Iceberg",
            Types.VOID,
            new IcebergCommitterOperator(tableLoader, commitListener))
        .uid(uids.committer())
        .setParallelism(1)
        .setMaxParallelism(1)
        .sinkTo(new DiscardingSink<>())
        .name("end")
        .setParallelism(1);
  }

  /** Builds an {@link IcebergCdcSink}. */
  public static final class Builder {
    private TableLoader tableLoader;
    private ChangeSchema schema;
    private PartitionSpec spec;
    private Configuration options = new Configuration();
    private CommitListener commitListener;

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

    /** Hears about every commit; optional. */
    public Builder commitListener(CommitListener listener) {
      this.commitListener = listener;
      return this;
    }

    public IcebergCdcSink build() {
      Objects.requireNonNull(tableLoader, "table");
      try (TableLoader loader = tableLoader.clone()) {
        loader.open();
        Table table = loader.loadTable();
        schema = new ChangeSchema(table.schema());
        spec = table.spec();
        CdcTables.checkPartitionColumnsAreKeyColumns(table.schema(), spec);
      } catch (java.io.IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
      return new IcebergCdcSink(this);
    }
  }

  /** The schema of the changelog this sink accepts. */
  public ChangeSchema schema() {
    return schema;
  }
}
