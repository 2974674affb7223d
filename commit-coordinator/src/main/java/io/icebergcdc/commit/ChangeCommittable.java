package io.icebergcdc.commit;

import io.icebergcdc.cdc.ChangeStats;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.apache.iceberg.PartitionSpec;

/**
 * A subtask's contribution to one checkpoint's commit: the data and delete files a writer wrote,
 * the data files its position deletes refer to, the data files it compacted, and what the dedup
 * counted.
 *
 * <p>Files are held in Iceberg's JSON form of content files (the one the REST catalog protocol
 * defines, see {@link ContentFileCodec}), so that the committable and the committer's state stay
 * readable across releases without Java serialization. Immutable.
 */
public final class ChangeCommittable {

  public static final ChangeCommittable EMPTY =
      new ChangeCommittable(List.of(), List.of(), List.of(), ChangeStats.EMPTY);

  private final List<String> dataFiles;
  private final List<String> deleteFiles;
  private final List<String> referencedDataFiles;
  private final ChangeStats stats;
  private final PositionDeletes positionDeletes;
  private final long equalityFallbacks;
  private final List<String> compactedDataFiles;
  private final PositionDeletes compactedRows;
  private final String table;

  public ChangeCommittable(
      List<String> dataFiles,
      List<String> deleteFiles,
      List<String> referencedDataFiles,
      ChangeStats stats) {
    this(dataFiles, deleteFiles, referencedDataFiles, stats, PositionDeletes.NONE, 0);
  }

  /**
   * @param positionDeletes rows to delete by position, for the committer to write as position
   *     delete files or deletion vectors
   * @param equalityFallbacks how many deletes the writers wrote as equality deletes because the
   *     position of the row was not known
   */
  public ChangeCommittable(
      List<String> dataFiles,
      List<String> deleteFiles,
      List<String> referencedDataFiles,
      ChangeStats stats,
      PositionDeletes positionDeletes,
      long equalityFallbacks) {
    this(
        dataFiles,
        deleteFiles,
        referencedDataFiles,
        stats,
        positionDeletes,
        equalityFallbacks,
        List.of());
  }

  /**
   * @param compactedDataFiles locations of data files whose live rows the writer wrote again into
   *     its new data files, to be removed by the commit; {@code positionDeletes} also deletes those
   *     rows, which is what the commit does instead where such a file is no longer in the table
   */
  public ChangeCommittable(
      List<String> dataFiles,
      List<String> deleteFiles,
      List<String> referencedDataFiles,
      ChangeStats stats,
      PositionDeletes positionDeletes,
      long equalityFallbacks,
      List<String> compactedDataFiles) {
    this(
        dataFiles,
        deleteFiles,
        referencedDataFiles,
        stats,
        positionDeletes,
        equalityFallbacks,
        compactedDataFiles,
        PositionDeletes.NONE);
  }

  /**
   * @param compactedRows for each compacted data file, the positions of the rows written again (a
   *     subset of its {@code positionDeletes}): the committer checks that no other writer deleted
   *     any of them meanwhile, and deletes the copies of those it did
   */
  public ChangeCommittable(
      List<String> dataFiles,
      List<String> deleteFiles,
      List<String> referencedDataFiles,
      ChangeStats stats,
      PositionDeletes positionDeletes,
      long equalityFallbacks,
      List<String> compactedDataFiles,
      PositionDeletes compactedRows) {
    this(
        dataFiles,
        deleteFiles,
        referencedDataFiles,
        stats,
        positionDeletes,
        equalityFallbacks,
        compactedDataFiles,
        compactedRows,
        null);
  }

  /**
   * @param table the table this contribution is for, where one committer commits several tables
   *     ({@link #forTable}); null where the committer commits one table
   */
  public ChangeCommittable(
      List<String> dataFiles,
      List<String> deleteFiles,
      List<String> referencedDataFiles,
      ChangeStats stats,
      PositionDeletes positionDeletes,
      long equalityFallbacks,
      List<String> compactedDataFiles,
      PositionDeletes compactedRows,
      String table) {
    this.table = table;
    this.compactedDataFiles = List.copyOf(compactedDataFiles);
    this.compactedRows = Objects.requireNonNull(compactedRows, "compactedRows");
    this.dataFiles = List.copyOf(dataFiles);
    this.deleteFiles = List.copyOf(deleteFiles);
    this.referencedDataFiles = List.copyOf(referencedDataFiles);
    this.stats = Objects.requireNonNull(stats, "stats");
    this.positionDeletes = Objects.requireNonNull(positionDeletes, "positionDeletes");
    this.equalityFallbacks = equalityFallbacks;
  }

  /** A contribution of counts only, as the dedup makes. */
  public static ChangeCommittable ofStats(ChangeStats stats) {
    return new ChangeCommittable(List.of(), List.of(), List.of(), stats);
  }

  /** Data files, as {@link ContentFileCodec} JSON. */
  public List<String> dataFiles() {
    return dataFiles;
  }

  /** Delete files, as {@link ContentFileCodec} JSON. */
  public List<String> deleteFiles() {
    return deleteFiles;
  }

  /** Locations of the data and delete files this contribution adds, decoded with {@code specs}. */
  public List<String> addedFileLocations(Map<Integer, PartitionSpec> specs) {
    List<String> locations = new ArrayList<>(dataFiles.size() + deleteFiles.size());
    dataFiles.forEach(f -> locations.add(ContentFileCodec.decodeDataFile(f, specs).location()));
    deleteFiles.forEach(f -> locations.add(ContentFileCodec.decodeDeleteFile(f, specs).location()));
    return locations;
  }

  /** Locations of data files that this contribution's position deletes refer to. */
  public List<String> referencedDataFiles() {
    return referencedDataFiles;
  }

  public ChangeStats stats() {
    return stats;
  }

  public PositionDeletes positionDeletes() {
    return positionDeletes;
  }

  public long equalityFallbacks() {
    return equalityFallbacks;
  }

  /** Locations of the data files compacted into this contribution's data files. */
  public List<String> compactedDataFiles() {
    return compactedDataFiles;
  }

  /**
   * Positions of the rows written again, by compacted data file; empty for committables of releases
   * that did not record them.
   */
  public PositionDeletes compactedRows() {
    return compactedRows;
  }

  /**
   * The table this contribution is for, as the committer of several tables knows it; null for the
   * committer of one table.
   */
  public String table() {
    return table;
  }

  /** This contribution, for {@code table} of a committer of several tables. */
  public ChangeCommittable forTable(String table) {
    return Objects.equals(table, this.table)
        ? this
        : new ChangeCommittable(
            dataFiles,
            deleteFiles,
            referencedDataFiles,
            stats,
            positionDeletes,
            equalityFallbacks,
            compactedDataFiles,
            compactedRows,
            table);
  }

  /** Whether there is anything to commit. */
  public boolean hasFiles() {
    return !dataFiles.isEmpty()
        || !deleteFiles.isEmpty()
        || !positionDeletes.isEmpty()
        || !compactedDataFiles.isEmpty();
  }

  /** Both contributions together, of this one's table (or the other's, where this has none). */
  public ChangeCommittable plus(ChangeCommittable other) {
    if (table != null && other.table != null && !table.equals(other.table)) {
      throw new IllegalArgumentException(
          "contributions to two tables, " + table + " and " + other.table + ", cannot be added");
    }
    return new ChangeCommittable(
        concat(dataFiles, other.dataFiles),
        concat(deleteFiles, other.deleteFiles),
        concat(referencedDataFiles, other.referencedDataFiles),
        stats.plus(other.stats),
        positionDeletes.plus(other.positionDeletes),
        equalityFallbacks + other.equalityFallbacks,
        concat(compactedDataFiles, other.compactedDataFiles),
        compactedRows.plus(other.compactedRows),
        table != null ? table : other.table);
  }

  private static List<String> concat(List<String> a, List<String> b) {
    if (a.isEmpty()) {
      return b;
    }
    if (b.isEmpty()) {
      return a;
    }
    List<String> result = new ArrayList<>(a.size() + b.size());
    result.addAll(a);
    result.addAll(b);
    return Collections.unmodifiableList(result);
  }

  @Override
  public boolean equals(Object o) {
    if (!(o instanceof ChangeCommittable)) {
      return false;
    }
    ChangeCommittable that = (ChangeCommittable) o;
    return dataFiles.equals(that.dataFiles)
        && deleteFiles.equals(that.deleteFiles)
        && referencedDataFiles.equals(that.referencedDataFiles)
        && stats.equals(that.stats)
        && positionDeletes.equals(that.positionDeletes)
        && equalityFallbacks == that.equalityFallbacks
        && compactedDataFiles.equals(that.compactedDataFiles)
        && compactedRows.equals(that.compactedRows)
        && Objects.equals(table, that.table);
  }

  @Override
  public int hashCode() {
    return Objects.hash(dataFiles, deleteFiles, referencedDataFiles, stats);
  }

  @Override
  public String toString() {
    return (table == null ? "" : table + ": ")
        + dataFiles.size()
        + " data files, "
        + deleteFiles.size()
        + " delete files, "
        + stats;
  }
}
