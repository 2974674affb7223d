package io.icebergcdc.jobs.pipeline;

import java.io.IOException;
import java.io.InputStream;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Arrays;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.tuple.Tuple4;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.file.src.enumerate.FileEnumerator;
import org.apache.flink.connector.file.src.enumerate.NonSplittingRecursiveEnumerator;
import org.apache.flink.connector.file.src.reader.SimpleStreamFormat;
import org.apache.flink.connector.file.src.reader.StreamFormat;
import org.apache.flink.core.fs.FSDataInputStream;

/**
 * The lines of a text file, each as {@code (number, offset, length, bytes)}: its number from 1, so
 * that a bad record is named by its line, where it starts in the file and how many bytes it has,
 * and its bytes, undecoded; or, by reference, no bytes ({@link
 * io.icebergcdc.cdc.debezium.DebeziumJsonParseFunction#hasBytes}): the parsers, in parallel, read
 * the line from the file themselves ({@link MappedFileLines}), so that only the line's place
 * travels from the one reader to them. A line ends at {@code \n}; a {@code \r} before it is
 * dropped.
 *
 * <p>The file is not split: one reader hands out the lines in the file's order, so that a
 * checkpoint holds a prefix of the file, and a key's changes reach the writers in the file's order
 * across checkpoints. On restore, Flink's file source reads the file again from its start and skips
 * the records read before the checkpoint, so the numbers stay those of the file.
 */
final class NumberedLineFormat extends SimpleStreamFormat<Tuple4<Long, Long, Integer, byte[]>> {

  private static final long serialVersionUID = 1L;
  private static final int BUFFER = 1 << 16;
  private static final byte[] BY_REFERENCE = new byte[0];

  private static final VarHandle LONGS =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

  private static final long NEWLINES = 0x0A0A0A0A0A0A0A0AL;
  private static final long ONES = 0x0101010101010101L;
  private static final long HIGHS = 0x8080808080808080L;

  private final boolean byReference;

  /**
   * @param byReference whether the lines go without their bytes, for parsers that read them from
   *     the file; false for a file the source decompresses, whose offsets are not the file's
   */
  NumberedLineFormat(boolean byReference) {
    this.byReference = byReference;
  }

  @Override
  public StreamFormat.Reader<Tuple4<Long, Long, Integer, byte[]>> createReader(
      Configuration config, FSDataInputStream stream) {
    return new LineReader(stream, byReference);
  }

  @Override
  public TypeInformation<Tuple4<Long, Long, Integer, byte[]>> getProducedType() {
    return Types.TUPLE(Types.LONG, Types.LONG, Types.INT, Types.PRIMITIVE_ARRAY(Types.BYTE));
  }

  /**
   * Enumerates the given file whatever its name: Flink's default filter leaves out files whose
   * names start with {@code .} or {@code _}, which would end the job without reading the file.
   */
  static FileEnumerator.Provider everyFile() {
    return () -> new NonSplittingRecursiveEnumerator(path -> true);
  }

  /**
   * The index of the first {@code \n} in {@code bytes[from, to)}, or -1: eight bytes at a time,
   * each word's bytes that equal {@code \n} found by the borrow of subtracting one from each byte
   * of their difference, the lowest of them exactly (a false one can only follow a true one).
   */
  static int indexOfNewline(byte[] bytes, int from, int to) {
    int i = from;
    for (; i + Long.BYTES <= to; i += Long.BYTES) {
      long difference = (long) LONGS.get(bytes, i) ^ NEWLINES;
      long found = (difference - ONES) & ~difference & HIGHS;
      if (found != 0) {
        return i + (Long.numberOfTrailingZeros(found) >>> 3);
      }
    }
    for (; i < to; i++) {
      if (bytes[i] == '\n') {
        return i;
      }
    }
    return -1;
  }

  /** Splits a stream at {@code \n} through a buffer of its own. */
  static final class LineReader
      implements StreamFormat.Reader<Tuple4<Long, Long, Integer, byte[]>> {

    private final InputStream in;
    private final boolean byReference;
    private final byte[] buffer = new byte[BUFFER];
    private int position;
    private int limit;
    private boolean ended;

    /** The offset in the stream of {@code buffer[0]}. */
    private long bufferStart;

    private long number;

    /** The most bytes a line may have: the longest array a JVM allocates. */
    private static final int MAX_LINE = Integer.MAX_VALUE - 8;

    LineReader(InputStream in, boolean byReference) {
      this.in = in;
      this.byReference = byReference;
    }

    @Override
    public Tuple4<Long, Long, Integer, byte[]> read() throws IOException {
      long start = bufferStart + position;
      // By reference, a line's bytes are not kept: only its last byte is, for a \r before \n.
      byte[] line = null;
      // How many bytes of line hold the line so far: it grows by doubling, not chunk by chunk,
      // so that a line of many buffers is copied a few times, not once per buffer.
      int held = 0;
      byte last = 0;
      while (true) {
        int newline = indexOfNewline(buffer, position, limit);
        int to = newline >= 0 ? newline : limit;
        if (to > position) {
          last = buffer[to - 1];
          if (!byReference) {
            line = append(line, held, position, to);
            held += to - position;
          }
        }
        if (newline >= 0) {
          position = newline + 1;
          return numbered(start, bufferStart + newline, last, line);
        }
        long end = bufferStart + limit;
        if (!refill()) {
          return end == start ? null : numbered(start, end, last, line);
        }
      }
    }

    /** Reads the next bytes into the buffer from its start; false at the stream's end. */
    private boolean refill() throws IOException {
      bufferStart += limit;
      position = 0;
      limit = ended ? -1 : in.read(buffer);
      if (limit < 0) {
        ended = true;
        limit = 0;
        return false;
      }
      return true;
    }

    private Tuple4<Long, Long, Integer, byte[]> numbered(
        long start, long end, byte last, byte[] line) throws IOException {
      long length = end - start;
      if (length > 0 && last == '\r') {
        length--;
      }
      if (length > MAX_LINE) {
        throw new IOException(
            "line " + (number + 1) + " has " + length + " bytes, more than a line may have");
      }
      byte[] bytes =
          byReference || length == 0
              ? BY_REFERENCE
              : line.length == length ? line : Arrays.copyOf(line, (int) length);
      return Tuple4.of(++number, start, (int) length, bytes);
    }

    /**
     * The line's first {@code held} bytes followed by the buffer's {@code [from, to)}: in {@code
     * line} where it has room, else in an array twice as long (at most the longest a line may be).
     */
    private byte[] append(byte[] line, int held, int from, int to) throws IOException {
      if (line == null) {
        return Arrays.copyOfRange(buffer, from, to);
      }
      long needed = (long) held + to - from;
      if (needed > MAX_LINE) {
        throw new IOException(
            "line "
                + (number + 1)
                + " has more than "
                + MAX_LINE
                + " bytes, more than a line may have");
      }
      if (needed > line.length) {
        line = Arrays.copyOf(line, (int) Math.min(MAX_LINE, Math.max(needed, 2L * line.length)));
      }
      System.arraycopy(buffer, from, line, held, to - from);
      return line;
    }

    @Override
    public void close() throws IOException {
      in.close();
    }
  }
}
