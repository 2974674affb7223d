package io.icebergcdc.commit;

import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.Table;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.exceptions.ValidationException;
import org.apache.iceberg.flink.TableLoader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Refreshes a table that an operator keeps for the life of its task, loading it anew where the
 * refresh cannot catch up.
 *
 * <p>A Hadoop table refreshes by reading its current metadata file's version and walking forward
 * from it; once more commits than {@code write.metadata.previous-versions-max} have passed since
 * its last refresh, with {@code write.metadata.delete-after-commit.enabled} (which tables this
 * project creates have), that file is gone and every later refresh fails with "Metadata file for
 * version N is missing". A table loaded from the catalog again starts from the version hint.
 *
 * <p>A table the catalog no longer has (dropped while the job runs) fails with a {@link
 * ReplacedTableException}, which ends the job with its name and the ways out.
 */
public final class TableRefresh {

  private static final Logger LOG = LoggerFactory.getLogger(TableRefresh.class);

  private TableRefresh() {}

  /** {@code table}, refreshed, or the table loaded again from {@code loader}. */
  public static Table refresh(Table table, TableLoader loader) {
    return refresh(table, loader, uuid(table));
  }

  /**
   * {@code table}, refreshed, or the table loaded again from {@code loader}; a {@link
   * ReplacedTableException} where the catalog no longer has it (asked again a few times over some
   * seconds first: a REST catalog answers any 404 so, an ingress's in a rollout too) or has another
   * table than the one of {@code uuid} (null: not known) under its name.
   */
  public static Table refresh(Table table, TableLoader loader, String uuid) {
    Table refreshed;
    try {
      table.refresh();
      if (table instanceof HasTableOperations operations
          && operations.operations().current() == null) {
        // A metastore catalog's operations that a refresh found no table for once, and that
        // disabled their refreshes since (JDBC's): the table is gone.
        throw new NoSuchTableException("Table does not exist: %s", table.name());
      }
      refreshed = table;
    } catch (NoSuchTableException e) {
      refreshed = loadedAgainUnlessDropped(table.name(), loader, e);
    } catch (IllegalStateException e) {
      // Iceberg's refresh of a table whose catalog now holds another under its name.
      if (e.getMessage() != null && e.getMessage().startsWith("Table UUID does not match")) {
        throw ReplacedTableException.recreated(table.name(), uuid, "another", e);
      }
      throw e;
    } catch (ValidationException e) {
      if (e.getMessage() == null || !e.getMessage().startsWith("Metadata file for version")) {
        throw e;
      }
      LOG.info(
          "Table {} fell more commits behind than it keeps metadata files ({}); loading it again",
          table.name(),
          e.getMessage());
      refreshed = loadedAgainUnlessDropped(table.name(), loader, null);
    }
    // A table dropped and created again can refresh without Iceberg's own check: loaded again
    // above, or by metastore operations that forgot the old one at a refresh that missed it.
    String refreshedUuid = uuid(refreshed);
    if (uuid != null && refreshedUuid != null && !uuid.equals(refreshedUuid)) {
      throw ReplacedTableException.recreated(table.name(), uuid, refreshedUuid, null);
    }
    return refreshed;
  }

  /** Pauses before each load of a table that a refresh missed: the drop is confirmed over them. */
  private static final long[] DROP_CONFIRMATION_PAUSES_MS = {0, 500, 1_000, 2_000};

  /**
   * The table loaded again from {@code loader}, where a refresh missed it ({@code missed}, or null
   * where the refresh could not catch up): a {@link ReplacedTableException} once no load over
   * {@link #DROP_CONFIRMATION_PAUSES_MS} finds it.
   */
  private static Table loadedAgainUnlessDropped(
      String name, TableLoader loader, NoSuchTableException missed) {
    NoSuchTableException last = missed;
    for (long pause : DROP_CONFIRMATION_PAUSES_MS) {
      try {
        Thread.sleep(pause);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw ReplacedTableException.dropped(name, last);
      }
      try {
        Table loaded = loader.loadTable();
        if (last != null) {
          LOG.warn(
              "Table {} was not in the catalog at a refresh ({}), and is again",
              name,
              last.getMessage());
        }
        return loaded;
      } catch (NoSuchTableException again) {
        last = again;
      }
    }
    throw ReplacedTableException.dropped(name, last);
  }

  /**
   * The table's UUID, null where it has none or it cannot be read: a table whose operations must
   * refresh before they answer (a refresh failed before) refreshes here, and where that fails, the
   * refresh that follows fails the same way.
   */
  private static String uuid(Table table) {
    try {
      java.util.UUID uuid = table.uuid();
      return uuid == null ? null : uuid.toString();
    } catch (RuntimeException e) {
      return null;
    }
  }
}
