package io.icebergcdc.jobs.pipeline;

import java.io.IOException;
import java.io.InputStream;
import java.util.Arrays;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.file.src.reader.SimpleStreamFormat;
import org.apache.flink.connector.file.src.reader.StreamFormat;
import org.apache.flink.core.fs.FSDataInputStream;

/**
 * The lines of a text file as their bytes, with their numbers, from 1, so that a bad record is
 * named by its line. A line ends at {@code \n}; a {@code \r} before it is dropped. The bytes are
 * handed on undecoded: the parsers, in parallel, read them as UTF-8. The file is not split; on
 * restore, Flink's file source reads the file again from its start and skips the records read
 * before the checkpoint, so the numbers stay those of the file.
 */
final class NumberedLineFormat extends SimpleStreamFormat<Tuple2<Long, byte[]>> {

  private static final long serialVersionUID = 1L;
  private static final int BUFFER = 1 << 16;

  @Override
  public StreamFormat.Reader<Tuple2<Long, byte[]>> createReader(
      Configuration config, FSDataInputStream stream) {
    return new LineReader(stream);
  }

  @Override
  public TypeInformation<Tuple2<Long, byte[]>> getProducedType() {
    return Types.TUPLE(Types.LONG, Types.PRIMITIVE_ARRAY(Types.BYTE));
  }

  /** Splits a stream at {@code \n} through a buffer of its own. */
  static final class LineReader implements StreamFormat.Reader<Tuple2<Long, byte[]>> {

    private final InputStream in;
    private final byte[] buffer = new byte[BUFFER];
    private int position;
    private int limit;
    private boolean ended;
    private long number;

    LineReader(InputStream in) {
      this.in = in;
    }

    @Override
    public Tuple2<Long, byte[]> read() throws IOException {
      byte[] line = null;
      while (true) {
        for (int i = position; i < limit; i++) {
          if (buffer[i] == '\n') {
            line = append(line, position, i);
            position = i + 1;
            return numbered(line);
          }
        }
        if (position < limit) {
          line = append(line, position, limit);
        }
        position = 0;
        limit = ended ? -1 : in.read(buffer);
        if (limit < 0) {
          ended = true;
          limit = 0;
          return line == null ? null : numbered(line);
        }
      }
    }

    private Tuple2<Long, byte[]> numbered(byte[] line) {
      int length = line.length;
      if (length > 0 && line[length - 1] == '\r') {
        line = Arrays.copyOf(line, length - 1);
      }
      return Tuple2.of(++number, line);
    }

    private byte[] append(byte[] line, int from, int to) {
      if (line == null) {
        return Arrays.copyOfRange(buffer, from, to);
      }
      byte[] longer = Arrays.copyOf(line, line.length + to - from);
      System.arraycopy(buffer, from, longer, line.length, to - from);
      return longer;
    }

    @Override
    public void close() throws IOException {
      in.close();
    }
  }
}
