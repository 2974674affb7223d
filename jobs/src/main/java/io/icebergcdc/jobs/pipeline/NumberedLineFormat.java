package io.icebergcdc.jobs.pipeline;

import java.io.IOException;
import java.io.InputStream;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.tuple.Tuple3;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.file.src.FileSourceSplit;
import org.apache.flink.connector.file.src.compression.StandardDeCompressors;
import org.apache.flink.connector.file.src.enumerate.FileEnumerator;
import org.apache.flink.connector.file.src.reader.StreamFormat;
import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.core.fs.FileStatus;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;

/**
 * The lines of a text file in splits of up to {@value #SPLIT_BYTES} bytes, read by as many readers
 * as the job has, each line as {@code (split start, number, bytes)}: the byte at which its split's
 * first line starts, its number from 1 within the split, and its bytes, undecoded (the parser
 * chained to each reader reads them as UTF-8). The number within the file is the lines before the
 * split start plus that number; the parsers count those lines only when a message names a line
 * ({@link FileLineNumbers}), so that no reader reads the file before its split.
 *
 * <p>A line ends at {@code \n}; a {@code \r} before it is dropped. A line belongs to the split in
 * which it starts: a reader skips the end of a line that started before its split, and reads its
 * own last line past its split's end. A compressed file (by its suffix, which Flink's file source
 * decompresses) is one split. On restore, Flink's file source reads each unfinished split again
 * from its start and skips the records read before the checkpoint.
 */
final class NumberedLineFormat implements StreamFormat<Tuple3<Long, Long, byte[]>> {

  private static final long serialVersionUID = 1L;
  private static final int BUFFER = 1 << 16;

  private static final VarHandle LONGS =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

  private static final long NEWLINES = 0x0A0A0A0A0A0A0A0AL;
  private static final long ONES = 0x0101010101010101L;
  private static final long HIGHS = 0x8080808080808080L;

  /** The bytes of a split: enough that opening a split costs nothing, few enough to balance. */
  static final long SPLIT_BYTES = 64L << 20;

  /** The fewest bytes of a split of a file that is cut for its readers' sake. */
  static final long MIN_SPLIT_BYTES = 1L << 20;

  @Override
  public Reader<Tuple3<Long, Long, byte[]>> createReader(
      Configuration config, FSDataInputStream stream, long fileLen, long splitEnd)
      throws IOException {
    long start = stream.getPos();
    if (start > 0) {
      // Whether the split starts a line is known from the byte before it.
      stream.seek(start - 1);
    }
    return new LineReader(stream, start, splitEnd);
  }

  @Override
  public Reader<Tuple3<Long, Long, byte[]>> restoreReader(
      Configuration config,
      FSDataInputStream stream,
      long restoredOffset,
      long fileLen,
      long splitEnd) {
    // The reader never gives an offset to restore at (Flink restores at the split's start).
    throw new IllegalStateException("a line reader is restored from its split's start");
  }

  @Override
  public boolean isSplittable() {
    return true;
  }

  @Override
  public TypeInformation<Tuple3<Long, Long, byte[]>> getProducedType() {
    return Types.TUPLE(Types.LONG, Types.LONG, Types.PRIMITIVE_ARRAY(Types.BYTE));
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

  /**
   * Cuts each file into splits of at most {@code maxSplitBytes}, and into at least as many as there
   * are readers while each still has {@code minSplitBytes}; a compressed file is one split.
   */
  static final class Splits implements FileEnumerator {

    private final long minSplitBytes;
    private final long maxSplitBytes;

    Splits(long minSplitBytes, long maxSplitBytes) {
      this.minSplitBytes = minSplitBytes;
      this.maxSplitBytes = maxSplitBytes;
    }

    /** Splits of {@link #MIN_SPLIT_BYTES} to {@link #SPLIT_BYTES}. */
    static FileEnumerator.Provider provider() {
      return () -> new Splits(MIN_SPLIT_BYTES, SPLIT_BYTES);
    }

    @Override
    public Collection<FileSourceSplit> enumerateSplits(Path[] paths, int minDesiredSplits)
        throws IOException {
      List<FileSourceSplit> splits = new ArrayList<>();
      for (Path path : paths) {
        FileSystem fs = path.getFileSystem();
        FileStatus status = fs.getFileStatus(path);
        long length = status.getLen();
        boolean compressed =
            StandardDeCompressors.getDecompressorForFileName(path.getPath()) != null;
        long perReader =
            (length + Math.max(minDesiredSplits, 1) - 1) / Math.max(minDesiredSplits, 1);
        long size =
            compressed
                ? Math.max(length, 1)
                : Math.min(maxSplitBytes, Math.max(minSplitBytes, perReader));
        long offset = 0;
        do {
          splits.add(
              new FileSourceSplit(
                  String.valueOf(splits.size()),
                  path,
                  offset,
                  Math.min(size, length - offset),
                  status.getModificationTime(),
                  length));
          offset += size;
        } while (offset < length);
      }
      return splits;
    }
  }

  /**
   * Splits a stream at {@code \n} through a buffer of its own, from the first line that starts at
   * or after {@code start} to the last that starts before {@code end}. The stream is at {@code
   * start}, or at the byte before it if {@code start > 0}.
   */
  static final class LineReader implements StreamFormat.Reader<Tuple3<Long, Long, byte[]>> {

    private final InputStream in;
    private final byte[] buffer = new byte[BUFFER];
    private final long end;
    private int position;
    private int limit;
    private boolean ended;

    /** The offset in the file of {@code buffer[0]}. */
    private long bufferStart;

    /** The offset of the split's first line; -1 until the reader has found it. */
    private long splitStart;

    private long number;

    LineReader(InputStream in, long start, long end) {
      this.in = in;
      this.end = end;
      this.bufferStart = start == 0 ? 0 : start - 1;
      this.splitStart = start == 0 ? 0 : -1;
    }

    @Override
    public Tuple3<Long, Long, byte[]> read() throws IOException {
      if (splitStart < 0) {
        if (!skipPastNewline()) {
          return null;
        }
        splitStart = bufferStart + position;
      }
      if (bufferStart + position >= end) {
        return null;
      }
      byte[] line = null;
      while (true) {
        int newline = indexOfNewline(buffer, position, limit);
        if (newline >= 0) {
          line = append(line, position, newline);
          position = newline + 1;
          return numbered(line);
        }
        if (position < limit) {
          line = append(line, position, limit);
        }
        if (!refill()) {
          return line == null ? null : numbered(line);
        }
      }
    }

    /** Moves past the next {@code \n}; false if the stream ends first. */
    private boolean skipPastNewline() throws IOException {
      while (true) {
        int newline = indexOfNewline(buffer, position, limit);
        if (newline >= 0) {
          position = newline + 1;
          return true;
        }
        if (!refill()) {
          return false;
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

    private Tuple3<Long, Long, byte[]> numbered(byte[] line) {
      int length = line.length;
      if (length > 0 && line[length - 1] == '\r') {
        line = Arrays.copyOf(line, length - 1);
      }
      return Tuple3.of(splitStart, ++number, line);
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
