package io.icebergcdc.jobs.pipeline;

import io.icebergcdc.jobs.definition.RuntimeDefinition;
import java.time.Duration;
import java.util.Optional;
import org.apache.flink.client.program.StreamContextEnvironment;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.ExternalizedCheckpointRetention;
import org.apache.flink.configuration.ReadableConfig;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

/**
 * The execution environment of a job: checkpoints at the interval into the directory (kept when the
 * job is cancelled, so that it can resume), the state backend, the restore point, a fixed-delay
 * restart strategy when embedded, and object reuse.
 */
public final class RuntimeTranslator {

  private RuntimeTranslator() {}

  public static StreamExecutionEnvironment environment(RuntimeDefinition runtime) {
    Configuration config = new Configuration();
    if (clusterConfiguration().isEmpty()) {
      // Embedded: this job's own settings. On a cluster its configuration decides, as for any
      // job submitted to it.
      config.set(RestartStrategyOptions.RESTART_STRATEGY, "fixed-delay");
      config.set(
          RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS, runtime.restartAttempts());
      config.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_DELAY, Duration.ofMillis(200));
    }
    config.set(CheckpointingOptions.CHECKPOINT_STORAGE, "filesystem");
    config.set(
        CheckpointingOptions.CHECKPOINTS_DIRECTORY,
        DeadLetterTranslator.directoryUri(runtime.checkpointDirectory()));
    config.set(
        CheckpointingOptions.EXTERNALIZED_CHECKPOINT_RETENTION,
        ExternalizedCheckpointRetention.RETAIN_ON_CANCELLATION);
    if (runtime.stateBackend() != null) {
      config.set(StateBackendOptions.STATE_BACKEND, runtime.stateBackend());
    }
    if (runtime.restoreFrom() != null) {
      config.set(StateRecoveryOptions.SAVEPOINT_PATH, runtime.restoreFrom());
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
