package io.icebergcdc.sink;

import io.icebergcdc.commit.CommitListener;
import java.io.Serializable;
import org.apache.flink.configuration.Configuration;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.flink.CatalogLoader;
import org.apache.iceberg.flink.TableLoader;

/**
 * How a job of several tables writes and commits the tables that appear while it runs (a topic
 * created for a job that reads topics by a pattern): each as the job's own tables are written, with
 * the job's options, by its identifier in the catalog, which is the name its changes carry and its
 * writers tag their contributions with. The shared writer and committer ({@link
 * MultiTableSink#writeTogether}, {@link MultiTableSink#commitTogether}) build a table's sink in the
 * task, at its first change, or at a restore whose state holds it.
 */
public final class NewTables implements Serializable {

  private static final long serialVersionUID = 1L;

  private final CatalogLoader catalog;
  private final Configuration options;
  private final CommitListener commitListener;
  private final boolean inSourceOrder;

  /**
   * @param catalog the tables' catalog
   * @param options the job's sink and dedup options
   * @param commitListener told of each table's commits (tests); null for none
   * @param inSourceOrder whether the changes come in their sources' order ({@link
   *     IcebergCdcSink.Builder#skipChangesBeforeTablePosition})
   */
  public NewTables(
      CatalogLoader catalog,
      Configuration options,
      CommitListener commitListener,
      boolean inSourceOrder) {
    this.catalog = catalog;
    this.options = new Configuration(options);
    this.commitListener = commitListener;
    this.inSourceOrder = inSourceOrder;
  }

  /**
   * Whether the writer of the job's tables can take {@code table} while the job runs ({@link
   * IcebergCdcSink#takenInFlight}): a table that it cannot (one that needs a writer of its own, or
   * whose changes are distributed by partition) ends the job, which is built again with it.
   */
  public boolean takesInFlight(String table) {
    return sink(table).takenInFlight();
  }

  /**
   * The sink of {@code table}, which must be one the writer of the job's tables takes while the job
   * runs ({@link IcebergCdcSink#takenInFlight}).
   *
   * @throws org.apache.iceberg.exceptions.NoSuchTableException if the catalog has no such table
   */
  IcebergCdcSink sinkOf(String table) {
    return sinkOf(table, null);
  }

  /** As {@link #sinkOf(String)}, built in the table's schema of {@code jobSchemaId} if not null. */
  IcebergCdcSink sinkOf(String table, Integer jobSchemaId) {
    IcebergCdcSink sink = sink(table, jobSchemaId);
    if (!sink.takenInFlight()) {
      // Reached by a restore of the table's state (a table taken in flight is checked when it
      // appears): its writer was keyed by primary key alongside the others, and now would not be.
      // Refused, not retried: every restart would meet the same table.
      throw new RefusedRestoreException(
          "table "
              + table
              + ", which appeared while the job ran, was written by the job's shared writer with"
              + " its keys hashed by primary key, and now cannot be (it has no primary key, is"
              + " distributed by partition, or is written with equality deletes): set its"
              + " sink.distribution or sink.delete-mode back, or start the job without state");
    }
    return sink;
  }

  private IcebergCdcSink sink(String table) {
    return sink(table, null);
  }

  private IcebergCdcSink sink(String table, Integer jobSchemaId) {
    Configuration tableOptions = new Configuration(options);
    tableOptions.set(SinkOptions.UID_PREFIX, table);
    return IcebergCdcSink.builder()
        .table(TableLoader.fromCatalog(catalog, TableIdentifier.parse(table)))
        .options(tableOptions)
        .commitListener(commitListener)
        .skipChangesBeforeTablePosition(inSourceOrder)
        .jobSchemaId(jobSchemaId)
        .build();
  }
}
