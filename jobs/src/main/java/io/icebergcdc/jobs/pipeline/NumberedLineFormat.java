package io.icebergcdc.jobs.pipeline;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.file.src.reader.SimpleStreamFormat;
import org.apache.flink.connector.file.src.reader.StreamFormat;
import org.apache.flink.core.fs.FSDataInputStream;

/**
 * The lines of a UTF-8 text file with their numbers, from 1, so that a bad record is named by its
 * line. The file is not split; on restore, Flink's file source reads the file again from its start
 * and skips the records read before the checkpoint, so the numbers stay those of the file.
 */
final class NumberedLineFormat extends SimpleStreamFormat<Tuple2<Long, String>> {

  private static final long serialVersionUID = 1L;

  @Override
  public StreamFormat.Reader<Tuple2<Long, String>> createReader(
      Configuration config, FSDataInputStream stream) {
    BufferedReader reader =
        new BufferedReader(new InputStreamReader(stream, StandardCharsets.UTF_8));
    return new StreamFormat.Reader<>() {
      private long number;

      @Override
      public Tuple2<Long, String> read() throws IOException {
        String line = reader.readLine();
        return line == null ? null : Tuple2.of(++number, line);
      }

      @Override
      public void close() throws IOException {
        reader.close();
      }
    };
  }

  @Override
  public TypeInformation<Tuple2<Long, String>> getProducedType() {
    return Types.TUPLE(Types.LONG, Types.STRING);
  }
}
