package io.icebergcdc.commit.internal;

import io.icebergcdc.commit.EqualityDeleteFiles;
import io.icebergcdc.commit.EqualityDeleteSpecs;
import io.icebergcdc.commit.ParquetWriterProperties;
import io.icebergcdc.commit.PositionDeletes;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.MetadataColumns;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.GenericFileWriterFactory;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.data.parquet.GenericParquetReaders;
import org.apache.iceberg.encryption.EncryptedOutputFile;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.OutputFileFactory;
import org.apache.iceberg.parquet.Parquet;
import org.apache.iceberg.types.TypeUtil;
import org.apache.iceberg.types.Types;

/**
 * Turns position deletes of data files that are no longer live (another writer, such as a
 * compaction, replaced them after the writer recorded the positions) into equality deletes of the
 * same rows' primary keys. The keys are read from the replaced files, which stay readable until
 * their snapshots expire. The equality deletes apply to every older row of those keys, wherever the
 * other writer moved them; the rows this commit writes are newer and stay.
 */
final class EqualityFallbackWriter {

  private EqualityFallbackWriter() {}

  static List<DeleteFile> write(
      Table table, PositionDeletes deletes, long taskId, String operationId) throws IOException {
    Schema schema = table.schema();
    Set<Integer> keyIds = schema.identifierFieldIds();
    Schema keySchema = TypeUtil.select(schema, keyIds);
    Schema readSchema = TypeUtil.join(keySchema, new Schema(MetadataColumns.ROW_POSITION));
    int[] equalityFieldIds = keyIds.stream().mapToInt(Integer::intValue).toArray();
    GenericFileWriterFactory factory =
        new GenericFileWriterFactory.Builder(table)
            .deleteFileFormat(FileFormat.PARQUET)
            .equalityFieldIds(equalityFieldIds)
            .equalityDeleteRowSchema(keySchema)
            .writerProperties(ParquetWriterProperties.of(table.properties()))
            .build();
    OutputFileFactory files =
        OutputFileFactory.builderFor(table, 1, taskId)
            .format(FileFormat.PARQUET)
            .operationId(operationId)
            .build();
    List<String> opened = new ArrayList<>();
    // The rows another writer moved may be in files of any spec the table's data has.
    EqualityDeleteFiles<Record> deleteFiles =
        new EqualityDeleteFiles<>(
            EqualityDeleteSpecs.of(table, table.spec(), keyIds).specs(),
            schema,
            (spec, partition) -> {
              EncryptedOutputFile output = files.newOutputFile(spec, partition);
              opened.add(output.encryptingOutputFile().location());
              return factory.newEqualityDeleteWriter(output, spec, partition);
            });
    List<DeleteFile> written = new ArrayList<>();
    try {
      for (String location : deletes.files()) {
        long[] positions = deletes.positions(location);
        try (CloseableIterable<Record> rows =
            Parquet.read(table.io().newInputFile(location))
                .project(readSchema)
                .createReaderFunc(
                    fileSchema -> GenericParquetReaders.buildReader(readSchema, fileSchema))
                .build()) {
          for (Record row : rows) {
            long position = (Long) row.getField(MetadataColumns.ROW_POSITION.name());
            if (Arrays.binarySearch(positions, position) < 0) {
              continue;
            }
            GenericRecord full = GenericRecord.create(schema);
            GenericRecord key = GenericRecord.create(keySchema);
            for (Types.NestedField field : keySchema.columns()) {
              Object value = row.getField(field.name());
              full.setField(field.name(), value);
              key.setField(field.name(), value);
            }
            deleteFiles.delete(full, key);
          }
        } catch (org.apache.iceberg.exceptions.NotFoundException e) {
          throw new IOException(
              "data file "
                  + location
                  + " was replaced by another writer and is gone, so the keys of the rows this"
                  + " checkpoint deletes from it cannot be read back",
              e);
        }
      }
      deleteFiles.close(written);
    } catch (IOException | RuntimeException e) {
      // None of them was handed on: every file opened goes, whether it closed or not.
      try {
        deleteFiles.close(written);
      } catch (IOException | RuntimeException closing) {
        e.addSuppressed(closing);
      }
      for (String location : opened) {
        try {
          table.io().deleteFile(location);
        } catch (RuntimeException removing) {
          e.addSuppressed(removing);
        }
      }
      throw e;
    }
    return written;
  }
}
