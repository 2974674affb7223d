package io.icebergcdc.sink.internal;

import io.icebergcdc.commit.ReplacedTableException;
import io.icebergcdc.commit.TableRefresh;
import io.icebergcdc.sink.SharedCatalog;
import java.util.Set;
import org.apache.iceberg.BaseTable;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.TableOperations;
import org.apache.iceberg.encryption.EncryptionManager;
import org.apache.iceberg.flink.TableLoader;
import org.apache.iceberg.hadoop.HadoopTableOperations;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.LocationProvider;

/**
 * A writer's copy of a table: the table as its catalog loaded it, without the snapshots that no
 * branch or tag points to (Iceberg's historical snapshots), which a writer never reads.
 *
 * <p>A table's metadata holds every snapshot the table keeps, each with its summary: about 2.5 KB
 * of heap a snapshot, some 0.9 MB for the 360 snapshots an hour of commits every 10 s leaves. Each
 * writer subtask keeps a copy of each of its tables, refreshed as it compacts, beside the
 * committer's; in a job of hundreds of tables those copies come to more heap than anything else the
 * tables hold. The copy is read-only (the committer commits): it reads the current snapshot,
 * schemas, specs and properties, writes files through the table's file IO, encryption and location
 * provider, and is refreshed by loading the table again: that reads the table's metadata file even
 * where it has not changed, which a refresh skips, and refuses a table that was dropped and created
 * again, as a refresh does.
 *
 * <p>Only a table whose file IO is its catalog's is copied so: one of a Hadoop, JDBC or Hive
 * catalog. Others are kept as loaded and refreshed as such: a REST or Glue catalog can give a table
 * a file IO of its own, which Iceberg closes once the table's operations are gone, and catalogs of
 * other kinds may do likewise. A REST catalog loads the writers' tables without their historical
 * snapshots itself ({@code CatalogDefinition#writersLoader}); they are kept read-only too, writing
 * through the file IO of their first load (see {@link #writingThrough}).
 */
final class WriterTable {

  private WriterTable() {}

  /** The table of {@code loader}, as a writer keeps it. */
  static Table load(TableLoader loader) {
    Table loaded = loader.loadTable();
    return kept(
        loaded,
        SharedCatalog.loadsReferencedSnapshotsOnly(loader)
                && loaded instanceof HasTableOperations first
            ? first.operations()
            : null);
  }

  /**
   * {@code loaded} as a writer keeps it: written through the file IO of {@code origin} where given
   * (a table of a writers' catalog, {@link #writingThrough}), else without its historical snapshots
   * where its file IO is its catalog's ({@link #withoutHistory}). A REST table the server plans
   * scans for is of a class of its own, kept as loaded.
   */
  private static Table kept(Table loaded, TableOperations origin) {
    if (origin != null && loaded.getClass() == BaseTable.class) {
      return writingThrough((BaseTable) loaded, origin);
    }
    return withoutHistory(loaded);
  }

  /**
   * The operations whose file IO is their catalog's, by class name (JDBC's are package-private,
   * Hive's not on the sink's compile class path): a subclass of Iceberg's metastore operations may
   * hold one of its own, as Glue's do. {@code WriterTableTest} checks that the names are classes.
   */
  static final Set<String> CATALOG_IO_OPERATIONS =
      Set.of(
          HadoopTableOperations.class.getName(),
          "org.apache.iceberg.jdbc.JdbcTableOperations",
          "org.apache.iceberg.hive.HiveTableOperations");

  /** {@code table} as it is now in the catalog, as a writer keeps it. */
  static Table refresh(Table table, TableLoader loader) {
    if (table instanceof HasTableOperations
        && ((HasTableOperations) table).operations() instanceof CurrentOperations copy) {
      Table loaded = ReplacedTableException.unlessDropped(table.name(), loader::loadTable);
      ReplacedTableException.requireSameTable(
          table.name(),
          copy.current().uuid(),
          ((HasTableOperations) loaded).operations().current().uuid());
      return kept(loaded, copy.origin);
    }
    return TableRefresh.refresh(table, loader);
  }

  /**
   * {@code loaded}, a table of a catalog that loads only the snapshots a branch or tag points to,
   * kept read-only with the file IO of {@code origin}, the operations of its first load, which the
   * copy holds: a REST catalog gives a table it loads a file IO of its own where it vends
   * credentials or storage settings, which Iceberg closes once the table's operations are gone, and
   * a writer that kept each load's would open a storage client for each. (So a writer writes
   * through its first load's credentials for the life of its task, as it did when it refreshed the
   * table in place.) Iceberg's REST client refreshes a table with every snapshot, so such a table
   * is loaded again instead.
   */
  private static Table writingThrough(BaseTable loaded, TableOperations origin) {
    TableOperations ops = loaded.operations();
    return new BaseTable(
        new CurrentOperations(
            loaded.name(),
            ops.current(),
            origin.io(),
            ops.encryption(),
            ops.locationProvider(),
            origin),
        loaded.name(),
        loaded.reporter());
  }

  /** {@code loaded} without its historical snapshots, if its file IO is its catalog's. */
  static Table withoutHistory(Table loaded) {
    if (loaded.getClass() != BaseTable.class) {
      return loaded;
    }
    BaseTable table = (BaseTable) loaded;
    TableOperations ops = table.operations();
    if (!CATALOG_IO_OPERATIONS.contains(ops.getClass().getName())) {
      return loaded;
    }
    TableMetadata full = ops.current();
    TableMetadata current =
        TableMetadata.buildFrom(full)
            .suppressHistoricalSnapshots()
            .discardChanges()
            .withMetadataLocation(full.metadataFileLocation())
            .build();
    return new BaseTable(
        new CurrentOperations(
            table.name(), current, ops.io(), ops.encryption(), ops.locationProvider(), null),
        table.name(),
        table.reporter());
  }

  /**
   * The operations of a writer's copy: its metadata and what writing files needs, captured from the
   * catalog's operations so that those, and the full metadata they hold, can go.
   */
  private static final class CurrentOperations implements TableOperations {

    private final String name;
    private final TableMetadata metadata;
    private final FileIO io;
    private final EncryptionManager encryption;
    private final LocationProvider locations;

    /**
     * The operations whose file IO and encryption the copy writes through, held so that Iceberg
     * does not close that IO; null where they are the catalog's own.
     */
    final TableOperations origin;

    CurrentOperations(
        String name,
        TableMetadata metadata,
        FileIO io,
        EncryptionManager encryption,
        LocationProvider locations,
        TableOperations origin) {
      this.name = name;
      this.metadata = metadata;
      this.io = io;
      this.encryption = encryption;
      this.locations = locations;
      this.origin = origin;
    }

    @Override
    public TableMetadata current() {
      return metadata;
    }

    @Override
    public TableMetadata refresh() {
      throw new UnsupportedOperationException(
          "a writer's copy of table " + name + " is refreshed by loading it again");
    }

    @Override
    public void commit(TableMetadata base, TableMetadata updated) {
      throw new UnsupportedOperationException(
          "a writer's copy of table " + name + " is read-only: the committer commits");
    }

    @Override
    public FileIO io() {
      return io;
    }

    @Override
    public EncryptionManager encryption() {
      return encryption;
    }

    @Override
    public String metadataFileLocation(String fileName) {
      throw new UnsupportedOperationException(
          "a writer's copy of table " + name + " writes no metadata");
    }

    @Override
    public LocationProvider locationProvider() {
      return locations;
    }
  }
}
