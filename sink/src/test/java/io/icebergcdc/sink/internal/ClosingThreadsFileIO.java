package io.icebergcdc.sink.internal;

import java.io.IOException;
import java.util.Map;
import java.util.concurrent.BrokenBarrierException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.iceberg.hadoop.HadoopFileIO;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.OutputFile;
import org.apache.iceberg.io.PositionOutputStream;

/**
 * A file IO that records which thread closed each file it created under a {@code data/} directory
 * (data and delete files), and fails the closing of some of them when asked, after the file is
 * written (as an upload would fail). Test-only; configured as the catalog's {@code io-impl}. Its
 * state is static: the tests that use it run one at a time, as this build's Surefire runs them.
 */
public class ClosingThreadsFileIO extends HadoopFileIO {

  private static final Map<String, String> CLOSED_BY = new ConcurrentHashMap<>();
  private static volatile String failClosing;
  private static volatile int failNth;
  private static final java.util.concurrent.atomic.AtomicInteger CLOSINGS =
      new java.util.concurrent.atomic.AtomicInteger();
  private static volatile CyclicBarrier meetOnClose;

  /** Forgets the files closed, fails no closing, and has no closing wait. */
  static void reset() {
    CLOSED_BY.clear();
    failClosing = null;
    failNth = 0;
    CLOSINGS.set(0);
    meetOnClose = null;
  }

  /**
   * Has the closing of each data file from now on wait until {@code parties} closings wait (failing
   * after ten seconds): a test that they run at once. 0 for no wait.
   */
  static void meetOnClose(int parties) {
    meetOnClose = parties == 0 ? null : new CyclicBarrier(parties);
  }

  /** Fails the closing of every data file whose location holds {@code part}. */
  static void failClosing(String part) {
    failClosing(part, 0);
  }

  /**
   * Fails the closings of the files whose location holds {@code part}, from the {@code nth} from
   * now on (after the file is written); every one for 0.
   */
  static void failClosing(String part, int nth) {
    CLOSINGS.set(0);
    failNth = nth;
    failClosing = part;
  }

  /** The name of the thread that closed the file at {@code location}, or null. */
  static String closedBy(String location) {
    return CLOSED_BY.get(location);
  }

  @Override
  public OutputFile newOutputFile(String path) {
    OutputFile file = super.newOutputFile(path);
    return path.contains("/data/") ? new Recording(file) : file;
  }

  private static final class Recording implements OutputFile {
    private final OutputFile file;

    Recording(OutputFile file) {
      this.file = file;
    }

    @Override
    public PositionOutputStream create() {
      return new Stream(file.create(), file.location());
    }

    @Override
    public PositionOutputStream createOrOverwrite() {
      return new Stream(file.createOrOverwrite(), file.location());
    }

    @Override
    public String location() {
      return file.location();
    }

    @Override
    public InputFile toInputFile() {
      return file.toInputFile();
    }
  }

  private static final class Stream extends PositionOutputStream {
    private final PositionOutputStream out;
    private final String location;

    Stream(PositionOutputStream out, String location) {
      this.out = out;
      this.location = location;
    }

    @Override
    public long getPos() throws IOException {
      return out.getPos();
    }

    @Override
    public void write(int b) throws IOException {
      out.write(b);
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
      out.write(b, off, len);
    }

    @Override
    public void flush() throws IOException {
      out.flush();
    }

    @Override
    public void close() throws IOException {
      CLOSED_BY.put(location, Thread.currentThread().getName());
      CyclicBarrier meeting = meetOnClose;
      if (meeting != null) {
        try {
          meeting.await(10, TimeUnit.SECONDS);
        } catch (InterruptedException | BrokenBarrierException | TimeoutException e) {
          throw new IOException("closed alone, not with the others: " + location, e);
        }
      }
      out.close();
      String failing = failClosing;
      if (failing != null
          && location.contains(failing)
          && (failNth == 0 || CLOSINGS.incrementAndGet() >= failNth)) {
        throw new IOException("injected failure closing " + location);
      }
    }
  }
}
