package io.icebergcdc.commit.internal;

import io.icebergcdc.commit.LiveFiles;
import io.icebergcdc.commit.PositionDeletes;
import java.io.IOException;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.MetadataColumns;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.BaseDeleteLoader;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.data.parquet.GenericParquetReaders;
import org.apache.iceberg.deletes.PositionDeleteIndex;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.parquet.Parquet;
import org.apache.iceberg.types.TypeUtil;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.util.StructLikeMap;
import org.apache.iceberg.util.StructLikeSet;

/**
 * Finds the copies, among a commit's new data files, of compacted rows that another writer deleted
 * after the writer read them, so that the commit deletes the copies too instead of bringing those
 * rows back.
 *
 * <p>A writer's compaction reads a data file with the deletes the table had then, writes each live
 * row again and has the commit remove the file. Between that read and the commit, another engine
 * may delete some of those rows. Where the file is still live and only position deletes (or a
 * deletion vector) apply to it, the rows deleted meanwhile are those of the compacted positions
 * that the table now deletes; our own deletes never are among them, since a row the writer deleted
 * is not copied. Where the file is gone (rewritten by another writer) or equality deletes now apply
 * to it, the positions tell nothing: the keys of the copied rows are looked up in the table as of
 * the commit's base, and a key the table no longer holds was deleted meanwhile. That lookup reads
 * the key columns of the whole table; it happens only on such a conflict.
 *
 * <p>Copies are found by key: the rows a compaction copies are the live rows of keys the writer
 * owns, and a key's copy is its only row in the commit's new files.
 */
final class CompactedCopies {

  private CompactedCopies() {}

  /**
   * @param live the table's live files at {@code base}
   * @param compactedRows the copied positions by compacted data file
   * @param newFiles the commit's new data files
   * @return positions to delete in {@code newFiles}; empty if nothing was deleted meanwhile
   */
  static PositionDeletes deletedMeanwhile(
      Table table,
      Snapshot base,
      LiveFiles live,
      PositionDeletes compactedRows,
      List<DataFile> newFiles)
      throws IOException {
    Map<String, long[]> deletedInPlace = new HashMap<>();
    Map<String, long[]> lookUp = new HashMap<>();
    BaseDeleteLoader loader = null;
    for (String location : compactedRows.files()) {
      long[] copied = compactedRows.positions(location);
      if (live.dataFile(location) == null || live.hasEqualityDeletes(location)) {
        lookUp.put(location, copied);
        continue;
      }
      List<DeleteFile> deletes = live.positionDeletesOf(location);
      if (deletes.isEmpty()) {
        continue;
      }
      if (loader == null) {
        loader = new BaseDeleteLoader(f -> table.io().newInputFile(f.location()));
      }
      PositionDeleteIndex deleted = loader.loadPositionDeletes(deletes, location);
      long[] hit = Arrays.stream(copied).filter(deleted::isDeleted).toArray();
      if (hit.length > 0) {
        deletedInPlace.put(location, hit);
      }
    }
    if (deletedInPlace.isEmpty() && lookUp.isEmpty()) {
      return PositionDeletes.NONE;
    }

    Schema schema = table.schema();
    Schema keySchema = TypeUtil.select(schema, schema.identifierFieldIds());
    StructLikeSet lost = StructLikeSet.create(keySchema.asStruct());
    for (Map.Entry<String, long[]> e : deletedInPlace.entrySet()) {
      lost.addAll(keysAt(table, keySchema, e.getKey(), e.getValue()).keySet());
    }
    if (!lookUp.isEmpty()) {
      StructLikeSet copied = StructLikeSet.create(keySchema.asStruct());
      for (Map.Entry<String, long[]> e : lookUp.entrySet()) {
        copied.addAll(keysAt(table, keySchema, e.getKey(), e.getValue()).keySet());
      }
      StructLikeSet held = StructLikeSet.create(keySchema.asStruct());
      if (base != null) {
        try (CloseableIterable<Record> rows =
            IcebergGenerics.read(table)
                .useSnapshot(base.snapshotId())
                .select(keySchema.columns().stream().map(Types.NestedField::name).toList())
                .build()) {
          for (Record row : rows) {
            Record key = keyOf(keySchema, row);
            if (copied.contains(key)) {
              held.add(key);
            }
          }
        }
      }
      for (StructLike key : copied) {
        if (!held.contains(key)) {
          lost.add(key);
        }
      }
    }
    if (lost.isEmpty()) {
      return PositionDeletes.NONE;
    }
    Map<String, long[]> copies = new HashMap<>();
    for (DataFile file : newFiles) {
      long[] positions =
          keysAt(table, keySchema, file.location(), null).entrySet().stream()
              .filter(e -> lost.contains(e.getKey()))
              .mapToLong(Map.Entry::getValue)
              .toArray();
      if (positions.length > 0) {
        copies.put(file.location(), positions);
      }
    }
    return PositionDeletes.of(copies);
  }

  /**
   * The keys of the rows at {@code positions} (all rows if null) of a data file, with their
   * positions.
   */
  private static StructLikeMap<Long> keysAt(
      Table table, Schema keySchema, String location, long[] positions) throws IOException {
    Schema readSchema = TypeUtil.join(keySchema, new Schema(MetadataColumns.ROW_POSITION));
    StructLikeMap<Long> keys = StructLikeMap.create(keySchema.asStruct());
    try (CloseableIterable<Record> rows =
        Parquet.read(table.io().newInputFile(location))
            .project(readSchema)
            .createReaderFunc(
                fileSchema -> GenericParquetReaders.buildReader(readSchema, fileSchema))
            .build()) {
      for (Record row : rows) {
        long position = (Long) row.getField(MetadataColumns.ROW_POSITION.name());
        if (positions == null || Arrays.binarySearch(positions, position) >= 0) {
          keys.put(keyOf(keySchema, row), position);
        }
      }
    }
    return keys;
  }

  private static Record keyOf(Schema keySchema, Record row) {
    GenericRecord key = GenericRecord.create(keySchema);
    for (Types.NestedField field : keySchema.columns()) {
      key.setField(field.name(), row.getField(field.name()));
    }
    return key;
  }
}
