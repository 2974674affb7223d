package io.icebergcdc.commit;

import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.sql.Driver;
import java.sql.DriverManager;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import org.apache.flink.api.common.functions.RuntimeContext;
import org.apache.flink.util.FlinkUserCodeClassLoader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Lets a job's class loader go when the job ends on a TaskManager of a session cluster.
 *
 * <p>Given with a job ({@code flink run}, the SQL client's {@code -j}), this project's jar and the
 * libraries in it (Iceberg, Hadoop, the AWS SDK, JDBC drivers) are loaded by the job's own class
 * loader, and some of them start things that outlive the job and hold that class loader, and with
 * it every class of the job: Iceberg's shared worker pools and its lock manager's scheduler, the
 * JVM shutdown hooks of Guava's exiting executors and of Hadoop's {@code ShutdownHookManager},
 * Hadoop's {@code StatisticsDataReferenceCleaner} thread, the SDK's idle connection reaper, JDBC
 * drivers in {@link DriverManager}, and the classes that Flink's SQL runtime generated for the
 * job's operators, which it keeps in a cache of its own for minutes. Fifty jobs then fill Flink's
 * default metaspace. Flink runs the hook that {@link #registerFor} registers when it releases the
 * job's class loader; it stops and unregisters what those libraries started, where they were loaded
 * by that class loader. Where Flink's own {@code lib/} holds them instead, they are not the job's,
 * and nothing is touched.
 */
public final class JobClassLoaderRelease {

  private static final Logger LOG = LoggerFactory.getLogger(JobClassLoaderRelease.class);
  private static final String HOOK_NAME = "iceberg-cdc-release";

  private JobClassLoaderRelease() {}

  /**
   * Registers the release of the job's class loader, once per job and TaskManager, where this jar
   * was loaded by it: loaded by Flink's own class loader ({@code lib/}, a MiniCluster, the embedded
   * job jar), the pools and hooks are shared by every job of the JVM and stay.
   */
  public static void registerFor(RuntimeContext context) {
    ClassLoader jobLoader = JobClassLoaderRelease.class.getClassLoader();
    if (jobLoader instanceof FlinkUserCodeClassLoader) {
      context.registerUserCodeClassLoaderReleaseHookIfAbsent(HOOK_NAME, () -> release(jobLoader));
    }
  }

  /**
   * Stops and unregisters what the libraries loaded by {@code loader} left running. Each step
   * stands alone: one that fails is logged and the others still run.
   */
  public static void release(ClassLoader loader) {
    step("Iceberg's thread pools", () -> shutDownStaticExecutors(loader, ICEBERG_POOLS));
    step("Hadoop's file systems", () -> closeHadoopFileSystems(loader));
    step("shutdown hooks", () -> removeShutdownHooks(loader));
    step("JDBC drivers", () -> deregisterDrivers(loader));
    step("threads", () -> stopThreads(loader));
    step("Flink's compiled classes", () -> forgetCompiledClasses(loader));
    step("finalizable objects", JobClassLoaderRelease::finalizeWhenMetaspaceIsTight);
  }

  /**
   * Above this share of the metaspace in use (three quarters), the release runs a full GC and the
   * finalizers it finds: see {@link #finalizeWhenMetaspaceIsTight}.
   */
  private static final double TIGHT_METASPACE = 0.75;

  /**
   * Lets the job's objects that have finalizers go now, while metaspace is more than three quarters
   * full. A finished task (Flink's {@code StreamTask}) and the streams of Iceberg's Hadoop file IO
   * and of zstd-jni have finalizers, and each holds the job's classes: after they become
   * unreachable, one GC finds them, the JVM's finalizer thread runs them, and only a later GC can
   * unload the job's classes. When metaspace runs out, the JVM collects twice in a row before it
   * gives up, without waiting for the finalizer thread in between, so a TaskManager that ran jobs
   * back to back died with {@code OutOfMemoryError: Metaspace} while the finished jobs' class
   * loaders waited for their finalizers (in two of seven runs of ten to fifty SQL jobs here, at the
   * default 256 MB). A full GC and the finalizers here, when the job ends, leave nothing of the job
   * but what the next GC unloads; it costs a pause of the TaskManager's heap, so it is done only
   * when metaspace is tight.
   */
  private static void finalizeWhenMetaspaceIsTight() {
    for (java.lang.management.MemoryPoolMXBean pool :
        java.lang.management.ManagementFactory.getMemoryPoolMXBeans()) {
      if (!pool.getName().equals("Metaspace")) {
        continue;
      }
      java.lang.management.MemoryUsage usage = pool.getUsage();
      if (usage.getMax() > 0 && usage.getUsed() > usage.getMax() * TIGHT_METASPACE) {
        LOG.info(
            "Metaspace holds {} of {} MB: collecting the ended job's finalizable objects now",
            usage.getUsed() >> 20,
            usage.getMax() >> 20);
        System.gc();
        System.runFinalization();
      }
    }
  }

  /** Classes whose static executors (or lock managers) Iceberg starts once per class loader. */
  private static final List<String> ICEBERG_POOLS =
      List.of(
          "org.apache.iceberg.util.ThreadPools",
          "org.apache.iceberg.util.LockManagers$BaseLockManager",
          "org.apache.iceberg.util.LockManagers");

  private static void step(String what, Runnable step) {
    try {
      step.run();
    } catch (RuntimeException | LinkageError e) {
      LOG.debug("Could not release {} of a job's class loader", what, e);
    }
  }

  private static Class<?> loadedBy(ClassLoader loader, String name) {
    return loadedBy(loader, name, loader);
  }

  /**
   * The class {@code name} as {@code through} sees it, where {@code definer} defined it (any class
   * loader, where null); null where there is no such class.
   */
  private static Class<?> loadedBy(ClassLoader definer, String name, ClassLoader through) {
    try {
      Class<?> type = Class.forName(name, false, through);
      return definer == null || type.getClassLoader() == definer ? type : null;
    } catch (ClassNotFoundException | LinkageError e) {
      return null;
    }
  }

  private static void shutDownStaticExecutors(ClassLoader loader, List<String> classes) {
    for (String name : classes) {
      Class<?> type = loadedBy(loader, name);
      if (type == null) {
        continue;
      }
      for (Field field : type.getDeclaredFields()) {
        if (!Modifier.isStatic(field.getModifiers())) {
          continue;
        }
        try {
          field.setAccessible(true);
          Object value = field.get(null);
          if (value instanceof ExecutorService executor) {
            executor.shutdownNow();
          } else if (value instanceof AutoCloseable closeable
              && value.getClass().getClassLoader() == loader) {
            closeable.close();
          }
        } catch (Exception | LinkageError e) {
          LOG.debug("Could not stop {}.{}", name, field.getName(), e);
        }
      }
    }
  }

  private static void closeHadoopFileSystems(ClassLoader loader) {
    Class<?> fileSystem = loadedBy(loader, "org.apache.hadoop.fs.FileSystem");
    if (fileSystem != null) {
      try {
        fileSystem.getMethod("closeAll").invoke(null);
      } catch (ReflectiveOperationException e) {
        LOG.debug("Could not close Hadoop's cached file systems", e);
      }
      return;
    }
    Class<?> shared = loadedBy(null, "org.apache.hadoop.fs.FileSystem", loader);
    if (shared != null) {
      closeCachedFileSystemsOf(loader, shared);
    }
  }

  /**
   * Closes and forgets the file systems of classes {@code loader} defined (the job's local file
   * system, {@code LocalFileSystemWithoutChmod}) that Hadoop's cache holds, where Hadoop itself
   * comes from the cluster's class path (Flink loads {@code org.apache.hadoop.} parent-first): the
   * cache would keep the job's classes. Its map is private; it is read by reflection.
   */
  private static void closeCachedFileSystemsOf(ClassLoader loader, Class<?> fileSystem) {
    try {
      Field cacheField = fileSystem.getDeclaredField("CACHE");
      cacheField.setAccessible(true);
      Object cache = cacheField.get(null);
      Field mapField = cache.getClass().getDeclaredField("map");
      mapField.setAccessible(true);
      Map<?, ?> map = (Map<?, ?>) mapField.get(cache);
      List<Object> ours = new java.util.ArrayList<>();
      synchronized (cache) {
        for (Object cached : map.values()) {
          if (cached.getClass().getClassLoader() == loader) {
            ours.add(cached);
          }
        }
      }
      for (Object cached : ours) {
        // Closing removes it from the cache.
        ((java.io.Closeable) cached).close();
      }
    } catch (ReflectiveOperationException | RuntimeException | java.io.IOException e) {
      LOG.debug("Could not close the job's cached Hadoop file systems", e);
    }
  }

  /**
   * Removes the JVM shutdown hooks whose thread belongs to {@code loader}. The JDK lists them only
   * in a private field, which Flink's JVM options open ({@code --add-opens java.base/java.lang}).
   */
  public static void removeShutdownHooks(ClassLoader loader) {
    Map<?, ?> hooks;
    try {
      Class<?> registry = Class.forName("java.lang.ApplicationShutdownHooks");
      Field field = registry.getDeclaredField("hooks");
      field.setAccessible(true);
      Object value = field.get(null);
      if (!(value instanceof Map<?, ?> map)) {
        return; // the JVM is shutting down
      }
      synchronized (registry) {
        hooks = Map.copyOf(map);
      }
    } catch (ReflectiveOperationException | RuntimeException e) {
      LOG.debug("Cannot list the JVM's shutdown hooks", e);
      return;
    }
    for (Object hook : hooks.keySet()) {
      if (hook instanceof Thread thread && belongsTo(thread, loader)) {
        try {
          Runtime.getRuntime().removeShutdownHook(thread);
        } catch (IllegalStateException e) {
          return; // shutting down
        }
      }
    }
  }

  private static void deregisterDrivers(ClassLoader loader) {
    for (Driver driver : Collections.list(DriverManager.getDrivers())) {
      if (driver.getClass().getClassLoader() == loader) {
        try {
          DriverManager.deregisterDriver(driver);
        } catch (java.sql.SQLException e) {
          LOG.debug("Could not deregister JDBC driver {}", driver.getClass().getName(), e);
        }
      }
    }
  }

  /**
   * Interrupts the threads that the libraries of {@code loader} started (a thread of one of its
   * classes, or running one of its runnables), and takes {@code loader} off any other thread that
   * holds it as its context class loader.
   */
  private static void stopThreads(ClassLoader loader) {
    List<Thread> threads = new ArrayList<>(Thread.getAllStackTraces().keySet());
    for (Thread thread : threads) {
      if (thread == Thread.currentThread()) {
        continue;
      }
      if (belongsTo(thread, loader)) {
        thread.interrupt();
      }
      shutDownPoolOf(thread, loader);
      if (isOrWraps(thread.getContextClassLoader(), loader)) {
        thread.setContextClassLoader(loader.getParent());
      }
      forgetInheritedProtectionDomains(thread);
    }
  }

  /**
   * A thread keeps the protection domains of the code that started it, each with its class loader:
   * a JDK pool thread that the job's code happened to start (one of the default asynchronous
   * channel group's, say) holds the job's class loader for as long as it lives. Only a security
   * manager reads them, so without one they are dropped; the JDK keeps them private even from
   * Flink's opened modules, so those of the job cannot be told from the others.
   */
  @SuppressWarnings("removal")
  private static void forgetInheritedProtectionDomains(Thread thread) {
    if (System.getSecurityManager() != null) {
      return;
    }
    try {
      Field inherited = Thread.class.getDeclaredField("inheritedAccessControlContext");
      inherited.setAccessible(true);
      if (inherited.get(thread) != null && inherited.get(thread) != NO_DOMAINS) {
        inherited.set(thread, NO_DOMAINS);
      }
    } catch (ReflectiveOperationException | RuntimeException e) {
      LOG.debug("Cannot drop the protection domains thread {} inherited", thread.getName(), e);
    }
  }

  @SuppressWarnings("removal")
  private static final java.security.AccessControlContext NO_DOMAINS =
      new java.security.AccessControlContext(new java.security.ProtectionDomain[0]);

  /**
   * Shuts down the thread pool that {@code thread} works for, where the pool's thread factory is a
   * class of {@code loader}: the pools that the libraries keep in statics of their own (the AWS
   * SDK's idle connection reaper and its clients' schedulers, Hadoop's, Caffeine's) name their
   * threads through such a factory.
   */
  private static void shutDownPoolOf(Thread thread, ClassLoader loader) {
    try {
      Object runnable = targetOf(thread);
      if (runnable == null
          || !runnable.getClass().getName().endsWith("ThreadPoolExecutor$Worker")) {
        return;
      }
      Field owner = runnable.getClass().getDeclaredField("this$0");
      owner.setAccessible(true);
      if (owner.get(runnable) instanceof java.util.concurrent.ThreadPoolExecutor pool
          && pool.getThreadFactory().getClass().getClassLoader() == loader) {
        pool.shutdownNow();
      }
    } catch (ReflectiveOperationException | RuntimeException e) {
      LOG.debug("Cannot tell the pool of thread {}", thread.getName(), e);
    }
  }

  /**
   * Removes from Flink's cache of compiled generated code ({@code CompileUtils}, in Flink's {@code
   * lib/}) the classes generated for the job's operators. Flink keeps them softly for five minutes
   * after their last use, each in a class loader of its own (Janino's) that is a child of the job's
   * (the safety net wrapper Flink gives tasks), and the JVM keeps a class loader whose classes were
   * resolved through it for as long as the resolving class loader lives: no path in a heap dump
   * shows it, but the job's class loader stays for as long as any class generated for it does.
   */
  private static void forgetCompiledClasses(ClassLoader loader) {
    Class<?> compileUtils =
        loadedBy(null, "org.apache.flink.table.runtime.generated.CompileUtils", loader);
    if (compileUtils == null) {
      return;
    }
    for (String cache : List.of("COMPILED_CLASS_CACHE", "COMPILED_EXPRESSION_CACHE")) {
      try {
        Field field = compileUtils.getDeclaredField(cache);
        field.setAccessible(true);
        Object value = field.get(null);
        Method asMap = publicMethod(value.getClass(), "asMap");
        if (asMap == null) {
          continue;
        }
        Map<?, ?> compiled = (Map<?, ?>) asMap.invoke(value);
        compiled
            .values()
            .removeIf(generated -> isOrWraps(generatedLoaderParent(generated), loader));
      } catch (ReflectiveOperationException | RuntimeException e) {
        LOG.debug("Cannot forget Flink's {} of a job", cache, e);
      }
    }
  }

  /** The parent of the class loader of a generated class, or of a compiled expression's. */
  private static ClassLoader generatedLoaderParent(Object generated) {
    Class<?> type = generated instanceof Class<?> c ? c : null;
    if (type == null) {
      Method method = publicMethod(generated.getClass(), "getMethod");
      try {
        if (method != null && method.invoke(generated) instanceof Method evaluated) {
          type = evaluated.getDeclaringClass();
        }
      } catch (ReflectiveOperationException | RuntimeException e) {
        return null;
      }
    }
    ClassLoader generatedBy = type == null ? null : type.getClassLoader();
    return generatedBy == null ? null : generatedBy.getParent();
  }

  /** A public method of a public class or interface of {@code type}, callable from here. */
  private static Method publicMethod(Class<?> type, String name) {
    for (Class<?> c = type; c != null; c = c.getSuperclass()) {
      List<Class<?>> candidates = new ArrayList<>(List.of(c));
      candidates.addAll(List.of(c.getInterfaces()));
      for (Class<?> candidate : candidates) {
        if (!Modifier.isPublic(candidate.getModifiers())) {
          continue;
        }
        try {
          return candidate.getMethod(name);
        } catch (NoSuchMethodException e) {
          // not here
        }
      }
    }
    return null;
  }

  /**
   * Whether {@code candidate} is {@code loader}, or the safety net wrapper that Flink gives the
   * job's tasks around it (closed already, or still holding it).
   */
  private static boolean isOrWraps(ClassLoader candidate, ClassLoader loader) {
    if (candidate == null) {
      return false;
    }
    if (candidate == loader) {
      return true;
    }
    for (Class<?> c = candidate.getClass(); c != null; c = c.getSuperclass()) {
      if (c.getName()
          .equals("org.apache.flink.util.FlinkUserCodeClassLoaders$SafetyNetWrapperClassLoader")) {
        try {
          Field inner = c.getDeclaredField("inner");
          inner.setAccessible(true);
          Object wrapped = inner.get(candidate);
          return wrapped == loader;
        } catch (ReflectiveOperationException | RuntimeException e) {
          return false;
        }
      }
    }
    return false;
  }

  /** The runnable a thread was started with, or null. */
  private static Object targetOf(Thread thread) throws ReflectiveOperationException {
    if (threadTarget == null) {
      Field target = Thread.class.getDeclaredField("target");
      target.setAccessible(true);
      threadTarget = target;
    }
    return threadTarget.get(thread);
  }

  private static volatile Field threadTarget;

  /** Whether the thread is of a class of {@code loader}, or runs a runnable of one. */
  private static boolean belongsTo(Thread thread, ClassLoader loader) {
    if (thread.getClass().getClassLoader() == loader) {
      return true;
    }
    try {
      Object runnable = targetOf(thread);
      return runnable != null && runnable.getClass().getClassLoader() == loader;
    } catch (ReflectiveOperationException | RuntimeException e) {
      return false;
    }
  }
}
