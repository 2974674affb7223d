package io.icebergcdc.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * What can be checked of the Docker deployment without a Docker engine: Compose accepts the file
 * and it has every service, and its scripts parse. (The submit script itself runs against a real
 * cluster in {@link StandaloneClusterITCase}.)
 */
class DockerComposeITCase {

  private static final Path DOCKER = Paths.get("../docker");

  private static String run(String... command) throws Exception {
    Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
    String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(process.waitFor(2, TimeUnit.MINUTES)).isTrue();
    assertThat(process.exitValue()).as("%s: %s", String.join(" ", command), output).isZero();
    return output;
  }

  @Test
  void composeAcceptsTheFileAndItHasTheWholeDeployment() throws Exception {
    String compose = DOCKER.resolve("compose.yaml").toString();
    run("docker-compose", "-f", compose, "config", "-q");
    assertThat(run("docker-compose", "-f", compose, "config", "--services").lines())
        .containsExactlyInAnyOrder(
            "jobmanager",
            "taskmanager",
            "postgres",
            "mariadb",
            "kafka",
            "kafka-init",
            "minio",
            "minio-init",
            "rest",
            "submit-postgres",
            "submit-mariadb",
            "submit-kafka");
  }

  @Test
  void itsScriptsParse() throws Exception {
    List<Path> scripts;
    try (Stream<Path> files = Files.walk(DOCKER)) {
      scripts =
          files
              .filter(Files::isRegularFile)
              .filter(
                  f -> {
                    try {
                      return Files.readString(f).startsWith("#!/usr/bin/env bash");
                    } catch (java.io.IOException | java.io.UncheckedIOException e) {
                      return false;
                    }
                  })
              .toList();
    }
    assertThat(scripts).hasSizeGreaterThanOrEqualTo(3);
    for (Path script : scripts) {
      run("bash", "-n", script.toString());
    }
  }
}
