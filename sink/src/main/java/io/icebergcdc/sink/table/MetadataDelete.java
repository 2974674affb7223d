package io.icebergcdc.sink.table;

import io.icebergcdc.commit.SnapshotSummaryKeys;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Optional;
import org.apache.flink.table.expressions.ResolvedExpression;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableScan;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.expressions.StrictMetricsEvaluator;
import org.apache.iceberg.flink.FlinkFilters;
import org.apache.iceberg.io.CloseableIterable;

/**
 * A {@code DELETE FROM t WHERE ...} whose filter matches whole data files: by their partition, or
 * by their column statistics. It is committed as one snapshot that removes those files, reading and
 * writing no data file; any other filter is a row-level delete. The filter matches the rows SQL's
 * {@code WHERE} does ({@link SqlTruth}): {@code region <> 'EU'} leaves the rows whose region is
 * null.
 */
final class MetadataDelete {

  private final Expression filter;
  private final int files;
  private final boolean countKnown;

  private MetadataDelete(Expression filter, int files, boolean countKnown) {
    this.filter = filter;
    this.files = files;
    this.countKnown = countKnown;
  }

  /**
   * The metadata-only delete of {@code filters} (conjuncts) from the table's current snapshot, or
   * empty when a filter does not convert to Iceberg's expressions or a file has rows on both sides.
   */
  static Optional<MetadataDelete> of(Table table, List<ResolvedExpression> filters) {
    Expression filter = Expressions.alwaysTrue();
    for (ResolvedExpression expression : filters) {
      Optional<Expression> converted = FlinkFilters.convert(expression);
      if (converted.isEmpty()) {
        return Optional.empty();
      }
      filter = Expressions.and(filter, SqlTruth.whereTrue(converted.get()));
    }
    if (table.currentSnapshot() == null) {
      return Optional.of(new MetadataDelete(filter, 0, true));
    }
    int files = 0;
    boolean countKnown = true;
    try (CloseableIterable<FileScanTask> tasks = wholeFileScan(table, filter).planFiles()) {
      for (FileScanTask task : tasks) {
        if (!matchesWholly(table, task)) {
          return Optional.empty();
        }
        files++;
        countKnown &= task.deletes().isEmpty();
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return Optional.of(new MetadataDelete(filter, files, countKnown));
  }

  /**
   * The first data file of the table's current snapshot that has rows on both sides of {@code
   * filter}, which a delete of whole files cannot remove; empty when there is none.
   */
  static Optional<String> partlyMatchedFile(Table table, Expression filter) {
    if (table.currentSnapshot() == null) {
      return Optional.empty();
    }
    try (CloseableIterable<FileScanTask> tasks = wholeFileScan(table, filter).planFiles()) {
      for (FileScanTask task : tasks) {
        if (!matchesWholly(table, task)) {
          return Optional.of(task.file().location());
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return Optional.empty();
  }

  /**
   * The scan of the files {@code filter} may match, with their column statistics, which a scan
   * leaves out unless asked: without them no file matches wholly but by its partition.
   */
  private static TableScan wholeFileScan(Table table, Expression filter) {
    return table.newScan().filter(filter).includeColumnStats();
  }

  /** Whether the filter matches every row of the task's file: by partition, or by statistics. */
  private static boolean matchesWholly(Table table, FileScanTask task) {
    Expression residual = task.residual();
    return residual.equals(Expressions.alwaysTrue())
        || new StrictMetricsEvaluator(table.schema(), residual).eval(task.file());
  }

  /**
   * Commits the delete; the number of rows removed, when the removed files had no deletes of their
   * own (their record counts are then the rows). A filter that matched no file when it was planned
   * commits nothing.
   */
  Optional<Long> commit(Table table) {
    if (files == 0) {
      return Optional.of(0L);
    }
    table
        .newDelete()
        .deleteFromRowFilter(filter)
        .set(SnapshotSummaryKeys.STATEMENT, "DELETE")
        .commit();
    Snapshot snapshot = table.currentSnapshot();
    if (snapshot == null || !countKnown) {
      return Optional.empty();
    }
    String deleted = snapshot.summary().get("deleted-records");
    return Optional.of(deleted == null ? 0L : Long.parseLong(deleted));
  }
}
