package io.icebergcdc.jobs;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Comparator;
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
      return jobs.filter(Files::isDirectory)
          .flatMap(Checkpoints::completed)
          .max(Comparator.comparing(Checkpoints::metadataTime))
          .map(Path::toAbsolutePath);
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
    return completed(job)
        .max(Comparator.comparing(Checkpoints::metadataTime))
        .map(Path::toAbsolutePath);
  }

  private static Stream<Path> completed(Path jobDirectory) {
    try (Stream<Path> children = Files.list(jobDirectory)) {
      return children
          .filter(p -> p.getFileName().toString().startsWith("chk-"))
          .filter(p -> Files.isRegularFile(p.resolve("_metadata")))
          .toList()
          .stream();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static long metadataTime(Path checkpoint) {
    try {
      return Files.getLastModifiedTime(checkpoint.resolve("_metadata")).toMillis();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
