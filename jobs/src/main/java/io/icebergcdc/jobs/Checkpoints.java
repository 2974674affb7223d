package io.icebergcdc.jobs;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Optional;
import java.util.stream.Stream;

/** Finds the checkpoints that jobs left in a checkpoint directory. */
public final class Checkpoints {

  private Checkpoints() {}

  /**
   * The newest completed checkpoint ({@code <job id>/chk-<n>} with its {@code _metadata}) under a
   * checkpoint directory, across the jobs that wrote there: the one whose metadata was written
   * last.
   */
  public static Optional<Path> latest(String checkpointDirectory) {
    Path root = Paths.get(checkpointDirectory);
    if (!Files.isDirectory(root)) {
      return Optional.empty();
    }
    try (Stream<Path> jobs = Files.list(root)) {
      return newest(jobs.filter(Files::isDirectory).flatMap(Checkpoints::completed));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The newest completed checkpoint of one job under a checkpoint directory. */
  public static Optional<Path> latestOf(String checkpointDirectory, String jobId) {
    Path job = Paths.get(checkpointDirectory, jobId);
    if (!Files.isDirectory(job)) {
      return Optional.empty();
    }
    return newest(completed(job));
  }

  /**
   * The checkpoint whose metadata was written last; one that a running job removes meanwhile (a
   * subsumed checkpoint) is not among them.
   */
  private static Optional<Path> newest(Stream<Path> checkpoints) {
    return checkpoints
        .map(checkpoint -> java.util.Map.entry(checkpoint, metadataTime(checkpoint)))
        .filter(entry -> entry.getValue() >= 0)
        .max(java.util.Map.Entry.comparingByValue())
        .map(entry -> entry.getKey().toAbsolutePath());
  }

  private static Stream<Path> completed(Path jobDirectory) {
    try (Stream<Path> children = Files.list(jobDirectory)) {
      // A job directory that a finished job's cleanup removes meanwhile has none.
      return children
          .filter(p -> p.getFileName().toString().startsWith("chk-"))
          .filter(p -> Files.isRegularFile(p.resolve("_metadata")))
          .toList()
          .stream();
    } catch (java.nio.file.NoSuchFileException e) {
      return Stream.empty();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** When the checkpoint's metadata was written; -1 if it is gone. */
  private static long metadataTime(Path checkpoint) {
    try {
      return Files.getLastModifiedTime(checkpoint.resolve("_metadata")).toMillis();
    } catch (java.nio.file.NoSuchFileException e) {
      return -1;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
