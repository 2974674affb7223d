package io.icebergcdc.jobs.pipeline;

import io.icebergcdc.cdc.debezium.DebeziumJsonParseFunction;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.util.TreeMap;

/**
 * The numbers of lines of a local file's splits, by counting the {@code \n} before a split's start.
 * Asked only for a message about a line; each parser keeps the counts it made, and counts on from
 * the nearest one before, so that its bad lines together cost at most one read of the file.
 */
final class FileLineNumbers implements DebeziumJsonParseFunction.LineNumbers {

  private static final long serialVersionUID = 1L;
  private static final int BUFFER = 1 << 20;

  private final String path;

  /** The count of lines that end before an offset, by offset. */
  private transient TreeMap<Long, Long> linesBefore;

  FileLineNumbers(String path) {
    this.path = path;
  }

  @Override
  public long lineNumber(long splitStart, long number) throws IOException {
    if (linesBefore == null) {
      linesBefore = new TreeMap<>();
      linesBefore.put(0L, 0L);
    }
    Map.Entry<Long, Long> known = linesBefore.floorEntry(splitStart);
    long lines = known.getValue();
    try (FileChannel file = FileChannel.open(Paths.get(path), StandardOpenOption.READ)) {
      ByteBuffer buffer = ByteBuffer.allocate(BUFFER);
      long offset = known.getKey();
      while (offset < splitStart) {
        buffer.clear().limit((int) Math.min(BUFFER, splitStart - offset));
        int read = file.read(buffer, offset);
        if (read < 0) {
          throw new IOException(path + " ends before byte " + splitStart);
        }
        byte[] bytes = buffer.array();
        for (int i = 0; i < read; i++) {
          if (bytes[i] == '\n') {
            lines++;
          }
        }
        offset += read;
      }
    }
    linesBefore.put(splitStart, lines);
    return lines + number;
  }
}
