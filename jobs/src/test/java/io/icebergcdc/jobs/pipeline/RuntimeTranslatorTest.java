package io.icebergcdc.jobs.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import io.icebergcdc.jobs.definition.RuntimeDefinition;
import java.nio.file.Path;
import java.time.Duration;
import org.apache.flink.configuration.RestOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The settings of the embedded Flink a job of the job jar runs on. */
class RuntimeTranslatorTest {

  @TempDir Path dir;

  /**
   * Its REST endpoint can cancel the job, its blob server serves the job's files: they answer this
   * machine, not the network.
   */
  @Test
  void theEmbeddedEndpointsAnswerThisMachineOnly() {
    RuntimeDefinition runtime =
        new RuntimeDefinition(2, Duration.ofSeconds(10), dir.toString(), null, null, 3);
    org.apache.flink.configuration.ReadableConfig config =
        RuntimeTranslator.environment(runtime, 1).getConfiguration();
    assertThat(config.get(RestOptions.BIND_ADDRESS)).isEqualTo("127.0.0.1");
    assertThat(config.get(org.apache.flink.configuration.JobManagerOptions.BIND_HOST))
        .isEqualTo("127.0.0.1");
    assertThat(config.get(org.apache.flink.configuration.TaskManagerOptions.BIND_HOST))
        .isEqualTo("127.0.0.1");
  }

  /** Its temporary files go to a directory of the process's own, which its exit removes. */
  @Test
  void theEmbeddedFlinksTemporaryFilesHaveADirectoryOfTheirOwn() {
    RuntimeDefinition runtime =
        new RuntimeDefinition(2, Duration.ofSeconds(10), dir.toString(), null, null, 3);
    String temporary =
        RuntimeTranslator.environment(runtime, 1)
            .getConfiguration()
            .get(org.apache.flink.configuration.CoreOptions.TMP_DIRS);
    assertThat(Path.of(temporary)).isDirectory();
    assertThat(Path.of(temporary).getFileName().toString()).startsWith("iceberg-cdc-flink-");
  }
}
