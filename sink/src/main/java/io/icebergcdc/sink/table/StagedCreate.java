package io.icebergcdc.sink.table;

import io.icebergcdc.commit.SnapshotSummaryKeys;
import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.flink.table.catalog.ObjectPath;
import org.apache.flink.table.catalog.ResolvedCatalogTable;
import org.apache.flink.table.catalog.StagedTable;
import org.apache.flink.table.catalog.exceptions.TableAlreadyExistException;
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
import org.apache.iceberg.flink.FlinkSchemaUtil;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.SupportsPrefixOperations;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An atomic {@code CREATE TABLE ... AS SELECT}: the load writes a staging table of the catalog
 * (named {@code <table>__ctas_<8 hex digits>}, beside the table, its data files in a directory of
 * their own under the table's data location), and when its input has ended and the committer has
 * committed it, {@link #publish} creates the table with those files in one commit of the catalog
 * and drops the staging table's entry: a reader sees no table, then the table with all its rows.
 * {@link #publish} runs in the job (after the committer, {@link
 * io.icebergcdc.sink.AfterLastCommit}), so that its failure fails the job.
 *
 * <p>Flink calls {@link #begin}, {@link #commit} and {@link #abort} on the JobManager as the job's
 * status changes, where an exception would stop the JobManager: they never throw, and log what they
 * could not do. {@link #commit} drops the staging table's entry where the publication could not;
 * {@link #abort} (the job failed or was cancelled) drops the staging table with what the load
 * wrote, unless the table was created from it already, whose files those are.
 */
final class StagedCreate implements StagedTable {

  private static final long serialVersionUID = 1L;
  private static final Logger LOG = LoggerFactory.getLogger(StagedCreate.class);

  /** A staging table's name: the table's, this infix, 8 hex digits. */
  private static final Pattern STAGING_NAME = Pattern.compile("(.+)__ctas_[0-9a-f]{8}");

  private final CatalogLoader loader;

  /** The table's namespace, whose levels are strings (Iceberg's identifiers do not serialize). */
  private final String[] namespace;

  private final String name;
  private final String stagingName;
  private final StagingPurpose purpose;

  /** The table's location: the statement's, or where the catalog would put it. */
  private final String location;

  /** The {@code write.data.path} the statement gave the table; or null. */
  private final String dataPath;

  /** Where the load writes its data files: a directory of their own under the table's. */
  private final String stagedData;

  StagedCreate(
      CatalogLoader loader,
      TableIdentifier target,
      String stagingName,
      StagingPurpose purpose,
      String location,
      String dataPath,
      String stagedData) {
    this.loader = loader;
    this.namespace = target.namespace().levels();
    this.name = target.name();
    this.stagingName = stagingName;
    this.purpose = purpose;
    this.location = location;
    this.dataPath = dataPath;
    this.stagedData = stagedData;
  }

  /**
   * Creates the staging table of {@code target}, defined by {@code table} (the statement's columns,
   * key and options), through {@code flinkCatalog}, so that it gets the checks and defaults of any
   * table the catalog creates.
   */
  static StagedCreate stage(
      IcebergCdcCatalog flinkCatalog,
      CatalogLoader loader,
      TableIdentifier target,
      ResolvedCatalogTable table,
      StagingPurpose purpose) {
    // Refused in the table's name, before the staging table's name is made.
    IcebergCdcCatalog.checkOptions(
        new ObjectPath(target.namespace().toString(), target.name()), table, table.getOptions());
    String id = String.format("%08x", ThreadLocalRandom.current().nextInt());
    String stagingName = target.name() + "__ctas_" + id;
    Map<String, String> options = new HashMap<>(table.getOptions());
    String location = options.remove(IcebergCdcCatalog.LOCATION);
    if (location == null) {
      // Where the catalog would put the table; the transaction is never committed.
      location =
          flinkCatalog
              .catalog()
              .buildTable(target, FlinkSchemaUtil.convert(table.getResolvedSchema()))
              .createTransaction()
              .table()
              .location();
    }
    String dataPath = options.get(TableProperties.WRITE_DATA_LOCATION);
    String base = dataPath != null ? dataPath : location.replaceAll("/+$", "") + "/data";
    String stagedData = base.replaceAll("/+$", "") + "/ctas-" + id;
    options.put(TableProperties.WRITE_DATA_LOCATION, stagedData);
    try {
      flinkCatalog.createTable(
          new ObjectPath(target.namespace().toString(), stagingName), table.copy(options), false);
    } catch (TableAlreadyExistException e) {
      throw new IllegalStateException("the staging table " + stagingName + " exists already", e);
    }
    return new StagedCreate(loader, target, stagingName, purpose, location, dataPath, stagedData);
  }

  TableIdentifier staging() {
    return TableIdentifier.of(Namespace.of(namespace), stagingName);
  }

  private TableIdentifier target() {
    return TableIdentifier.of(Namespace.of(namespace), name);
  }

  /**
   * Creates the table with what the load committed to the staging table, in one commit, its first
   * snapshot marked {@link SnapshotSummaryKeys#CREATED_FROM} the staging table, then drops the
   * staging table's entry; where the table holds the load already (a publication run again after a
   * failure), only the latter.
   *
   * @throws IllegalStateException where the table was created otherwise while the load ran, or the
   *     staging table is gone
   */
  void publish() {
    TableIdentifier target = target();
    Catalog catalog = loader.loadCatalog();
    try {
      if (!publishedFrom(catalog, staging())) {
        create(catalog, target);
      }
      try {
        if (catalog.tableExists(staging())) {
          // The files now belong to the table; the staging table's entry goes.
          catalog.dropTable(staging(), false);
        }
      } catch (RuntimeException e) {
        LOG.warn(
            "CREATE TABLE {} AS SELECT: the table is created, its staging table {} is left (the"
                + " end of the job drops it)",
            target,
            staging(),
            e);
      }
    } finally {
      close(catalog);
    }
  }

  private void create(Catalog catalog, TableIdentifier target) {
    Table staged;
    try {
      staged = catalog.loadTable(staging());
    } catch (NoSuchTableException gone) {
      if (purpose == StagingPurpose.CREATE_TABLE_AS_IF_NOT_EXISTS && catalog.tableExists(target)) {
        // A publication run again after it discarded the load for a table created meanwhile.
        return;
      }
      throw new IllegalStateException(
          "the staging table "
              + staging()
              + " of CREATE TABLE "
              + target
              + " AS SELECT is gone: run the statement again",
          gone);
    }
    int commits = 0;
    for (Snapshot ignored : staged.snapshots()) {
      commits++;
    }
    if (commits > 1) {
      // One snapshot of all its files holds the load only where it was committed once.
      throw new IllegalStateException(
          "the staging table " + staging() + " holds " + commits + " commits of its load, not one");
    }
    if (purpose == StagingPurpose.CREATE_TABLE_AS_IF_NOT_EXISTS && catalog.tableExists(target)) {
      discardTheLoad(catalog, staged, "the table was created while the load ran");
      return;
    }
    Map<String, String> properties = new HashMap<>(staged.properties());
    properties.remove(TableProperties.WRITE_DATA_LOCATION);
    // Kept beyond the first snapshot's expiry: the staging table's files are this table's.
    properties.put(SnapshotSummaryKeys.CREATED_FROM, stagingName);
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
            .withLocation(location)
            .withProperties(properties);
    try {
      // Created, also for CREATE OR REPLACE (staged only where the table did not exist): a table
      // that appeared meanwhile is not replaced, as its replacement would give the staged files'
      // columns the ids of that table's columns of the same names.
      Transaction transaction = builder.createTransaction();
      Load load = addTheLoad(staged, transaction);
      transaction.commitTransaction();
      LOG.info(
          "CREATE TABLE {} AS SELECT: created the table with the {} data files and {} delete files"
              + " of its load",
          target,
          load.dataFiles(),
          load.deleteFiles());
    } catch (AlreadyExistsException created) {
      if (purpose == StagingPurpose.CREATE_TABLE_AS_IF_NOT_EXISTS) {
        discardTheLoad(catalog, staged, "the table was created while the load ran");
        return;
      }
      throw new IllegalStateException(
          "table "
              + target
              + " was created while its CREATE TABLE AS SELECT ran: the load is dropped, the table"
              + " left as it is",
          created);
    }
  }

  /** The counts of the files a load added. */
  private record Load(int dataFiles, int deleteFiles) {}

  /**
   * Adds the files of the staging table's current snapshot, with their column statistics, to {@code
   * transaction} in one snapshot (empty for an empty load) that carries the load's summary.
   */
  private Load addTheLoad(Table staged, Transaction transaction) {
    Snapshot load = staged.currentSnapshot();
    List<DataFile> dataFiles = new ArrayList<>();
    Map<String, DeleteFile> deletes = new LinkedHashMap<>();
    if (load != null) {
      try (CloseableIterable<FileScanTask> tasks =
          staged.newScan().includeColumnStats().planFiles()) {
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
          .filter(entry -> SnapshotSummaryKeys.isOwn(entry.getKey()))
          .forEach(entry -> first.set(entry.getKey(), entry.getValue()));
    }
    first.set(SnapshotSummaryKeys.CREATED_FROM, stagingName);
    first.commit();
    return new Load(dataFiles.size(), deletes.size());
  }

  /**
   * Whether {@code staging} is the staging table of an atomic {@code CREATE TABLE ... AS SELECT}
   * whose table exists and was created from its load: its data files are the table's. The table
   * holds the staging table's name as a property (and on its first snapshot's summary), which
   * snapshot expiry does not remove.
   */
  static boolean publishedFrom(Catalog catalog, TableIdentifier staging) {
    Matcher matcher = STAGING_NAME.matcher(staging.name());
    if (!matcher.matches()) {
      return false;
    }
    Table table;
    try {
      table = catalog.loadTable(TableIdentifier.of(staging.namespace(), matcher.group(1)));
    } catch (NoSuchTableException none) {
      return false;
    }
    if (staging.name().equals(table.properties().get(SnapshotSummaryKeys.CREATED_FROM))) {
      return true;
    }
    for (Snapshot snapshot : table.snapshots()) {
      if (staging.name().equals(snapshot.summary().get(SnapshotSummaryKeys.CREATED_FROM))) {
        return true;
      }
    }
    return false;
  }

  /**
   * Whether {@code table} is a staging table of an atomic {@code CREATE TABLE ... AS SELECT}: its
   * name is one, and it writes its data files into a directory named for it.
   */
  static boolean isStaging(Catalog catalog, TableIdentifier table) {
    Matcher matcher = STAGING_NAME.matcher(table.name());
    if (!matcher.matches()) {
      return false;
    }
    String id = table.name().substring(table.name().length() - 8);
    try {
      String dataPath =
          catalog.loadTable(table).properties().get(TableProperties.WRITE_DATA_LOCATION);
      return dataPath != null && dataPath.replaceAll("/+$", "").endsWith("/ctas-" + id);
    } catch (NoSuchTableException none) {
      return false;
    }
  }

  @Override
  public void begin() {
    LOG.info(
        "CREATE TABLE {} AS SELECT: the load writes the staging table {}", target(), staging());
  }

  @Override
  public void commit() {
    onTheJobManager(
        "finished, but its staging table {} could not be dropped: drop it with the table's"
            + " catalog (this catalog's DROP TABLE keeps the files the table holds)",
        catalog -> {
          if (!catalog.tableExists(staging())) {
            return;
          }
          if (publishedFrom(catalog, staging())) {
            catalog.dropTable(staging(), false);
          } else {
            LOG.warn(
                "CREATE TABLE {} AS SELECT finished without creating the table from its staging"
                    + " table {}, which is left",
                target(),
                staging());
          }
        });
  }

  @Override
  public void abort() {
    onTheJobManager(
        "did not finish, and its staging table {} could not be dropped: drop it with the table's"
            + " catalog (this catalog's DROP TABLE keeps the files the table holds)",
        catalog -> {
          Table staged;
          try {
            staged = catalog.loadTable(staging());
          } catch (NoSuchTableException gone) {
            return;
          }
          if (publishedFrom(catalog, staging())) {
            catalog.dropTable(staging(), false);
          } else {
            discardTheLoad(catalog, staged, "the job did not finish");
          }
        });
  }

  /**
   * Drops the staging table's entry, then every file the load wrote, committed or not: after a
   * failure between the two, no staging table names files that are gone.
   */
  private void discardTheLoad(Catalog catalog, Table staged, String why) {
    FileIO io = staged.io();
    catalog.dropTable(staging(), true);
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
    LOG.info(
        "CREATE TABLE {} AS SELECT: {}; its staging table {} and the files of its load are"
            + " dropped",
        target(),
        why,
        staging());
  }

  /** Work with the catalog in a job status hook: this jar's class loader, nothing thrown. */
  private void onTheJobManager(String failure, CatalogWork work) {
    Thread thread = Thread.currentThread();
    ClassLoader before = thread.getContextClassLoader();
    thread.setContextClassLoader(StagedCreate.class.getClassLoader());
    Catalog catalog = null;
    try {
      catalog = loader.loadCatalog();
      work.run(catalog);
    } catch (Throwable e) {
      LOG.error("CREATE TABLE {} AS SELECT " + failure, target(), staging(), e);
    } finally {
      close(catalog);
      thread.setContextClassLoader(before);
    }
  }

  private interface CatalogWork {
    void run(Catalog catalog) throws Exception;
  }

  private static void close(Catalog catalog) {
    if (catalog instanceof Closeable closeable) {
      try {
        closeable.close();
      } catch (IOException | RuntimeException e) {
        LOG.warn("could not close catalog {}", catalog.name(), e);
      }
    }
  }
}
