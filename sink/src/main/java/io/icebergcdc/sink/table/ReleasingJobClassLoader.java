package io.icebergcdc.sink.table;

import io.icebergcdc.commit.JobClassLoaderRelease;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichMapFunction;

/**
 * Passes the rows of a read on, unchanged, chained to Iceberg's source: a job that only reads runs
 * none of this project's operators, and this one registers the release of the job's class loader
 * ({@link JobClassLoaderRelease}) on each TaskManager the read runs on.
 */
final class ReleasingJobClassLoader<T> extends RichMapFunction<T, T> {

  private static final long serialVersionUID = 1L;

  @Override
  public void open(OpenContext openContext) {
    JobClassLoaderRelease.registerFor(getRuntimeContext());
  }

  @Override
  public T map(T value) {
    return value;
  }
}
