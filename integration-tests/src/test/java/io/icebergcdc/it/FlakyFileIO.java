package io.icebergcdc.it;

import java.io.UncheckedIOException;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.iceberg.hadoop.HadoopFileIO;
import org.apache.iceberg.io.OutputFile;

/**
 * A file IO whose creation of data and delete files fails now and then, to inject failures into the
 * writers exactly where they do their work. Test-only; configured as the catalog's {@code io-impl}.
 */
public class FlakyFileIO extends HadoopFileIO {

  private static final AtomicInteger CREATED = new AtomicInteger();
  private static volatile int failEvery = Integer.MAX_VALUE;
  private static final AtomicInteger FAILURES_LEFT = new AtomicInteger();
  static final AtomicInteger FAILURES = new AtomicInteger();

  /** Fails every {@code n}-th data or delete file created, at most {@code times} times. */
  static void failEvery(int n, int times) {
    CREATED.set(0);
    FAILURES.set(0);
    failEvery = n;
    FAILURES_LEFT.set(times);
  }

  @Override
  public OutputFile newOutputFile(String path) {
    if (path.contains("/data/")
        && CREATED.incrementAndGet() % failEvery == 0
        && FAILURES_LEFT.getAndDecrement() > 0) {
      FAILURES.incrementAndGet();
      throw new UncheckedIOException(new java.io.IOException("injected failure creating " + path));
    }
    return super.newOutputFile(path);
  }
}
