package io.icebergcdc.sink.table;

import io.icebergcdc.commit.SnapshotSummaryKeys;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.table.catalog.StagedTable;
import org.apache.flink.table.connector.sink.abilities.SupportsStaging.StagingPurpose;
import org.apache.iceberg.AppendFiles;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.RowDelta;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SnapshotUpdate;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.Transaction;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.AlreadyExistsException;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.flink.CatalogLoader;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.SupportsPrefixOperations;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An atomic {@code CREATE TABLE ... AS SELECT}: the load writes a staging table of the catalog
 * (named {@code <table>__ctas_<id>}, beside the table, its data files in a directory of their own
 * under the table's data location), and when its input has ended and the committer has committed
 * it, {@link #publish} creates the table with those files in one commit of the catalog: a reader
 * sees no table, then the table with all its rows. {@link #publish} runs in the job (after the
 * committer, {@link io.icebergcdc.sink.AfterLastCommit}), so that its failure fails the job.
 *
 * <p>Flink calls {@link #begin}, {@link #commit} and {@link #abort} on the JobManager as the job's
 * status changes, where an exception would stop the JobManager: they never throw, and log what they
 * could not do. {@link #commit} drops the staging table's metadata once the table holds its files;
 * {@link #abort} (the job failed or was cancelled) drops the staging table with what the load
 * wrote, unless the table was created from it already, whose files those are.
 */
final class StagedCreate implements StagedTable {

  private static final long serialVersionUID = 1L;
  private static final Logger LOG = LoggerFactory.getLogger(StagedCreate.class);

  /** The summary keys of the staging table's commit that the table's first snapshot carries. */
  private static final String SUMMARY_PREFIX = "iceberg-cdc.";

  /**
   * The summary key of the table's first snapshot that names the staging table it was created from:
   * how a retried publication, and {@link #abort}, know that the table holds the load.
   */
  private static final String CREATED_FROM = SnapshotSummaryKeys.CREATED_FROM;

  private final CatalogLoader loader;

  /** The table's namespace, whose levels are strings (Iceberg's identifiers do not serialize). */
  private final String[] namespace;

  private final String name;
  private final String stagingName;
  private final StagingPurpose purpose;

  /** Where the load writes its data files: a directory of their own under the table's. */
  private final String stagedData;

  /** The {@code write.data.path} the statement gave the table; or null. */
  private final String dataPath;

  /** The location the statement gave the table; or null for the catalog's. */
  private final String location;

  StagedCreate(
      CatalogLoader loader,
      TableIdentifier target,
      TableIdentifier staging,
      StagingPurpose purpose,
      String stagedData,
      String dataPath,
      String location) {
    if (!staging.namespace().equals(target.namespace())) {
      throw new IllegalArgumentException(
          "the staging table " + staging + " is not in the namespace of " + target);
    }
    this.loader = loader;
    this.namespace = target.namespace().levels();
    this.name = target.name();
    this.stagingName = staging.name();
    this.purpose = purpose;
    this.stagedData = stagedData;
    this.dataPath = dataPath;
    this.location = location;
  }

  TableIdentifier staging() {
    return TableIdentifier.of(Namespace.of(namespace), stagingName);
  }

  private TableIdentifier target() {
    return TableIdentifier.of(Namespace.of(namespace), name);
  }

  /**
   * Creates the table with what the load committed to the staging table, in one commit, its first
   * snapshot marked {@link #CREATED_FROM} the staging table; does nothing where the table holds the
   * load already (a publication run again after a failure).
   *
   * @throws IllegalStateException where the table was created otherwise while the load ran
   */
  void publish() {
    TableIdentifier target = target();
    Catalog catalog = loader.loadCatalog();
    if (holdsTheLoad(catalog)) {
      LOG.info("CREATE TABLE {} AS SELECT: the table holds its load already", target);
      return;
    }
    Table staged = catalog.loadTable(staging());
    if (purpose == StagingPurpose.CREATE_TABLE_AS_IF_NOT_EXISTS && catalog.tableExists(target)) {
      LOG.info(
          "CREATE TABLE IF NOT EXISTS {} AS SELECT: the table was created while the load ran;"
              + " the load is dropped",
          target);
      return;
    }
    Map<String, String> properties = new HashMap<>(staged.properties());
    properties.remove(TableProperties.WRITE_DATA_LOCATION);
    if (dataPath != null) {
      properties.put(TableProperties.WRITE_DATA_LOCATION, dataPath);
    }
    properties.put(
        TableProperties.FORMAT_VERSION,
        Integer.toString(((HasTableOperations) staged).operations().current().formatVersion()));
    Catalog.TableBuilder builder =
        catalog
            .buildTable(target, staged.schema())
            .withPartitionSpec(staged.spec())
            .withSortOrder(staged.sortOrder())
            .withProperties(properties);
    if (location != null) {
      builder.withLocation(location);
    }
    try {
      Transaction transaction =
          purpose == StagingPurpose.CREATE_OR_REPLACE_TABLE_AS
              ? builder.createOrReplaceTransaction()
              : builder.createTransaction();
      int[] counts = addTheLoad(staged, transaction);
      transaction.commitTransaction();
      LOG.info(
          "CREATE TABLE {} AS SELECT: created the table with the {} data files and {} delete files"
              + " of its load",
          target,
          counts[0],
          counts[1]);
    } catch (AlreadyExistsException created) {
      throw new IllegalStateException(
          "table "
              + target
              + " was created while its CREATE TABLE AS SELECT ran: the load is dropped, the table"
              + " left as it is",
          created);
    }
  }

  /**
   * Adds the files of the staging table's current snapshot to {@code transaction} in one snapshot
   * (empty for an empty load) that carries the load's summary; returns the data and delete files'
   * counts.
   */
  private int[] addTheLoad(Table staged, Transaction transaction) {
    Snapshot load = staged.currentSnapshot();
    List<DataFile> dataFiles = new ArrayList<>();
    Map<String, DeleteFile> deletes = new LinkedHashMap<>();
    if (load != null) {
      try (CloseableIterable<FileScanTask> tasks = staged.newScan().planFiles()) {
        for (FileScanTask task : tasks) {
          dataFiles.add(task.file());
          task.deletes().forEach(delete -> deletes.putIfAbsent(delete.location(), delete));
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    SnapshotUpdate<?> first;
    if (deletes.isEmpty()) {
      AppendFiles append = transaction.newAppend();
      dataFiles.forEach(append::appendFile);
      first = append;
    } else {
      RowDelta delta = transaction.newRowDelta();
      dataFiles.forEach(delta::addRows);
      deletes.values().forEach(delta::addDeletes);
      first = delta;
    }
    if (load != null) {
      load.summary().entrySet().stream()
          .filter(entry -> entry.getKey().startsWith(SUMMARY_PREFIX))
          .forEach(entry -> first.set(entry.getKey(), entry.getValue()));
    }
    first.set(CREATED_FROM, stagingName);
    first.commit();
    return new int[] {dataFiles.size(), deletes.size()};
  }

  /** Whether the table exists and was created from this load. */
  private boolean holdsTheLoad(Catalog catalog) {
    Table table;
    try {
      table = catalog.loadTable(target());
    } catch (NoSuchTableException none) {
      return false;
    }
    for (Snapshot snapshot : table.snapshots()) {
      if (stagingName.equals(snapshot.summary().get(CREATED_FROM))) {
        return true;
      }
    }
    return false;
  }

  @Override
  public void begin() {
    LOG.info(
        "CREATE TABLE {} AS SELECT: the load writes the staging table {}", target(), staging());
  }

  @Override
  public void commit() {
    try {
      Catalog catalog = loader.loadCatalog();
      if (holdsTheLoad(catalog)) {
        // The files now belong to the table; the staging table's metadata goes.
        catalog.dropTable(staging(), false);
      } else {
        // IF NOT EXISTS of a table created meanwhile: the load is not wanted.
        dropWithTheLoad(catalog);
      }
    } catch (RuntimeException e) {
      LOG.error(
          "CREATE TABLE {} AS SELECT finished, but its staging table {} could not be dropped;"
              + " drop it without purging its files (the table holds them)",
          target(),
          staging(),
          e);
    }
  }

  @Override
  public void abort() {
    try {
      Catalog catalog = loader.loadCatalog();
      if (holdsTheLoad(catalog)) {
        catalog.dropTable(staging(), false);
        return;
      }
      dropWithTheLoad(catalog);
      LOG.info(
          "CREATE TABLE {} AS SELECT did not finish: its staging table {} and the files of its"
              + " load are dropped",
          target(),
          staging());
    } catch (RuntimeException e) {
      LOG.error(
          "CREATE TABLE {} AS SELECT did not finish, and its staging table {} could not be"
              + " dropped: drop it, and the files under {}, unless table {} holds them",
          target(),
          staging(),
          stagedData,
          target(),
          e);
    }
  }

  /** Drops the staging table and every file the load wrote, committed or not. */
  void dropWithTheLoad(Catalog catalog) {
    Table staged;
    try {
      staged = catalog.loadTable(staging());
    } catch (NoSuchTableException gone) {
      return;
    }
    FileIO io = staged.io();
    if (io instanceof SupportsPrefixOperations prefixes) {
      // The files of a load that failed before its commit are named by no snapshot.
      prefixes.deletePrefix(stagedData + "/");
    } else {
      LOG.warn(
          "the file IO of {} cannot delete {}: the data files the load wrote there and did not"
              + " commit are left to orphan-file removal",
          staging(),
          stagedData);
    }
    catalog.dropTable(staging(), true);
  }
}
