package io.icebergcdc.sink;

import java.io.IOException;
import org.apache.iceberg.io.InputFile;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.metadata.ParquetMetadata;
import org.apache.parquet.io.DelegatingSeekableInputStream;
import org.apache.parquet.io.SeekableInputStream;

/**
 * Reads the footer of a Parquet file through an Iceberg {@link InputFile}, so that any file IO the
 * table uses (S3FileIO as well as HadoopFileIO) serves it. Iceberg's own adapter is not public.
 */
final class ParquetFooter {

  private ParquetFooter() {}

  static ParquetMetadata read(InputFile file) throws IOException {
    try (ParquetFileReader reader = ParquetFileReader.open(new Input(file))) {
      return reader.getFooter();
    }
  }

  private record Input(InputFile file) implements org.apache.parquet.io.InputFile {

    @Override
    public long getLength() {
      return file.getLength();
    }

    @Override
    public SeekableInputStream newStream() {
      org.apache.iceberg.io.SeekableInputStream stream = file.newStream();
      return new DelegatingSeekableInputStream(stream) {
        @Override
        public long getPos() throws IOException {
          return stream.getPos();
        }

        @Override
        public void seek(long position) throws IOException {
          stream.seek(position);
        }
      };
    }
  }
}
