package io.icebergcdc.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** The shaded job jar, run the way a user does: {@code java -jar iceberg-cdc-jobs.jar ...}. */
final class JobJar {

  static final Path JAR = Paths.get("../jobs/target/iceberg-cdc-jobs.jar");

  private JobJar() {}

  /** What a command printed and its exit status. */
  record Result(int status, String out, String err) {

    /** The last line of what it printed on standard error. */
    String lastErrorLine() {
      String[] lines = err.strip().split("\n");
      return lines[lines.length - 1];
    }
  }

  static void assertBuilt() {
    assertThat(JAR).as("the job jar; build with mvn package first").isRegularFile();
  }

  /** Runs the jar with the arguments in a working directory, for at most five minutes. */
  static Result run(Path directory, List<String> args) throws Exception {
    List<String> command = new ArrayList<>();
    command.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
    command.add("-jar");
    command.add(JAR.toAbsolutePath().toString());
    command.addAll(args);
    Path out = directory.resolve("stdout.txt");
    Path err = directory.resolve("stderr.txt");
    Process process =
        new ProcessBuilder(command)
            .directory(directory.toFile())
            .redirectOutput(out.toFile())
            .redirectError(err.toFile())
            .start();
    assertThat(process.waitFor(5, TimeUnit.MINUTES)).as("the command ends").isTrue();
    return new Result(
        process.exitValue(),
        Files.readString(out, StandardCharsets.UTF_8),
        Files.readString(err, StandardCharsets.UTF_8));
  }
}
