package io.icebergcdc.commit.internal;

import io.icebergcdc.commit.LiveFiles;
import io.icebergcdc.commit.ParquetWriterProperties;
import io.icebergcdc.commit.PositionDeletes;
import java.io.IOException;
import java.util.List;
import java.util.function.Function;
import java.util.function.Predicate;
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
import org.apache.iceberg.deletes.PositionDeleteIndex;
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
      // A file's deletion vector holds all its position deletes, whoever wrote them.
      Function<CharSequence, PositionDeleteIndex> previous =
          previousDeletes(table, live, d -> true);
      BaseDVFileWriter writer = new BaseDVFileWriter(files, previous::apply);
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
            .writerProperties(ParquetWriterProperties.of(table.properties()))
            .build();
    // A file's earlier file-scoped deletes are merged into its new file, which replaces them;
    // deletes that span several data files stay.
    FanoutPositionOnlyDeleteWriter<Record> writer =
        new FanoutPositionOnlyDeleteWriter<>(
            factory,
            files,
            table.io(),
            targetSize,
            granularity(table),
            previousDeletes(table, live, ContentFileUtil::isFileScoped));
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
   * The positions that the {@code which} delete files of a data file delete, for a writer to merge
   * into the file's new deletes (and the commit to replace those files); null if it has none.
   */
  private static Function<CharSequence, PositionDeleteIndex> previousDeletes(
      Table table, LiveFiles live, Predicate<DeleteFile> which) {
    BaseDeleteLoader loader = new BaseDeleteLoader(f -> table.io().newInputFile(f.location()));
    return location -> {
      List<DeleteFile> previous =
          live.positionDeletesOf(location.toString()).stream().filter(which).toList();
      return previous.isEmpty() ? null : loader.loadPositionDeletes(previous, location.toString());
    };
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
