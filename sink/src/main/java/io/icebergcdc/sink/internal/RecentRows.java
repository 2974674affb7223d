package io.icebergcdc.sink.internal;

import io.icebergcdc.cdc.typeutils.ChunkSizes;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import org.apache.flink.core.memory.MemorySegment;
import org.apache.flink.core.memory.MemorySegmentFactory;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.binary.BinaryRowData;
import org.apache.flink.table.runtime.typeutils.RowDataSerializer;
import org.apache.flink.table.types.logical.RowType;

/**
 * The rows a writer wrote to its most recent data files, in Flink's binary row format, up to a
 * number of bytes: compacting such a file copies its live rows from here instead of decoding the
 * whole file again from Parquet.
 *
 * <p>Under steady updates, most rows of a file are deleted within a checkpoint or two of its
 * writing, and compaction then reads the file to move its few live rows; that read decodes every
 * row, deleted or not, and cost about as much as writing the rows in the first place. The rows held
 * here are exactly those written, position by position; a file is either held whole or not at all.
 * When the bytes pass the limit, the files written first are forgotten first.
 *
 * <p>The bytes are bounded by a {@link Budget}, which the tables of a writer of several share: the
 * files written first, of whichever table, are forgotten first, so that the writer holds {@code
 * sink.compaction.cache-size} in all, not that much for each of its tables.
 *
 * <p>Not thread-safe: Flink's task thread only, with every other holder of its budget.
 */
final class RecentRows {

  private final Budget budget;
  private final int arity;
  private final RowDataSerializer serializer;

  /** Files by their location as the index keeps it, in order of their first row. */
  private final Map<String, FileRows> files = new LinkedHashMap<>();

  private long bytes;

  /** Rows held within a budget of their own of {@code maxBytes}; none for 0. */
  RecentRows(RowType rowType, long maxBytes) {
    this(rowType, new Budget(maxBytes));
  }

  /** Rows held within {@code budget}, which other holders may share. */
  RecentRows(RowType rowType, Budget budget) {
    this.budget = budget;
    this.arity = rowType.getFieldCount();
    this.serializer = new RowDataSerializer(rowType);
  }

  /**
   * The bytes that the recent rows of one writer hold together, of one table or of several: when
   * they pass it, the files first held, of whichever holder, are forgotten first. Not thread-safe:
   * Flink's task thread only.
   */
  static final class Budget {

    private long maxBytes;
    private long bytes;

    /** Every file held, in the order it was first held, with its holder. */
    private final LinkedHashMap<FileRows, RecentRows> held = new LinkedHashMap<>();

    Budget(long maxBytes) {
      this.maxBytes = maxBytes;
    }

    /** Grows the budget to {@code maxBytes} if it is smaller: the largest its holders ask. */
    void atLeast(long maxBytes) {
      this.maxBytes = Math.max(this.maxBytes, maxBytes);
    }

    /** Whether rows are held at all. */
    boolean holds() {
      return maxBytes > 0;
    }

    /** Bytes held by all holders, for tests. */
    long bytes() {
      return bytes;
    }

    private void holding(FileRows rows, RecentRows holder) {
      held.put(rows, holder);
    }

    private void took(long taken, FileRows growing) {
      bytes += taken;
      if (growing.bytes > maxBytes) {
        // A file that outgrows the budget alone goes first, not every other holder's files.
        held.get(growing).forget(growing.file);
      }
      while (bytes > maxBytes && !held.isEmpty()) {
        Map.Entry<FileRows, RecentRows> first = held.entrySet().iterator().next();
        first.getValue().forget(first.getKey().file);
      }
    }

    private void released(FileRows rows) {
      if (held.remove(rows) != null) {
        bytes -= rows.bytes;
      }
    }
  }

  /**
   * Holds {@code row}, written at {@code position} of {@code file}; ignored unless every earlier
   * row of the file is held.
   */
  void add(String file, long position, RowData row) {
    if (!budget.holds()) {
      return;
    }
    FileRows rows = files.get(file);
    if (rows == null) {
      if (position != 0) {
        // Its first rows were forgotten, or written before this writer started.
        return;
      }
      rows = new FileRows(file, arity);
      files.put(file, rows);
      budget.holding(rows, this);
    }
    if (rows.count != position) {
      forget(file);
      return;
    }
    long taken = rows.add(row instanceof BinaryRowData b ? b : serializer.toBinaryRow(row));
    if (taken > 0) {
      bytes += taken;
      budget.took(taken, rows);
    }
  }

  /** The rows of {@code file} in order of position, if all of its {@code rows} are held. */
  Iterable<RowData> rowsOf(String file, long rows) {
    FileRows held = files.get(file);
    return held == null || held.count != rows ? null : held;
  }

  /** The row at {@code position} of {@code file}, if it is held; a new object. */
  RowData row(String file, long position) {
    FileRows held = files.get(file);
    return held == null || position >= held.count ? null : held.row((int) position);
  }

  /** Forgets the rows of {@code file}; an iteration of them under way may go on. */
  void forget(String file) {
    FileRows rows = files.remove(file);
    if (rows != null) {
      bytes -= rows.bytes;
      budget.released(rows);
    }
  }

  /**
   * Forgets the rows of every file: this holder is replaced (the schema changed) or closed, and its
   * budget's other holders may use what it held.
   */
  void forgetAll() {
    for (String file : new ArrayList<>(files.keySet())) {
      forget(file);
    }
  }

  /** Bytes held, for tests. */
  long bytes() {
    return bytes;
  }

  /**
   * The memory a file held takes besides its rows' chunks: its first position arrays (64 longs and
   * 64 ints) and its objects and map entries, about a fifth of its first chunk.
   */
  static final int FILE_BYTES = 1024;

  /** The rows of one file: their bytes in chunks, and where each row starts and ends. */
  private static final class FileRows implements Iterable<RowData> {
    private final String file;
    private final int arity;
    private final List<MemorySegment> chunks = new ArrayList<>();
    private MemorySegment chunk;
    private int used;

    /** Per row, its chunk number (high 32 bits) and its offset in the chunk. */
    private long[] starts = new long[64];

    private int[] sizes = new int[64];
    private int count;
    private long bytes;

    FileRows(String file, int arity) {
      this.file = file;
      this.arity = arity;
    }

    /**
     * Copies {@code row} in; returns the memory that took: a new chunk, larger position arrays, and
     * for the first row the file's own ({@link #FILE_BYTES}).
     */
    long add(BinaryRowData row) {
      int size = row.getSizeInBytes();
      long taken = count == 0 ? FILE_BYTES : 0;
      if (chunk == null || used + size > chunk.size()) {
        // Small files take little memory, large ones few chunks, which G1 does not copy.
        int chunkBytes = ChunkSizes.next(chunk == null ? 0 : chunk.size(), size);
        chunk = MemorySegmentFactory.wrap(new byte[chunkBytes]);
        chunks.add(chunk);
        used = 0;
        taken += chunkBytes;
      }
      if (count == starts.length) {
        starts = Arrays.copyOf(starts, count * 2);
        sizes = Arrays.copyOf(sizes, count * 2);
        taken += count * 12L;
      }
      copy(row, chunk, used);
      starts[count] = ((long) (chunks.size() - 1) << 32) | used;
      sizes[count] = size;
      count++;
      used += size;
      bytes += taken;
      return taken;
    }

    private static void copy(BinaryRowData row, MemorySegment target, int offset) {
      MemorySegment[] segments = row.getSegments();
      int from = row.getOffset();
      int remaining = row.getSizeInBytes();
      for (MemorySegment segment : segments) {
        if (from >= segment.size()) {
          from -= segment.size();
          continue;
        }
        int length = Math.min(remaining, segment.size() - from);
        segment.copyTo(from, target, offset, length);
        offset += length;
        remaining -= length;
        from = 0;
        if (remaining == 0) {
          break;
        }
      }
    }

    BinaryRowData row(int position) {
      BinaryRowData row = new BinaryRowData(arity);
      long start = starts[position];
      row.pointTo(chunks.get((int) (start >>> 32)), (int) start, sizes[position]);
      return row;
    }

    @Override
    public Iterator<RowData> iterator() {
      return new Iterator<>() {
        private final BinaryRowData row = new BinaryRowData(arity);
        private int next;

        @Override
        public boolean hasNext() {
          return next < count;
        }

        @Override
        public RowData next() {
          if (next >= count) {
            throw new NoSuchElementException();
          }
          long start = starts[next];
          row.pointTo(chunks.get((int) (start >>> 32)), (int) start, sizes[next]);
          next++;
          return row;
        }
      };
    }
  }
}
