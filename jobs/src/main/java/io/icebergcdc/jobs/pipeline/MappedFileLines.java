package io.icebergcdc.jobs.pipeline;

import io.icebergcdc.cdc.debezium.DebeziumJsonParseFunction;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;

/**
 * The lines of a local file, read by their place in it from the file mapped into memory: each
 * parser copies only the lines handed to it, from the operating system's page cache, where sending
 * a line's bytes from the reader would copy them twice more and through Flink's network stack.
 *
 * <p>The file is mapped in windows of {@code window} bytes, each reaching {@code overlap} bytes
 * into the next, so that a line that starts in a window and is no longer than the overlap lies in
 * it; a longer line is read from the file. Windows are mapped when first needed.
 */
final class MappedFileLines implements DebeziumJsonParseFunction.LineBytes {

  private static final long serialVersionUID = 1L;

  private final String path;
  private final long window;
  private final long overlap;

  private transient FileChannel channel;
  private transient long size;
  private transient MappedByteBuffer[] windows;

  /** Windows of 1 GB, reaching 64 MB into the next. */
  MappedFileLines(String path) {
    this(path, 1L << 30, 64L << 20);
  }

  /** Windows of {@code window} bytes reaching {@code overlap} into the next, for tests. */
  MappedFileLines(String path, long window, long overlap) {
    this.path = path;
    this.window = window;
    this.overlap = overlap;
  }

  @Override
  public byte[] read(long offset, int length) throws IOException {
    if (channel == null) {
      channel = FileChannel.open(Paths.get(path), StandardOpenOption.READ);
      size = channel.size();
      windows = new MappedByteBuffer[(int) ((size + window - 1) / window)];
    }
    if (offset < 0 || offset + length > size) {
      throw new EOFException(
          path + " has " + size + " bytes, no line of " + length + " at byte " + offset);
    }
    byte[] line = new byte[length];
    int index = (int) (offset / window);
    if (length <= overlap) {
      MappedByteBuffer mapped = windows[index];
      long base = index * window;
      if (mapped == null) {
        mapped =
            channel.map(
                FileChannel.MapMode.READ_ONLY, base, Math.min(size - base, window + overlap));
        windows[index] = mapped;
      }
      mapped.get((int) (offset - base), line, 0, length);
      return line;
    }
    ByteBuffer into = ByteBuffer.wrap(line);
    while (into.hasRemaining()) {
      if (channel.read(into, offset + into.position()) < 0) {
        throw new EOFException(path + " ends within the line at byte " + offset);
      }
    }
    return line;
  }

  @Override
  public void close() throws IOException {
    windows = null;
    if (channel != null) {
      channel.close();
      channel = null;
    }
  }
}
