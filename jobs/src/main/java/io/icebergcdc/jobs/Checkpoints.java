package io.icebergcdc.jobs;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.flink.core.fs.FileStatus;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;

/**
 * Finds the checkpoints that jobs left in a checkpoint directory, a local path or any URI of a file
 * system Flink has ({@code s3://}, {@code hdfs://}, {@code file://}).
 */
public final class Checkpoints {

  private Checkpoints() {}

  /**
   * The newest completed checkpoint ({@code <job id>/chk-<n>} with its {@code _metadata}) under a
   * checkpoint directory, across the jobs that wrote there: the one whose metadata was written
   * last. A local checkpoint is given as its absolute path, another as its URI.
   *
   * @throws UncheckedIOException if the directory's file system cannot be reached or listed
   */
  public static Optional<String> latest(String checkpointDirectory) {
    Path root = new Path(checkpointDirectory);
    try {
      FileSystem fs = root.getFileSystem();
      List<Path> checkpoints = new ArrayList<>();
      for (FileStatus job : list(fs, root)) {
        if (job.isDir()) {
          checkpoints.addAll(completed(fs, job.getPath()));
        }
      }
      return newest(fs, checkpoints);
    } catch (IOException e) {
      throw new UncheckedIOException(
          "cannot list the checkpoints in " + checkpointDirectory + ": " + e.getMessage(), e);
    }
  }

  /**
   * Whether {@code location} (a checkpoint or savepoint to restore from) is known not to exist: its
   * file system answers that there is nothing there. False where the file system cannot be asked
   * here (a scheme whose file system only the cluster has), which leaves the answer to Flink.
   */
  public static boolean missing(String location) {
    Path path = new Path(location);
    try {
      return !path.getFileSystem().exists(path);
    } catch (IOException | RuntimeException e) {
      return false;
    }
  }

  /**
   * Whether a directory can be seen here: false where it is not there, or its file system cannot be
   * reached or is only the cluster's. On an object store, a directory is seen once an object is
   * under it.
   */
  public static boolean visible(String directory) {
    Path path = new Path(directory);
    try {
      return path.getFileSystem().exists(path);
    } catch (IOException | RuntimeException e) {
      return false;
    }
  }

  /** The schemes of the object stores Flink's file systems reach, which have no directories. */
  private static final java.util.Set<String> OBJECT_STORES =
      java.util.Set.of("s3", "s3a", "s3p", "gs", "oss", "obs", "cosn", "wasb", "wasbs");

  /** Whether {@code location} is on an object store, where a directory is only a key prefix. */
  public static boolean isObjectStore(String location) {
    String scheme = new Path(location).toUri().getScheme();
    return scheme != null && OBJECT_STORES.contains(scheme.toLowerCase(java.util.Locale.ROOT));
  }

  /** The newest completed checkpoint of one job under a checkpoint directory. */
  public static Optional<String> latestOf(String checkpointDirectory, String jobId) {
    Path job = new Path(checkpointDirectory, jobId);
    try {
      FileSystem fs = job.getFileSystem();
      return newest(fs, completed(fs, job));
    } catch (IOException e) {
      throw new UncheckedIOException(
          "cannot list the checkpoints of job " + jobId + " in " + checkpointDirectory, e);
    }
  }

  /**
   * The checkpoint whose metadata was written last; one that a running job removes meanwhile (a
   * subsumed checkpoint) is not among them.
   */
  private static Optional<String> newest(FileSystem fs, List<Path> checkpoints) throws IOException {
    Path newest = null;
    long newestTime = -1;
    for (Path checkpoint : checkpoints) {
      long time = metadataTime(fs, checkpoint);
      if (time >= 0 && (newest == null || time > newestTime)) {
        newest = checkpoint;
        newestTime = time;
      }
    }
    if (newest == null) {
      return Optional.empty();
    }
    Path qualified = newest.makeQualified(fs);
    return Optional.of(
        "file".equals(qualified.toUri().getScheme())
            ? new java.io.File(qualified.toUri()).getAbsolutePath()
            : qualified.toString());
  }

  /** The completed checkpoints of one job: those with their metadata. */
  private static List<Path> completed(FileSystem fs, Path jobDirectory) throws IOException {
    List<Path> completed = new ArrayList<>();
    // A job directory that a finished job's cleanup removes meanwhile has none.
    for (FileStatus child : list(fs, jobDirectory)) {
      if (child.isDir() && child.getPath().getName().startsWith("chk-")) {
        completed.add(child.getPath());
      }
    }
    return completed;
  }

  /** The directory's entries; none if it does not exist (or no longer does). */
  private static FileStatus[] list(FileSystem fs, Path directory) throws IOException {
    try {
      FileStatus[] children = fs.listStatus(directory);
      return children == null ? new FileStatus[0] : children;
    } catch (FileNotFoundException e) {
      return new FileStatus[0];
    }
  }

  /** When the checkpoint's metadata was written; -1 if it has none (yet, or any longer). */
  private static long metadataTime(FileSystem fs, Path checkpoint) throws IOException {
    try {
      FileStatus metadata = fs.getFileStatus(new Path(checkpoint, "_metadata"));
      return metadata.isDir() ? -1 : metadata.getModificationTime();
    } catch (FileNotFoundException e) {
      return -1;
    }
  }
}
