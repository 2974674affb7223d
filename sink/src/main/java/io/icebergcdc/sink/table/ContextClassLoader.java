package io.icebergcdc.sink.table;

import java.util.function.Supplier;

/**
 * Runs planning work with this jar's class loader as the thread's context class loader. Iceberg
 * finds catalog, file IO and HTTP client classes through it, and Flink's SQL client leaves it at
 * its own loader while it creates a catalog or plans a statement on a catalog's table, which does
 * not see a jar given with {@code -j}.
 */
final class ContextClassLoader {

  private ContextClassLoader() {}

  static <T> T ofThisJar(Supplier<T> work) {
    Thread thread = Thread.currentThread();
    ClassLoader previous = thread.getContextClassLoader();
    thread.setContextClassLoader(ContextClassLoader.class.getClassLoader());
    try {
      return work.get();
    } finally {
      thread.setContextClassLoader(previous);
    }
  }
}
