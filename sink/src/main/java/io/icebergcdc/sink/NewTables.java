package io.icebergcdc.sink;

import io.icebergcdc.commit.CommitListener;
import java.io.Serializable;
import java.util.Map;
import org.apache.flink.configuration.Configuration;
import org.apache.iceberg.catalog.TableIdentifier;
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

  private final SharedCatalog catalog;
  private final Configuration options;
  private final CommitListener commitListener;
  private final boolean inSourceOrder;
  private final KafkaTopicIds kafkaTopicIds;

  /**
   * The ids of the Kafka topics whose records a table that appeared is written from, by their
   * names, looked up when the committer takes the table: recorded with its offsets, as a job's own
   * topics' ids are ({@link IcebergCdcSink.Builder#kafkaTopicIds}), so that a later start tells a
   * topic deleted and created again under its name from the one whose offsets the table holds.
   */
  @FunctionalInterface
  public interface KafkaTopicIds extends Serializable {

    /** The ids of the topics of {@code table}, by name; empty where none can be found. */
    Map<String, String> of(String table);
  }

  /**
   * @param catalog the tables' catalog: for a writer's or committer's, the {@link SharedCatalog} of
   *     the job's own tables, so that the operator, deserialized with both, loads the new tables
   *     from the catalog it loads its own from; a source's may have one of its own
   * @param options the job's sink and dedup options
   * @param commitListener told of each table's commits (tests); null for none
   * @param inSourceOrder whether the changes come in their sources' order ({@link
   *     IcebergCdcSink.Builder#skipChangesBeforeTablePosition})
   */
  public NewTables(
      SharedCatalog catalog,
      Configuration options,
      CommitListener commitListener,
      boolean inSourceOrder) {
    this.catalog = catalog;
    this.options = new Configuration(options);
    this.commitListener = commitListener;
    this.inSourceOrder = inSourceOrder;
    this.kafkaTopicIds = null;
  }

  private NewTables(NewTables tables, KafkaTopicIds kafkaTopicIds) {
    this.catalog = tables.catalog;
    this.options = tables.options;
    this.commitListener = tables.commitListener;
    this.inSourceOrder = tables.inSourceOrder;
    this.kafkaTopicIds = kafkaTopicIds;
  }

  /** These new tables, whose committers record the ids of their Kafka topics (null for none). */
  public NewTables withKafkaTopicIds(KafkaTopicIds ids) {
    return new NewTables(this, ids);
  }

  /**
   * Whether the writer of the job's tables can take {@code table} while the job runs ({@link
   * IcebergCdcSink#writesWithOthers}), its changes distributed by primary key or by partition: a
   * table that it cannot (one that needs a writer of its own) ends the job, which is built again
   * with it.
   */
  public boolean takesInFlight(String table) {
    return sink(table, null, Map.of(), false).writesWithOthers();
  }

  /**
   * Whether the writer of the job's tables applies the truncates of the tables it takes while the
   * job runs ({@link IcebergCdcSink#appliesTruncates}): the key-indexed writer, not one that
   * deletes by key ({@code sink.delete-mode = EQUALITY}), which knows only the keys the job met.
   */
  public boolean appliesTruncates() {
    return options.get(SinkOptions.DELETE_MODE) == DeleteMode.POSITION;
  }

  /**
   * Records in {@code table}, which the writer of the job's tables takes while the job runs ({@link
   * #takesInFlight}), how the job hashes its keys over the writers ({@link KeyHashingPin}), unless
   * it holds that already (taken before, by this job or an earlier one): the stream and the writer
   * built for the table hash its keys so from then on, whatever its distribution or partition spec
   * become. The source calls it before it passes on any change of the table.
   *
   * @throws io.icebergcdc.cdc.RefusedSourceException if the table holds a record that cannot be
   *     read
   * @throws org.apache.iceberg.exceptions.NoSuchTableException if the catalog has no such table
   */
  public void pinKeyHashing(String table) {
    recordKeyHashing(
        table,
        loaded ->
            KeyHashingPin.read(loaded) == null
                ? sink(table, null, Map.of(), false).keyHashing()
                : null);
  }

  /**
   * Records over a record of an earlier take that says otherwise how the job, as it is built,
   * hashes the keys of {@code table}, one of its own tables ({@code hashing}, {@link
   * IcebergCdcSink#keyHashing}): should the job take the table back in flight (its source dropped
   * while changes of it are still to be applied), it hashes its keys as its restored state says. A
   * table without a record is left without one.
   */
  void repinOwnTable(String table, String hashing) {
    recordKeyHashing(
        table,
        loaded -> {
          String recorded = loaded.properties().get(KeyHashingPin.PROPERTY);
          return recorded != null && !recorded.equals(hashing) ? hashing : null;
        });
  }

  /** Sets {@code table}'s {@link KeyHashingPin} to what {@code toRecord} says, unless null. */
  private void recordKeyHashing(
      String table, java.util.function.Function<org.apache.iceberg.Table, String> toRecord) {
    try (TableLoader loader = catalog.tableLoader(TableIdentifier.parse(table))) {
      loader.open();
      org.apache.iceberg.Table loaded = loader.loadTable();
      String hashing = toRecord.apply(loaded);
      if (hashing != null) {
        loaded.updateProperties().set(KeyHashingPin.PROPERTY, hashing).commit();
      }
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  /**
   * The sink of {@code table} for its committer: any table the shared committer may hold, however
   * its changes are written (the committer commits what the writers hand it).
   *
   * @throws org.apache.iceberg.exceptions.NoSuchTableException if the catalog has no such table
   */
  IcebergCdcSink sinkOf(String table) {
    return sink(table, null, kafkaTopicIds == null ? Map.of() : kafkaTopicIds.of(table), false);
  }

  /**
   * The sink of {@code table} for the shared writer, built in the table's schema of {@code
   * jobSchemaId} if not null: one the writer of the job's tables takes while the job runs ({@link
   * IcebergCdcSink#writesWithOthers}).
   *
   * @param restored whether the writer takes the table back from a restored state; else it takes it
   *     at its first change
   * @throws RefusedRestoreException if the table can no longer be written with the others and the
   *     writer takes it back from a restored state: every restart would meet the same state
   * @throws IllegalStateException if it can no longer be and the writer meets its first change (the
   *     source checked it a moment before: after Flink's restart, the source's check ends the job
   *     to build it again with the table)
   * @throws org.apache.iceberg.exceptions.NoSuchTableException if the catalog has no such table
   */
  IcebergCdcSink writerSinkOf(String table, Integer jobSchemaId, boolean restored) {
    IcebergCdcSink sink = sink(table, jobSchemaId, Map.of(), true);
    if (!sink.writesWithOthers()) {
      String why =
          "table "
              + table
              + ", which appeared while the job ran, cannot be written with the job's other tables"
              + " (it has no primary key, Iceberg identifier fields)";
      if (restored) {
        throw new RefusedRestoreException(
            why
                + ", while the restored state holds it written with them: give it its primary key"
                + " back, or start the job without state");
      }
      throw new IllegalStateException(why);
    }
    return sink;
  }

  /**
   * @param followsPin whether its keys are hashed as the table's record of an earlier take says
   *     ({@link KeyHashingPin}): for the writer and the stream, not for the committer
   */
  private IcebergCdcSink sink(
      String table, Integer jobSchemaId, Map<String, String> kafkaTopicIds, boolean followsPin) {
    Configuration tableOptions = new Configuration(options);
    tableOptions.set(SinkOptions.UID_PREFIX, table);
    IcebergCdcSink.Builder builder =
        IcebergCdcSink.builder()
            .table(catalog.tableLoader(TableIdentifier.parse(table)))
            .writerTable(catalog.writerTableLoader(TableIdentifier.parse(table)))
            .options(tableOptions)
            .commitListener(commitListener)
            .skipChangesBeforeTablePosition(inSourceOrder)
            .jobSchemaId(jobSchemaId)
            .kafkaTopicIds(kafkaTopicIds);
    return (followsPin ? builder.followKeyHashingPin() : builder).build();
  }
}
