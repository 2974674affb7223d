package io.icebergcdc.jobs;

import static org.assertj.core.api.Assertions.assertThat;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.DeploymentOptions;
import org.junit.jupiter.api.Test;

/** Where the entry point may exit its process. */
class IcebergCdcMainTest {

  /**
   * Flink's application mode and a jar run through its REST API run the program inside the
   * JobManager ("embedded"): exiting there would end the JobManager and the other jobs it runs.
   */
  @Test
  void exitsOnlyOutsideAJobManager() {
    assertThat(IcebergCdcMain.runsInJobManager(null)).as("java -jar").isFalse();
    assertThat(IcebergCdcMain.runsInJobManager(withTarget("remote"))).as("flink run").isFalse();
    assertThat(IcebergCdcMain.runsInJobManager(withTarget("embedded"))).isTrue();
  }

  @Test
  void aFailureInAJobManagerCarriesTheLineTheCommandPrinted() {
    assertThat(
            new IcebergCdcMain.ProgramFailedException(2, "error: apply: unknown flag --pth")
                .getMessage())
        .isEqualTo("iceberg-cdc ended with status 2: error: apply: unknown flag --pth");
  }

  private static Configuration withTarget(String target) {
    Configuration configuration = new Configuration();
    configuration.set(DeploymentOptions.TARGET, target);
    return configuration;
  }
}
