package io.icebergcdc.commit.internal;

import io.icebergcdc.commit.PositionDeletes;
import java.io.IOException;
import java.util.List;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.TableUtil;
import org.apache.iceberg.data.BaseDeleteLoader;
import org.apache.iceberg.data.GenericFileWriterFactory;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.deletes.BaseDVFileWriter;
import org.apache.iceberg.deletes.DeleteGranularity;
import org.apache.iceberg.deletes.PositionDelete;
import org.apache.iceberg.io.DeleteWriteResult;
import org.apache.iceberg.io.FanoutPositionOnlyDeleteWriter;
import org.apache.iceberg.io.OutputFileFactory;
import org.apache.iceberg.util.ContentFileUtil;
import org.apache.iceberg.util.PropertyUtil;

/**
 * Writes a checkpoint's position deletes of live data files, in the committer, so that every data
 * file gets its deletes from one place: for format version 3 one deletion vector per data file,
 * merged with the deletion vector (or position delete files) the file already has, which the commit
 * then replaces; for format version 2 position delete files, one per data file by default (merged
 * with the file's earlier one, which the commit then replaces) or per partition where the table's
 * {@code write.delete.granularity} asks for it.
 */
final class PositionDeleteFileWriter {

  private PositionDeleteFileWriter() {}

  /**
   * @param deletes positions in data files that are all live in {@code live}
   * @param operationId a name that makes this attempt's file names unique
   */
  static DeleteWriteResult write(
      Table table, LiveFiles live, PositionDeletes deletes, long taskId, String operationId)
      throws IOException {
    boolean deletionVectors = TableUtil.formatVersion(table) >= 3;
    OutputFileFactory files =
        OutputFileFactory.builderFor(table, 0, taskId)
            .format(deletionVectors ? FileFormat.PUFFIN : FileFormat.PARQUET)
            .operationId(operationId)
            .build();
    if (deletionVectors) {
      BaseDeleteLoader loader = new BaseDeleteLoader(f -> table.io().newInputFile(f.location()));
      BaseDVFileWriter writer =
          new BaseDVFileWriter(
              files,
              location -> {
                List<org.apache.iceberg.DeleteFile> existing = live.positionDeletesOf(location);
                return existing.isEmpty() ? null : loader.loadPositionDeletes(existing, location);
              });
      try (writer) {
        for (String location : deletes.files()) {
          DataFile file = live.dataFile(location);
          PartitionSpec spec = table.specs().get(file.specId());
          for (long position : deletes.positions(location)) {
            writer.delete(location, position, spec, file.partition());
          }
        }
      }
      return writer.result();
    }

    long targetSize =
        PropertyUtil.propertyAsLong(
            table.properties(),
            TableProperties.DELETE_TARGET_FILE_SIZE_BYTES,
            TableProperties.DELETE_TARGET_FILE_SIZE_BYTES_DEFAULT);
    GenericFileWriterFactory factory =
        new GenericFileWriterFactory.Builder(table)
            .deleteFileFormat(FileFormat.PARQUET)
            .writerProperties(table.properties())
            .build();
    BaseDeleteLoader loader = new BaseDeleteLoader(f -> table.io().newInputFile(f.location()));
    FanoutPositionOnlyDeleteWriter<Record> writer =
        new FanoutPositionOnlyDeleteWriter<>(
            factory,
            files,
            table.io(),
            targetSize,
            granularity(table),
            location -> {
              // A file's earlier file-scoped deletes are merged into its new file, which replaces
              // them; deletes that span several data files stay.
              List<DeleteFile> previous =
                  live.positionDeletesOf(location.toString()).stream()
                      .filter(ContentFileUtil::isFileScoped)
                      .toList();
              return previous.isEmpty()
                  ? null
                  : loader.loadPositionDeletes(previous, location.toString());
            });
    PositionDelete<Record> delete = PositionDelete.create();
    try (writer) {
      for (String location : deletes.files()) {
        DataFile file = live.dataFile(location);
        PartitionSpec spec = table.specs().get(file.specId());
        for (long position : deletes.positions(location)) {
          writer.write(delete.set(location, position), spec, file.partition());
        }
      }
    }
    return writer.result();
  }

  /**
   * The table's {@code write.delete.granularity} where set; otherwise file, as Spark writes: a
   * delete file per data file applies to that file only, and replaces its earlier one, where a
   * delete file per partition applies, for readers, to every older data file of the partition and
   * stays in the table as long as any of them does.
   */
  static DeleteGranularity granularity(Table table) {
    String value = table.properties().get(TableProperties.DELETE_GRANULARITY);
    return value == null ? DeleteGranularity.FILE : DeleteGranularity.fromString(value);
  }
}
