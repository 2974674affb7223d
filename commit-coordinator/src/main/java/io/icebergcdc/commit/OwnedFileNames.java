package io.icebergcdc.commit;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.ThreadLocalRandom;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.CRC32;

/**
 * Names the data and delete files that this project's writers and committer write, so that the
 * committer can tell later which job wrote a file and for which checkpoint: the operation id of
 * Iceberg's {@code OutputFileFactory} ({@code <subtask>-<attempt>-<operation id>-<count>.parquet})
 * is {@code cdc.<job id>.<sink>.<checkpoint>.<random>}, where the sink is a tag of the uid of the
 * committer that the files are handed to (two sinks of one job may write one table).
 *
 * <p>The checkpoint is the first one that can hand the file to the committer: a writer writes its
 * files when it prepares a checkpoint's barrier, names them with that checkpoint, and names what it
 * writes after the barrier (at the end of its input) with the next one. So once a job has committed
 * every checkpoint up to {@code N}, a file it named with a checkpoint at most {@code N} is either
 * in the table, in a checkpoint still pending, or was written by an attempt that never committed
 * it: an orphan ({@link OrphanFiles}).
 */
public final class OwnedFileNames {

  private OwnedFileNames() {}

  private static final Pattern OWNED =
      Pattern.compile("-cdc\\.([0-9a-f]{32})\\.([0-9a-f]{8})\\.(\\d{1,19})\\.[0-9a-z]+-\\d+[^/]*$");

  /**
   * Who wrote a file: the Flink job, the sink ({@link #sinkTag}), and the first checkpoint that can
   * commit it.
   */
  public record Owner(String jobId, String sink, long checkpointId) {}

  /** The tag that names the files of the sink whose committer has uid {@code committerUid}. */
  public static String sinkTag(String committerUid) {
    CRC32 crc = new CRC32();
    crc.update(committerUid.getBytes(StandardCharsets.UTF_8));
    return String.format("%08x", crc.getValue());
  }

  /**
   * The operation id of the files that job {@code jobId} writes for the sink tagged {@code sink},
   * to be handed to the committer in checkpoint {@code checkpointId} or a later one.
   */
  public static String operationId(String jobId, String sink, long checkpointId) {
    if (jobId == null || !jobId.matches("[0-9a-f]{32}")) {
      throw new IllegalArgumentException("not a Flink job id: " + jobId);
    }
    if (sink == null || !sink.matches("[0-9a-f]{8}")) {
      throw new IllegalArgumentException("not a sink tag: " + sink);
    }
    return "cdc."
        + jobId
        + "."
        + sink
        + "."
        + Math.max(0, checkpointId)
        + "."
        + Long.toString(ThreadLocalRandom.current().nextLong() & Long.MAX_VALUE, 36);
  }

  /** The writer of the file at {@code location}, or null for a file not named by this project. */
  public static Owner ownerOf(String location) {
    Matcher m = OWNED.matcher(location);
    if (!m.find()) {
      return null;
    }
    try {
      return new Owner(m.group(1), m.group(2), Long.parseLong(m.group(3)));
    } catch (NumberFormatException e) {
      return null;
    }
  }
}
