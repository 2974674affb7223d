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
    return refresh(table, loader, uuid(table), true);
  }

  /**
   * {@code table}, refreshed, or the table loaded again from {@code loader}; a {@link
   * ReplacedTableException} where the catalog no longer has it or has another table than the one of
   * {@code uuid} (null: not known) under its name.
   *
   * @param confirmDrop whether a table the refresh misses is loaded again over some seconds before
   *     it counts as dropped ({@link ReplacedTableException#unlessDropped}); a caller that lets the
   *     failure pass, and refreshes again later, tries once
   */
  public static Table refresh(Table table, TableLoader loader, String uuid, boolean confirmDrop) {
    long[] pauses =
        confirmDrop
            ? ReplacedTableException.CONFIRMATION_PAUSES_MS
            : ReplacedTableException.AT_ONCE;
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
      refreshed = ReplacedTableException.unlessDropped(table.name(), loader::loadTable, pauses);
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
      refreshed = ReplacedTableException.unlessDropped(table.name(), loader::loadTable, pauses);
    }
    // A table dropped and created again can refresh without Iceberg's own check: loaded again
    // above, or by metastore operations that forgot the old one at a refresh that missed it.
    ReplacedTableException.requireSameTable(table.name(), uuid, uuid(refreshed));
    return refreshed;
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
