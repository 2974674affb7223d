package io.icebergcdc.jobs.pipeline;

import io.icebergcdc.jobs.definition.RuntimeDefinition;
import java.time.Duration;
import java.util.Optional;
import org.apache.flink.client.program.StreamContextEnvironment;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.ExecutionOptions;
import org.apache.flink.configuration.ExternalizedCheckpointRetention;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.configuration.ReadableConfig;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.configuration.TaskManagerOptions;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

/**
 * The execution environment of a job: checkpoints at the interval into the directory (kept when the
 * job is cancelled, so that it can resume), the state backend, the restore point, a fixed-delay
 * restart strategy and network buffers for the job's tables when embedded, no timed flush of
 * network buffers, and object reuse.
 */
public final class RuntimeTranslator {

  private RuntimeTranslator() {}

  private static final String LOOPBACK = "127.0.0.1";

  /** The directory of {@link #embeddedTemporaryFiles()}, once made. */
  private static String embeddedTemporaryFiles;

  /** Network memory of an embedded Flink: its own default, enough for a few tables. */
  static final MemorySize EMBEDDED_NETWORK_MEMORY = MemorySize.ofMebiBytes(64);

  /** The size of Flink's network buffers, its default. */
  private static final MemorySize NETWORK_BUFFER = MemorySize.parse("32kb");

  /**
   * The environment of a job with {@code tables} writer operators (one for the tables written
   * together, one for each other table).
   */
  public static StreamExecutionEnvironment environment(RuntimeDefinition runtime, int tables) {
    Configuration config = new Configuration();
    if (clusterConfiguration().isEmpty()) {
      // Embedded: this job's own settings. On a cluster its configuration decides, as for any
      // job submitted to it.
      config.set(RestartStrategyOptions.RESTART_STRATEGY, "fixed-delay");
      config.set(
          RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS, runtime.restartAttempts());
      config.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_DELAY, Duration.ofMillis(200));
      // Flink's 64 MB ran out at a few hundred tables ("Insufficient number of network buffers").
      MemorySize network = embeddedNetworkMemory(tables, runtime.parallelism());
      config.set(TaskManagerOptions.NETWORK_MEMORY_MIN, network);
      config.set(TaskManagerOptions.NETWORK_MEMORY_MAX, network);
      // The embedded Flink's endpoints (its REST API can cancel the job, its blob server serves
      // the job's files) answer this machine only.
      config.set(org.apache.flink.configuration.RestOptions.BIND_ADDRESS, LOOPBACK);
      config.set(org.apache.flink.configuration.JobManagerOptions.BIND_HOST, LOOPBACK);
      config.set(org.apache.flink.configuration.TaskManagerOptions.BIND_HOST, LOOPBACK);
      config.set(org.apache.flink.configuration.CoreOptions.TMP_DIRS, embeddedTemporaryFiles());
    }
    config.set(CheckpointingOptions.CHECKPOINT_STORAGE, "filesystem");
    config.set(
        CheckpointingOptions.CHECKPOINTS_DIRECTORY,
        DeadLetterTranslator.directoryUri(runtime.checkpointDirectory()));
    config.set(
        CheckpointingOptions.EXTERNALIZED_CHECKPOINT_RETENTION,
        ExternalizedCheckpointRetention.RETAIN_ON_CANCELLATION);
    // Every job, on a cluster too: records reach a table only with a checkpoint, and the
    // checkpoint's barrier flushes every buffer ahead of it, so Flink's flush every 100 ms, by a
    // thread per output of every task (1,800 threads waking ten times a second in a job of 300
    // tables), would buy nothing.
    config.set(ExecutionOptions.BUFFER_TIMEOUT_ENABLED, false);
    if (runtime.stateBackend() != null) {
      config.set(StateBackendOptions.STATE_BACKEND, runtime.stateBackend());
    }
    if (runtime.restoreFrom() != null) {
      config.set(StateRecoveryOptions.SAVEPOINT_PATH, runtime.restoreFrom());
      if (runtime.allowNonRestoredState()) {
        config.set(StateRecoveryOptions.SAVEPOINT_IGNORE_UNCLAIMED_STATE, true);
      }
    }
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(config);
    env.setParallelism(runtime.parallelism());
    // No operator of the pipeline keeps or changes a record after passing it on, so chained
    // operators may hand records over without copying them.
    env.getConfig().enableObjectReuse();
    env.enableCheckpointing(runtime.checkpointInterval().toMillis());
    return env;
  }

  /**
   * A directory of this process's own for the embedded Flink's temporary files (the RPC system's
   * jar, spilling, shuffle and cache directories), removed when the process exits, however it exits
   * but killed: Flink removes its own only where the job ends before the process does, and left 21
   * MB in the system's temporary directory at each failed or stopped run.
   */
  private static synchronized String embeddedTemporaryFiles() {
    if (embeddedTemporaryFiles != null) {
      // One for every job of the process (--read-again runs two).
      return embeddedTemporaryFiles;
    }
    try {
      java.nio.file.Path directory = java.nio.file.Files.createTempDirectory("iceberg-cdc-flink-");
      Runtime.getRuntime()
          .addShutdownHook(
              new Thread(
                  () -> org.apache.flink.util.FileUtils.deleteDirectoryQuietly(directory.toFile()),
                  "remove " + directory));
      embeddedTemporaryFiles = directory.toString();
      return embeddedTemporaryFiles;
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(
          "cannot create a directory for Flink's temporary files", e);
    }
  }

  /**
   * The network memory of an embedded Flink running a job of {@code tables} writer operators: its
   * default, and for each beyond the first twice the buffers its operators take at Flink's defaults
   * (32 KB buffers; 2 per channel and 8 floating per input gate): the writers' gates read the
   * source's {@code p} subtasks over {@code p * p} channels, and the committer's gate the writers'
   * {@code p}, about {@code 3p² + 6p + 1} buffers with their result partitions.
   */
  static MemorySize embeddedNetworkMemory(int tables, int parallelism) {
    long p = Math.max(1, parallelism);
    long buffersPerTable = 2 * (3 * p * p + 6 * p + 1);
    long extra = Math.max(0, tables - 1) * buffersPerTable * NETWORK_BUFFER.getBytes();
    return new MemorySize(EMBEDDED_NETWORK_MEMORY.getBytes() + extra);
  }

  /**
   * Whether the program runs inside a JobManager (Flink's application mode, or a jar submitted
   * through its REST API or web UI) as {@code flink} configures it (null: it does not), where it
   * submits one job and cannot follow it (its client answers no status, takes no savepoint).
   */
  public static boolean runsInJobManager(ReadableConfig flink) {
    return flink != null
        && org.apache.flink.client.deployment.application.executors.EmbeddedExecutor.NAME.equals(
            flink.get(org.apache.flink.configuration.DeploymentOptions.TARGET));
  }

  /**
   * The configuration of the cluster this program was submitted to by Flink's command-line front
   * end ({@code flink run}), or empty when it runs otherwise: on an embedded Flink of its own
   * ({@code java -jar}), or built by a program or test that owns its environment.
   */
  public static Optional<ReadableConfig> clusterConfiguration() {
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
    return env instanceof StreamContextEnvironment
        ? Optional.of(env.getConfiguration())
        : Optional.empty();
  }
}
