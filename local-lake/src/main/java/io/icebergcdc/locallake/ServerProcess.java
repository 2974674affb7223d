package io.icebergcdc.locallake;

import java.io.IOException;
import java.io.InputStream;
import java.io.RandomAccessFile;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * What both launchers share: a server's class path as the build wrote it into a resource, a {@code
 * java} child process with its output in a log file, a readiness poll, and stopping it.
 */
final class ServerProcess {

  static final Duration START_TIMEOUT = Duration.ofSeconds(90);
  private static final int LOG_TAIL_BYTES = 16 * 1024;

  private final String name;
  private final Path log;
  private Process process;
  private Thread shutdownHook;

  ServerProcess(String name, Path log) {
    this.name = name;
    this.log = log;
  }

  /**
   * Reads a class path resource written by the build (absolute paths of jars in the local Maven
   * repository, separated by ':') and checks that every jar in it exists.
   */
  static String classPath(String resource) throws IOException {
    String classPath;
    try (InputStream in = ServerProcess.class.getResourceAsStream(resource)) {
      if (in == null) {
        throw new IllegalStateException(
            "the class path resource io/icebergcdc/locallake/"
                + resource
                + " is missing: build the local-lake module with Maven");
      }
      classPath = new String(in.readAllBytes(), StandardCharsets.UTF_8).trim();
    }
    if (classPath.isEmpty()) {
      throw new IllegalStateException("the class path resource " + resource + " is empty");
    }
    for (String entry : classPath.split(java.io.File.pathSeparator)) {
      if (!Files.exists(Paths.get(entry))) {
        throw new IllegalStateException(
            "a jar of the class path in "
                + resource
                + " is missing (rebuild local-lake): "
                + entry);
      }
    }
    return classPath;
  }

  /** A {@code java} command line for a child JVM, with the JVM of this one. */
  static List<String> javaCommand(
      String classPath, List<String> jvmOptions, String mainClass, List<String> arguments) {
    List<String> command = new ArrayList<>();
    command.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
    command.addAll(jvmOptions);
    command.add("-cp");
    command.add(classPath);
    command.add(mainClass);
    command.addAll(arguments);
    return command;
  }

  /** Starts the command with its output (stdout and stderr) appended to the log file. */
  void start(List<String> command, Map<String, String> environment) throws IOException {
    if (process != null && process.isAlive()) {
      throw new IllegalStateException(name + " is already running");
    }
    ProcessBuilder builder = new ProcessBuilder(command);
    // The child gets this JVM's environment, less anything that would configure it behind our
    // back: the REST fixture reads every CATALOG_* variable, the AWS SDK every AWS_* one.
    builder.environment().keySet().removeIf(k -> k.startsWith("CATALOG_") || k.startsWith("AWS_"));
    builder.environment().putAll(environment);
    builder.redirectErrorStream(true);
    builder.redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
    process = builder.start();
    Process started = process;
    shutdownHook = new Thread(started::destroyForcibly, name + "-shutdown");
    Runtime.getRuntime().addShutdownHook(shutdownHook);
  }

  /**
   * Polls an HTTP URL until it answers (any status when {@code anyStatus}, else 200), failing with
   * the tail of the log if the process exits or the timeout passes.
   */
  void awaitHttp(URI uri, boolean anyStatus) throws Exception {
    HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
    Exception last = null;
    int lastStatus = -1;
    while (System.nanoTime() < deadline) {
      if (!process.isAlive()) {
        throw new IllegalStateException(
            name + " exited with code " + process.exitValue() + "; its log ends with:\n" + tail());
      }
      try {
        HttpResponse<Void> response =
            client.send(
                HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(5)).GET().build(),
                HttpResponse.BodyHandlers.discarding());
        lastStatus = response.statusCode();
        if (anyStatus || lastStatus == 200) {
          return;
        }
      } catch (IOException e) {
        last = e;
      }
      Thread.sleep(250);
    }
    stop();
    throw new IllegalStateException(
        name
            + " did not answer "
            + uri
            + " within "
            + START_TIMEOUT
            + (lastStatus >= 0 ? " (last status " + lastStatus + ")" : "")
            + "; its log ends with:\n"
            + tail(),
        last);
  }

  boolean isAlive() {
    return process != null && process.isAlive();
  }

  /** Stops the process (SIGTERM, then SIGKILL after 30 s) and waits for it to exit. */
  void stop() throws InterruptedException {
    if (process == null) {
      return;
    }
    process.destroy();
    if (!process.waitFor(30, TimeUnit.SECONDS)) {
      process.destroyForcibly().waitFor();
    }
    try {
      Runtime.getRuntime().removeShutdownHook(shutdownHook);
    } catch (IllegalStateException e) {
      // the JVM is shutting down; the hook runs anyway
    }
    process = null;
  }

  /** The last 16 KiB of the log. */
  String tail() {
    try (RandomAccessFile file = new RandomAccessFile(log.toFile(), "r")) {
      long start = Math.max(0, file.length() - LOG_TAIL_BYTES);
      byte[] bytes = new byte[(int) (file.length() - start)];
      file.seek(start);
      file.readFully(bytes);
      return new String(bytes, StandardCharsets.UTF_8);
    } catch (IOException e) {
      return "(the log " + log + " cannot be read: " + e + ")";
    }
  }

  /**
   * Deletes a server's temporary directory, unless the system property {@code locallake.keep} is
   * {@code true} (to look at the logs and data after a run).
   */
  static void deleteDirectory(Path directory) throws IOException {
    if (Boolean.getBoolean("locallake.keep") || !Files.exists(directory)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(directory)) {
      for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(path);
      }
    }
  }

  static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0)) {
      socket.setReuseAddress(true);
      return socket.getLocalPort();
    }
  }
}
