package io.icebergcdc.sink.table;

import io.icebergcdc.commit.JobClassLoaderRelease;
import java.util.function.Supplier;

/**
 * Runs planning work with this jar's class loader as the thread's context class loader. Iceberg
 * finds catalog, file IO and HTTP client classes through it, and Flink's SQL client leaves it at
 * its own loader while it creates a catalog or plans a statement on a catalog's table, which does
 * not see a jar given with {@code -j}.
 *
 * <p>Where this jar has a class loader of its own (the SQL client's {@code -j}), the JVM shutdown
 * hooks that its libraries register while planning (Hadoop's, those of Iceberg's exiting executors)
 * are removed afterwards: the client closes that class loader before the JVM runs its hooks, which
 * would then fail to load their classes, on every exit of the client.
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
      ClassLoader jar = ContextClassLoader.class.getClassLoader();
      if (jar != ClassLoader.getSystemClassLoader()) {
        JobClassLoaderRelease.removeShutdownHooks(jar);
      }
    }
  }
}
