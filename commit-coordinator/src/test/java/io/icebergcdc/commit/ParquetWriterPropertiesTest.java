package io.icebergcdc.commit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.Map;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.GenericFileWriterFactory;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.DataWriter;
import org.apache.iceberg.io.OutputFileFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ParquetWriterPropertiesTest {

  @TempDir Path warehouse;

  private static final Map<String, String> GZIP_6 =
      Map.of("write.parquet.compression-codec", "gzip", "write.parquet.compression-level", "6");

  @Test
  void aGzipLevelIsGivenToHadoopByName() {
    assertThat(ParquetWriterProperties.of(GZIP_6))
        .containsEntry("zlib.compress.level", "SIX")
        .doesNotContainKey("write.parquet.compression-level");
    Map<String, String> zstd =
        Map.of("write.parquet.compression-codec", "zstd", "write.parquet.compression-level", "6");
    assertThat(ParquetWriterProperties.of(zstd)).isEqualTo(zstd);
    Map<String, String> gzipWithoutLevel = Map.of("write.parquet.compression-codec", "gzip");
    assertThat(ParquetWriterProperties.of(gzipWithoutLevel)).isEqualTo(gzipWithoutLevel);
  }

  /** Iceberg's own writer fails on a gzip level; through the translation it writes the file. */
  @Test
  void aGzipTableWithALevelIsWritten() throws Exception {
    Table table = TestTables.create(warehouse);
    assertThatThrownBy(() -> write(table, GZIP_6)).hasStackTraceContaining("CompressionLevel.6");

    DataFile file = write(table, ParquetWriterProperties.of(GZIP_6));
    table.newAppend().appendFile(file).commit();
    try (CloseableIterable<Record> rows = IcebergGenerics.read(table).build()) {
      assertThat(rows).extracting(r -> r.getField("name")).containsExactly("zipped");
    }
  }

  private static DataFile write(Table table, Map<String, String> properties) throws Exception {
    GenericFileWriterFactory factory =
        new GenericFileWriterFactory.Builder(table)
            .dataFileFormat(FileFormat.PARQUET)
            .dataSchema(table.schema())
            .writerProperties(properties)
            .build();
    OutputFileFactory files =
        OutputFileFactory.builderFor(table, 1, 1).format(FileFormat.PARQUET).build();
    DataWriter<Record> writer =
        factory.newDataWriter(files.newOutputFile(), PartitionSpec.unpartitioned(), null);
    GenericRecord record = GenericRecord.create(table.schema());
    record.setField("id", 1L);
    record.setField("name", "zipped");
    try (writer) {
      writer.write(record);
    }
    return writer.toDataFile();
  }
}
