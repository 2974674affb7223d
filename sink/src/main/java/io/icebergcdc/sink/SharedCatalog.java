package io.icebergcdc.sink;

import java.io.Closeable;
import java.io.IOException;
import java.io.Serializable;
import org.apache.iceberg.EnvironmentContext;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.flink.CatalogLoader;
import org.apache.iceberg.flink.TableLoader;
import org.apache.iceberg.flink.util.FlinkPackage;

/**
 * One catalog for the tables of a job of several: the table loaders it hands out ({@link
 * #tableLoader}) load their tables from one instance of the catalog, loaded when the first of them
 * opens and closed when the last of them closes. Iceberg's own loaders ({@code
 * TableLoader.fromCatalog}) load a catalog each, so that a writer or committer of hundreds of
 * tables held hundreds: with a Hadoop catalog, a copy of the Hadoop configuration each (about 200
 * KB of heap); with a REST catalog, an HTTP client and a session each; with {@code S3FileIO}, an S3
 * client each.
 *
 * <p>It travels with the operator that holds its loaders: each instance of that operator (each
 * subtask) deserializes one, and its tables share one catalog; operators and subtasks do not share
 * theirs. Where no loader is open it holds no catalog: {@link #open} keeps one open meanwhile, for
 * a caller that opens several loaders one after the other (a job's sinks as they are built).
 *
 * <p><b>Threading:</b> loaders of one shared catalog may open, load and close on any threads; one
 * loader is used by one thread at a time, as Iceberg's are.
 */
public final class SharedCatalog implements Serializable {

  private static final long serialVersionUID = 1L;

  private final CatalogLoader loader;

  /**
   * Where the writers load their tables: this catalog, or the same catalog loaded for them ({@link
   * CatalogDefinition#writersLoader}).
   */
  private final SharedCatalog writers;

  /** Whether this is a writers' catalog, whose tables hold only referenced snapshots. */
  private final boolean referencedSnapshotsOnly;

  /** The catalog while a loader is open; guarded by this. */
  private transient Catalog catalog;

  /** How many loaders are open; guarded by this. */
  private transient int opened;

  public SharedCatalog(CatalogLoader loader) {
    this(loader, null);
  }

  /**
   * @param writersLoader the catalog loaded for the writers, or null where they load their tables
   *     as the others do
   */
  public SharedCatalog(CatalogLoader loader, CatalogLoader writersLoader) {
    this(loader, writersLoader, false);
  }

  private SharedCatalog(
      CatalogLoader loader, CatalogLoader writersLoader, boolean referencedSnapshotsOnly) {
    this.loader = java.util.Objects.requireNonNull(loader, "catalog loader");
    this.referencedSnapshotsOnly = referencedSnapshotsOnly;
    this.writers = writersLoader == null ? this : new SharedCatalog(writersLoader, null, true);
  }

  /**
   * Whether the tables of {@code loader} hold only the snapshots a branch or tag points to: loaded
   * from a writers' catalog of a {@link CatalogDefinition#writersLoader}, they are loaded again
   * rather than refreshed.
   */
  public static boolean loadsReferencedSnapshotsOnly(TableLoader loader) {
    return loader instanceof SharedCatalogTableLoader table && table.shared.referencedSnapshotsOnly;
  }

  /** A loader of {@code table} from this catalog. */
  public TableLoader tableLoader(TableIdentifier table) {
    return new SharedCatalogTableLoader(this, table.toString());
  }

  /**
   * A loader of {@code table} for its writers, which read its current snapshot and never its
   * history: from the writers' catalog where there is one.
   */
  public TableLoader writerTableLoader(TableIdentifier table) {
    // A copy of an earlier build's, deserialized, has none.
    return writers == null ? tableLoader(table) : writers.tableLoader(table);
  }

  /**
   * Keeps the catalog open until the returned handle is closed, so that loaders opened and closed
   * meanwhile do not each load and close it.
   */
  public Closeable open() {
    acquire();
    return new Closeable() {
      private boolean closed;

      @Override
      public void close() throws IOException {
        if (!closed) {
          closed = true;
          release();
        }
      }
    };
  }

  private synchronized Catalog acquire() {
    if (catalog == null) {
      catalog = loader.loadCatalog();
    }
    opened++;
    return catalog;
  }

  private synchronized void release() throws IOException {
    if (--opened > 0) {
      return;
    }
    Catalog closing = catalog;
    catalog = null;
    if (closing instanceof Closeable closeable) {
      closeable.close();
    }
  }

  @Override
  public String toString() {
    // Not the loader's: its properties may hold credentials.
    return "SharedCatalog{" + loader.getClass().getSimpleName() + "}";
  }

  /** A table of a {@link SharedCatalog}; as Iceberg's catalog table loader, but for the sharing. */
  private static final class SharedCatalogTableLoader implements TableLoader {

    private static final long serialVersionUID = 1L;

    private final SharedCatalog shared;
    private final String identifier;

    private transient Catalog catalog;

    private SharedCatalogTableLoader(SharedCatalog shared, String identifier) {
      this.shared = shared;
      this.identifier = identifier;
    }

    @Override
    public void open() {
      if (catalog == null) {
        catalog = shared.acquire();
      }
    }

    @Override
    public boolean isOpen() {
      return catalog != null;
    }

    @Override
    public Table loadTable() {
      if (catalog == null) {
        throw new IllegalStateException("the loader of table " + identifier + " is not open");
      }
      // What Iceberg's own loader records for the snapshots' summaries.
      EnvironmentContext.put(EnvironmentContext.ENGINE_NAME, "flink");
      EnvironmentContext.put(EnvironmentContext.ENGINE_VERSION, FlinkPackage.version());
      return catalog.loadTable(TableIdentifier.parse(identifier));
    }

    @Override
    public void close() throws IOException {
      if (catalog != null) {
        catalog = null;
        shared.release();
      }
    }

    @Override
    @SuppressWarnings({"checkstyle:NoClone", "checkstyle:SuperClone"})
    public TableLoader clone() {
      return new SharedCatalogTableLoader(shared, identifier);
    }

    @Override
    public String toString() {
      return "table " + identifier + " of " + shared;
    }
  }
}
