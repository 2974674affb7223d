package io.icebergcdc.commit;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.net.URI;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.junit.jupiter.api.Test;

class JobClassLoaderReleaseTest {

  /** A file system class that the job's class loader defines, as it defines this project's. */
  public static final class JobsFileSystem extends RawLocalFileSystem {
    @Override
    public String getScheme() {
      return "jobfs";
    }
  }

  /** Defines one class itself and leaves every other, Hadoop's among them, to its parent. */
  private static final class JobLoader extends ClassLoader {
    private final String own;

    JobLoader(ClassLoader parent, String own) {
      super(parent);
      this.own = own;
    }

    @Override
    protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
      if (!name.equals(own)) {
        return super.loadClass(name, resolve);
      }
      synchronized (getClassLoadingLock(name)) {
        Class<?> loaded = findLoadedClass(name);
        if (loaded != null) {
          return loaded;
        }
        try (InputStream in = getParent().getResourceAsStream(name.replace('.', '/') + ".class")) {
          byte[] bytes = in.readAllBytes();
          return defineClass(name, bytes, 0, bytes.length);
        } catch (java.io.IOException e) {
          throw new ClassNotFoundException(name, e);
        }
      }
    }
  }

  @Test
  void theJobsFileSystemsLeaveHadoopsCacheWhereHadoopIsTheClustersAndOthersStay() throws Exception {
    ClassLoader job = new JobLoader(getClass().getClassLoader(), JobsFileSystem.class.getName());
    Configuration conf = new Configuration();
    conf.set("fs.jobfs.impl", JobsFileSystem.class.getName());
    conf.setClassLoader(job);
    FileSystem jobs = FileSystem.get(URI.create("jobfs:///"), conf);
    assertThat(jobs.getClass().getClassLoader()).isSameAs(job);
    FileSystem shared = FileSystem.get(URI.create("file:///"), new Configuration());

    JobClassLoaderRelease.release(job);

    assertThat(FileSystem.get(URI.create("jobfs:///"), conf))
        .as("the job's file system, closed and forgotten")
        .isNotSameAs(jobs);
    assertThat(FileSystem.get(URI.create("file:///"), new Configuration()))
        .as("a file system of the cluster's classes")
        .isSameAs(shared);
  }
}
