package io.icebergcdc.sink.table;

import java.util.Map;
import java.util.function.Function;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.DataStreamSink;
import org.apache.flink.table.catalog.StagedTable;
import org.apache.flink.table.connector.ChangelogMode;
import org.apache.flink.table.connector.ProviderContext;
import org.apache.flink.table.connector.sink.DataStreamSinkProvider;
import org.apache.flink.table.connector.sink.DynamicTableSink;
import org.apache.flink.table.connector.sink.abilities.SupportsPartitioning;
import org.apache.flink.table.connector.sink.abilities.SupportsStaging;
import org.apache.flink.table.data.RowData;

/**
 * The sink of a catalog table that does not exist yet, which Flink plans only for a {@code CREATE
 * TABLE ... AS SELECT} (or {@code CREATE OR REPLACE} of a missing table) with {@code
 * table.rtas-ctas.atomicity-enabled}: the statement's load writes a staging table ({@link
 * StagedCreate}), and the table is created with its rows when the job finishes. Without that
 * option, Flink creates the table before it plans the load, and this sink is never made.
 */
final class StagingSink implements DynamicTableSink, SupportsPartitioning, SupportsStaging {

  private IcebergCdcDynamicSink sink;

  /** Creates the staging table for a purpose; only before {@link #applyStaging}. */
  private final Function<StagingPurpose, StagedCreate> stager;

  private final boolean batch;
  private final String table;

  /** The staging table, once the planner applied the staging; or null. */
  private StagedCreate staged;

  StagingSink(
      IcebergCdcDynamicSink sink,
      Function<StagingPurpose, StagedCreate> stager,
      boolean batch,
      String table) {
    this.sink = sink;
    this.stager = stager;
    this.batch = batch;
    this.table = table;
  }

  @Override
  public StagedTable applyStaging(StagingContext context) {
    return ContextClassLoader.ofThisJar(() -> stage(context));
  }

  private StagedTable stage(StagingContext context) {
    if (!batch) {
      // A streaming load never finishes, and the table would appear only when it did.
      throw new IllegalArgumentException(
          "an atomic CREATE TABLE "
              + table
              + " AS SELECT ('table.rtas-ctas.atomicity-enabled' = 'true') needs batch execution"
              + " ('execution.runtime-mode' = 'batch'): the table appears when its load finishes;"
              + " in streaming execution, leave the option false to create the table first");
    }
    Class<?> onFlinksClassPath = onFlinksClassPath();
    if (onFlinksClassPath != StagedCreate.class) {
      // Flink ships a job's status hooks, where it calls the staged table, in the job graph,
      // which the JobManager reads without the job's jars: a hook of a job's jar fails the
      // submission (ClassNotFoundException), after the staging table was created.
      throw new IllegalArgumentException(
          "an atomic CREATE TABLE "
              + table
              + " AS SELECT ('table.rtas-ctas.atomicity-enabled' = 'true') needs this"
              + " connector's jar in Flink's lib/ directory (Flink's JobManager reads the"
              + " statement's commit and abort, which are this jar's classes, without the jars"
              + " given with the job, such as sql-client.sh -j)"
              + (onFlinksClassPath == null
                  ? "; leave the option false to create the table first"
                  : ", and only there: it is in lib/ and given with the job too (-j), whose copy"
                      + " the JobManager does not read; leave out -j"));
    }
    staged = stager.apply(context.getStagingPurpose());
    sink = sink.loading(staged);
    return staged;
  }

  /**
   * {@link StagedCreate} as the class path Flink itself was started with has it (in {@code lib/},
   * or the application's class path of an embedded job), where the JobManager finds it; null where
   * it has none. Another class than this jar's where the jar is there and given with the job too.
   */
  static Class<?> onFlinksClassPath() {
    try {
      return Class.forName(StagedCreate.class.getName(), false, ClassLoader.getSystemClassLoader());
    } catch (ClassNotFoundException e) {
      return null;
    }
  }

  @Override
  public ChangelogMode getChangelogMode(ChangelogMode requested) {
    return sink.getChangelogMode(requested);
  }

  @Override
  public SinkRuntimeProvider getSinkRuntimeProvider(Context context) {
    if (staged == null) {
      // Planned without staging: an EXPLAIN of the statement, whose plan would create the table.
      throw new IllegalArgumentException(
          "table "
              + table
              + " does not exist: this catalog plans a write into a table it has not created only"
              + " for an atomic CREATE TABLE ... AS SELECT, which runs ('table.rtas-ctas"
              + ".atomicity-enabled' = 'true'); a CREATE TABLE ... AS SELECT is not planned"
              + " without running it (EXPLAIN, a compiled plan)");
    }
    SinkRuntimeProvider provider;
    try {
      provider = sink.getSinkRuntimeProvider(context);
    } catch (RuntimeException e) {
      throw abortedBy(e);
    }
    if (!(provider instanceof DataStreamSinkProvider streams)) {
      return provider;
    }
    return new DataStreamSinkProvider() {
      @Override
      public DataStreamSink<?> consumeDataStream(
          ProviderContext providerContext, DataStream<RowData> rows) {
        try {
          return streams.consumeDataStream(providerContext, rows);
        } catch (RuntimeException e) {
          throw abortedBy(e);
        }
      }
    };
  }

  /** Drops the staging table of a statement that failed as it was planned; returns {@code e}. */
  private RuntimeException abortedBy(RuntimeException e) {
    ContextClassLoader.ofThisJar(
        () -> {
          staged.abort();
          return null;
        });
    return e;
  }

  @Override
  public void applyStaticPartition(Map<String, String> partition) {
    sink.applyStaticPartition(partition);
  }

  @Override
  public DynamicTableSink copy() {
    StagingSink copy = new StagingSink((IcebergCdcDynamicSink) sink.copy(), stager, batch, table);
    copy.staged = staged;
    return copy;
  }

  @Override
  public String asSummaryString() {
    return sink.asSummaryString();
  }
}
