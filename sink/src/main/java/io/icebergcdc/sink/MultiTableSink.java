package io.icebergcdc.sink;

import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.DeadLetter;
import io.icebergcdc.cdc.TableKey;
import io.icebergcdc.commit.ChangeCommittable;
import io.icebergcdc.commit.IcebergCommitter;
import io.icebergcdc.dedup.Dedup;
import io.icebergcdc.dedup.DedupOptions;
import io.icebergcdc.sink.internal.OperatorUids;
import io.icebergcdc.sink.internal.PositionDeltaWriterOperator;
import java.util.Map;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.DataStreamSink;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;

/**
 * The tables of a job written and committed by shared operators, so that the operators of a job do
 * not grow with its tables: one operator that dedups and writes the tables that can be written
 * together ({@link #writeTogether}), the operators of their own of the others ({@link
 * IcebergCdcSink#write}), and one committer of them all ({@link #commitTogether}). Each table is
 * written and committed as its own {@link IcebergCdcSink} would write and commit it, with the same
 * summaries and exactly-once restore.
 */
public final class MultiTableSink {

  private MultiTableSink() {}

  /**
   * Adds one operator that dedups and writes the changes of several tables, for a committer that
   * commits them with others ({@link #commitTogether}): the operators of a job do not grow with its
   * tables. Each table is written as its own sink's writer would ({@link IcebergCdcSink#write}),
   * with its own files, schema, write properties and key index, its contributions tagged as {@code
   * committedAs} says.
   *
   * @param changes the changes of all the tables, each naming its table ({@link
   *     ChangeEvent#table()}) as the keys of {@code sinks} do; at the parallelism of the first sink
   * @param sinks the sink of each table by the name its changes carry; each {@link
   *     IcebergCdcSink#writesWithOthers}
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
    IcebergCdcSink.checkAlignedCheckpoints(changes);
    Map<String, PositionDeltaWriterOperator<?>> writers = new java.util.TreeMap<>();
    Map<String, IcebergCommitter> committers = new java.util.TreeMap<>();
    Integer parallelism = null;
    java.time.Duration tombstoneTtl = null;
    for (Map.Entry<String, IcebergCdcSink> table : sinks.entrySet()) {
      IcebergCdcSink sink = table.getValue();
      // The tables share the dedup's keyed state, whose tombstones live as long as the first
      // table's option says.
      java.time.Duration ttl = sink.tombstoneTtl();
      if (tombstoneTtl != null && !tombstoneTtl.equals(ttl)) {
        throw new IllegalArgumentException(
            "the tables written together must have the same "
                + DedupOptions.TOMBSTONE_TTL.key()
                + ": table "
                + sink.tableName()
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
                + sink.tableName()
                + " cannot be written with others (an overwrite, or no primary key): write it"
                + " with write()");
      }
      OperatorUids uids = sink.uids();
      // Keyed as the table's own writer would be (by primary key or by partition): the operator
      // keys the shared stream as its tables' writers key their state (streamKeys()).
      writers.put(table.getKey(), sink.indexedWriter(uids, tag));
      if (committers.put(tag, sink.committer(uids)) != null) {
        throw new IllegalArgumentException("two tables are committed as " + tag);
      }
      if (parallelism == null) {
        parallelism = sink.parallelism(changes);
      }
    }
    if (newTables != null) {
      // Tables of the job taken in flight by an earlier one record how that one hashed them.
      sinks.forEach(
          (table, sink) -> {
            String recorded = sink.recordedKeyHashing();
            if (recorded != null && !recorded.equals(sink.keyHashing())) {
              newTables.repinOwnTable(committedAs.get(table), sink.keyHashing());
            }
          });
    }
    java.util.Set<String> tables = new java.util.TreeSet<>(sinks.keySet());
    PositionDeltaWriterOperator<TableKey> writer =
        PositionDeltaWriterOperator.ofTables(
            writers,
            newTables == null
                ? null
                : (table, jobSchemaId, restored) ->
                    newWriter(newTables, table, jobSchemaId, restored));
    SingleOutputStreamOperator<ChangeCommittable> written =
        changes
            .keyBy(writer.streamKeys(), io.icebergcdc.cdc.typeutils.TableKeyTypeInfo.INSTANCE)
            .transform(
                "dedup by source sequence, write Parquet files and deletes ("
                    + tables.size()
                    + (tables.size() == 1 ? " table)" : " tables)"),
                IcebergCdcSink.COMMITTABLE_TYPE,
                writer)
            .uid(uid)
            .setParallelism(parallelism);
    return new Written(committers, written, written.getSideOutput(Dedup.DEAD_LETTERS));
  }

  /**
   * The writer of a table that appeared while the job runs, committed as its name, in the table's
   * schema of {@code jobSchemaId} (a restored writer's), or its current one if null.
   */
  private static PositionDeltaWriterOperator<?> newWriter(
      NewTables newTables, String table, Integer jobSchemaId, boolean restored) {
    IcebergCdcSink sink = newTables.writerSinkOf(table, jobSchemaId, restored);
    return sink.indexedWriter(sink.uids(), table);
  }

  /** The committer of a table that appeared while the job runs. */
  private static IcebergCommitter newCommitter(NewTables newTables, String table) {
    IcebergCdcSink sink = newTables.sinkOf(table);
    return sink.committer(sink.uids());
  }

  /**
   * The part of a job whose tables share a committer that {@link IcebergCdcSink#write} or {@link
   * #writeTogether} added.
   *
   * @param committers how the shared committer commits each table, by the name its contributions
   *     are tagged with
   * @param committables the writers' contributions, tagged
   * @param deadLetters the changes refused as ambiguous, as {@link IcebergCdcSink#apply} returns
   *     them
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
   *     IcebergCdcSink#write}'s {@code committedAs}): a restored table the job no longer writes has
   *     its pending checkpoints committed through it; null fails the restore of such state
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
                  .flatMap(
                      new CountsOfDeadLetters(
                          new java.util.HashMap<>(tableOfDeadLetter), newTables != null))
                  .returns(IcebergCdcSink.COMMITTABLE_TYPE)
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

  /**
   * The parser's dead letters of the tables a committer of several tables commits, as counts for
   * it, each tagged with its table; dead letters of other tables are not counted. Where the
   * committer takes the tables that appear while the job runs, a dead letter of such a table is
   * counted in that table's summaries by the name the router gave it ({@link
   * DeadLetter#writtenAs()}): one of a table the router could not make ready has none.
   */
  private static final class CountsOfDeadLetters
      implements org.apache.flink.api.common.functions.FlatMapFunction<
          DeadLetter, ChangeCommittable> {
    private static final long serialVersionUID = 1L;

    /** The committed table by dead letters' table. */
    private final java.util.HashMap<String, String> tables;

    /** Whether the committer takes the tables that appear while the job runs. */
    private final boolean countsNewTables;

    CountsOfDeadLetters(java.util.HashMap<String, String> tables, boolean countsNewTables) {
      this.tables = tables;
      this.countsNewTables = countsNewTables;
    }

    @Override
    public void flatMap(DeadLetter letter, org.apache.flink.util.Collector<ChangeCommittable> out) {
      String table = tables.get(letter.table());
      if (table == null && countsNewTables) {
        table = letter.writtenAs();
      }
      if (table != null) {
        out.collect(IcebergCdcSink.CountOfDeadLetter.ONE.forTable(table));
      }
    }
  }
}
