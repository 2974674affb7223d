package io.icebergcdc.bench.chaos;

import java.io.IOException;
import java.io.UncheckedIOException;
import org.apache.iceberg.hadoop.HadoopFileIO;
import org.apache.iceberg.io.OutputFile;

/**
 * The job's file IO in the chaos run: Hadoop's, failing the creation of a data file (in a writer)
 * or of a manifest (in the committer's commit) when the driver armed that ({@link Injection}).
 */
public class ChaosFileIO extends HadoopFileIO {

  private static final long serialVersionUID = 1L;

  @Override
  public OutputFile newOutputFile(String path) {
    if (path.contains("/data/") && path.endsWith(".parquet")) {
      Injection.failIfArmed("writer", "creating " + path);
    } else if (path.endsWith(".avro") && !path.contains("/snap-")) {
      try {
        Injection.failIfArmed("file-io", "creating manifest " + path);
      } catch (Injection.InjectedFailure e) {
        throw new UncheckedIOException(new IOException(e.getMessage()));
      }
    }
    return super.newOutputFile(path);
  }
}
