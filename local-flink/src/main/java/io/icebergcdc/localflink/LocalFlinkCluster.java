package io.icebergcdc.localflink;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * A Flink session cluster as a distribution's scripts run it, for tests: a JobManager ({@code
 * StandaloneSessionClusterEntrypoint}) and TaskManagers ({@code TaskManagerRunner}) as processes of
 * their own, with the class path, memory settings (from Flink's {@code BashJavaUtils}, as {@code
 * jobmanager.sh} and {@code taskmanager.sh} compute them) and Java 17 options that the scripts give
 * them; and Flink's own command-line front end ({@code flink}: {@code CliFrontend}) and SQL client
 * ({@code sql-client.sh}: {@code SqlClient}) run against it, as processes too.
 *
 * <p>The jars come from Flink's Maven Central artifacts, which this module's build copies to {@code
 * target/flink/lib} and {@code target/flink/opt} (the system property {@code local-flink.home}
 * names another such directory). Everything binds to loopback; the REST and RPC ports are free
 * ones. {@link #close()} stops the processes.
 */
public final class LocalFlinkCluster implements AutoCloseable {

  private static final Duration START_TIMEOUT = Duration.ofSeconds(120);

  /** Flink's command-line front end, as {@code bin/flink} runs it. */
  private static final String CLI_MAIN = "org.apache.flink.client.cli.CliFrontend";

  private static final List<String> CLI_JVM = List.of("-Xmx256m");
  private static final String CLI_LOG = "flink-client.log";

  /** The module options Flink 2.1's distribution gives every process on Java 17. */
  private static final List<String> JAVA_17_OPTIONS =
      Stream.concat(
              Stream.of(
                      "java.base/sun.net.util",
                      "java.rmi/sun.rmi.registry",
                      "jdk.compiler/com.sun.tools.javac.api",
                      "jdk.compiler/com.sun.tools.javac.file",
                      "jdk.compiler/com.sun.tools.javac.parser",
                      "jdk.compiler/com.sun.tools.javac.tree",
                      "jdk.compiler/com.sun.tools.javac.util",
                      "java.security.jgss/sun.security.krb5")
                  .map(p -> "--add-exports=" + p + "=ALL-UNNAMED"),
              Stream.of(
                      "java.lang",
                      "java.net",
                      "java.io",
                      "java.nio",
                      "sun.nio.ch",
                      "java.lang.reflect",
                      "java.text",
                      "java.time",
                      "java.util",
                      "java.util.concurrent",
                      "java.util.concurrent.atomic",
                      "java.util.concurrent.locks")
                  .map(p -> "--add-opens=java.base/" + p + "=ALL-UNNAMED"))
          .toList();

  private final Path home;
  private final Path distribution;
  private final int restPort;
  private final List<Process> processes = new ArrayList<>();
  private final List<Process> taskManagerProcesses = new ArrayList<>();
  private final HttpClient http = HttpClient.newHttpClient();

  /** Jars on the class path of every process besides Flink's {@code lib/}, as if in it. */
  private final List<Path> libraryJars;

  private LocalFlinkCluster(Path home, Path distribution, int restPort, List<Path> libraryJars) {
    this.home = home;
    this.distribution = distribution;
    this.restPort = restPort;
    this.libraryJars = List.copyOf(libraryJars);
  }

  /**
   * Starts a JobManager and {@code taskManagers} TaskManagers of {@code slots} slots each, and
   * returns once the REST API reports them all.
   *
   * @param home an empty directory for the configuration, logs, checkpoints and savepoints
   * @param configuration further entries of {@code config.yaml}
   */
  public static LocalFlinkCluster start(
      Path home, int taskManagers, int slots, Map<String, String> configuration) throws Exception {
    return start(home, taskManagers, slots, configuration, List.of());
  }

  /**
   * As {@link #start(Path, int, int, Map)}, with {@code libraryJars} on the class path of the
   * JobManager, the TaskManagers and the clients, as jars put into Flink's {@code lib/} are.
   */
  public static LocalFlinkCluster start(
      Path home,
      int taskManagers,
      int slots,
      Map<String, String> configuration,
      List<Path> libraryJars)
      throws Exception {
    LocalFlinkCluster cluster =
        new LocalFlinkCluster(home, distribution(), freePort(), libraryJars);
    // Should the test JVM be ended before close(), its cluster goes with it.
    Runtime.getRuntime()
        .addShutdownHook(new Thread(() -> cluster.processes.forEach(Process::destroyForcibly)));
    cluster.configure(slots, configuration);
    try {
      cluster.startProcesses(taskManagers);
    } catch (Exception e) {
      cluster.close();
      throw e;
    }
    return cluster;
  }

  /** The directory holding {@code lib/} and {@code opt/}. */
  private static Path distribution() {
    String property = System.getProperty("local-flink.home");
    Path directory;
    if (property != null) {
      directory = Paths.get(property);
    } else {
      try {
        // target/classes or target/local-flink-*.jar: the jars are in target/flink.
        Path location =
            Paths.get(
                LocalFlinkCluster.class
                    .getProtectionDomain()
                    .getCodeSource()
                    .getLocation()
                    .toURI());
        directory = location.getParent().resolve("flink");
      } catch (URISyntaxException e) {
        throw new IllegalStateException(e);
      }
    }
    if (!Files.isDirectory(directory.resolve("lib"))) {
      throw new IllegalStateException(
          "no Flink jars in "
              + directory.resolve("lib")
              + "; build the local-flink module (mvn package) or set -Dlocal-flink.home");
    }
    return directory;
  }

  /** The process ids of the TaskManagers, to inspect them ({@code jcmd}). */
  public List<Long> taskManagerPids() {
    return taskManagerProcesses.stream().map(Process::pid).toList();
  }

  /**
   * Runs {@code jcmd} of this JDK against a process of the cluster, for example {@code
   * GC.class_histogram} or {@code Thread.print}, and returns what it printed.
   */
  public String jcmd(long pid, String... command) throws Exception {
    List<String> line = new ArrayList<>();
    line.add(Paths.get(System.getProperty("java.home"), "bin", "jcmd").toString());
    line.add(Long.toString(pid));
    line.addAll(Arrays.asList(command));
    Process process = new ProcessBuilder(line).redirectErrorStream(true).start();
    String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!process.waitFor(2, TimeUnit.MINUTES) || process.exitValue() != 0) {
      throw new IllegalStateException("jcmd " + line + " failed: " + output);
    }
    return output;
  }

  public String restAddress() {
    return "127.0.0.1:" + restPort;
  }

  /** Where the cluster writes savepoints when not told otherwise. */
  public Path savepoints() {
    return home.resolve("data/savepoints");
  }

  public Path logs() {
    return home.resolve("log");
  }

  private Path conf() {
    return home.resolve("conf");
  }

  /** The TaskManagers' own JVM options ({@code env.java.opts.taskmanager}). */
  private String taskManagerOptions = "";

  private void configure(int slots, Map<String, String> extra) throws IOException {
    for (String dir : List.of("conf", "log", "plugins", "data/tmp", "data/savepoints")) {
      Files.createDirectories(home.resolve(dir));
    }
    Map<String, String> config = new java.util.LinkedHashMap<>();
    config.put("env.java.opts.all", String.join(" ", JAVA_17_OPTIONS));
    config.put("jobmanager.bind-host", "127.0.0.1");
    config.put("jobmanager.rpc.address", "127.0.0.1");
    config.put("jobmanager.rpc.port", Integer.toString(freePort()));
    config.put("jobmanager.memory.process.size", "768m");
    config.put("taskmanager.bind-host", "127.0.0.1");
    config.put("taskmanager.host", "127.0.0.1");
    config.put("taskmanager.numberOfTaskSlots", Integer.toString(slots));
    config.put("taskmanager.memory.process.size", "1600m");
    config.put("taskmanager.memory.managed.fraction", "0.1");
    config.put("rest.address", "127.0.0.1");
    config.put("rest.bind-address", "127.0.0.1");
    config.put("rest.port", Integer.toString(restPort));
    config.put("io.tmp.dirs", home.resolve("data/tmp").toString());
    config.put("execution.checkpointing.dir", home.resolve("data/checkpoints").toUri().toString());
    config.put("execution.checkpointing.savepoint-dir", savepoints().toUri().toString());
    config.put("restart-strategy.type", "fixed-delay");
    config.put("restart-strategy.fixed-delay.attempts", "2");
    config.put("restart-strategy.fixed-delay.delay", "1s");
    config.putAll(extra);
    taskManagerOptions = config.getOrDefault("env.java.opts.taskmanager", "");
    StringBuilder yaml = new StringBuilder();
    config.forEach((key, value) -> yaml.append(key).append(": ").append(value).append('\n'));
    Files.writeString(conf().resolve("config.yaml"), yaml.toString(), StandardCharsets.UTF_8);
    try (InputStream log4j =
        LocalFlinkCluster.class.getResourceAsStream("/local-flink/log4j.properties")) {
      Files.copy(log4j, conf().resolve("log4j.properties"));
    }
  }

  /**
   * A directory with a {@code flink} command, as a distribution's {@code bin/} has: Flink's
   * command-line front end against this cluster, for scripts that call {@code flink}.
   */
  public Path bin() {
    return home.resolve("bin");
  }

  private void writeFlinkCommand() throws IOException {
    Files.createDirectories(bin());
    StringBuilder script = new StringBuilder("#!/usr/bin/env bash\n");
    environment()
        .forEach(
            (name, value) ->
                script.append("export ").append(name).append("='").append(value).append("'\n"));
    script.append("exec ");
    for (String part : javaCommand(CLI_JVM, libraryClassPath(), CLI_MAIN, CLI_LOG)) {
      script.append('\'').append(part).append("' ");
    }
    script.append("\"$@\"\n");
    Path flink = bin().resolve("flink");
    Files.writeString(flink, script.toString(), StandardCharsets.UTF_8);
    flink.toFile().setExecutable(true);
  }

  /**
   * {@code java} with JVM options, Flink's Java 17 options, logging to {@code log}, and a class.
   */
  private List<String> javaCommand(
      List<String> jvm, String classPath, String mainClass, String log) {
    List<String> command = new ArrayList<>();
    command.add(java());
    command.addAll(jvm);
    command.addAll(JAVA_17_OPTIONS);
    String config = conf().resolve("log4j.properties").toUri().toString();
    command.add("-Dlog.file=" + logs().resolve(log));
    command.add("-Dlog4j.configuration=" + config);
    command.add("-Dlog4j.configurationFile=" + config);
    command.add("-classpath");
    command.add(classPath);
    command.add(mainClass);
    return command;
  }

  /** The environment Flink's scripts give its processes. */
  private Map<String, String> environment() {
    return Map.of(
        "FLINK_CONF_DIR", conf().toString(),
        "FLINK_PLUGINS_DIR", home.resolve("plugins").toString(),
        "FLINK_LIB_DIR", distribution.resolve("lib").toString());
  }

  private ProcessBuilder processBuilder(List<String> command) {
    ProcessBuilder builder = new ProcessBuilder(command).directory(home.toFile());
    builder.environment().putAll(environment());
    return builder.redirectErrorStream(true);
  }

  private void startProcesses(int taskManagers) throws Exception {
    writeFlinkCommand();
    List<String> jm = resourceParameters("GET_JM_RESOURCE_PARAMS");
    processes.add(
        daemon(
            "jobmanager",
            split(jm.get(0)),
            "org.apache.flink.runtime.entrypoint.StandaloneSessionClusterEntrypoint",
            split(jm.get(1))));
    List<String> tm = resourceParameters("GET_TM_RESOURCE_PARAMS");
    for (int i = 0; i < taskManagers; i++) {
      List<String> jvm = new ArrayList<>(List.of("-XX:+UseG1GC"));
      jvm.addAll(split(tm.get(0)));
      // As taskmanager.sh gives them.
      jvm.addAll(split(taskManagerOptions));
      Process taskManager =
          daemon(
              "taskmanager-" + i,
              jvm,
              "org.apache.flink.runtime.taskexecutor.TaskManagerRunner",
              split(tm.get(1)));
      processes.add(taskManager);
      taskManagerProcesses.add(taskManager);
    }
    awaitTaskManagers(taskManagers);
  }

  /** The JVM options and dynamic properties Flink derives from the configuration's memory. */
  private List<String> resourceParameters(String command) throws Exception {
    Result result =
        run(
            List.of("-Xmx128m"),
            libraryClassPath(),
            "org.apache.flink.runtime.util.bash.BashJavaUtils",
            List.of(command, "--configDir", conf().toString()),
            "bash-java-utils.log",
            Duration.ofMinutes(1));
    List<String> lines = new ArrayList<>();
    for (String line : result.output().split("\n")) {
      if (line.startsWith("BASH_JAVA_UTILS_EXEC_RESULT:")) {
        lines.add(line.substring("BASH_JAVA_UTILS_EXEC_RESULT:".length()).trim());
      }
    }
    if (result.exitCode() != 0 || lines.size() < 2) {
      throw new IllegalStateException(
          "BashJavaUtils " + command + " failed (" + result.exitCode() + "): " + result.output());
    }
    return lines.subList(lines.size() - 2, lines.size());
  }

  private static List<String> split(String options) {
    return options.isBlank() ? List.of() : Arrays.asList(options.trim().split("\\s+"));
  }

  private Process daemon(String name, List<String> jvm, String mainClass, List<String> dynamic)
      throws IOException {
    List<String> command = javaCommand(jvm, libraryClassPath(), mainClass, name + ".log");
    command.add("--configDir");
    command.add(conf().toString());
    command.addAll(dynamic);
    return processBuilder(command).redirectOutput(logs().resolve(name + ".out").toFile()).start();
  }

  private void awaitTaskManagers(int taskManagers) throws Exception {
    long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
    Pattern count = Pattern.compile("\"taskmanagers\"\\s*:\\s*(\\d+)");
    while (System.nanoTime() < deadline) {
      for (Process process : processes) {
        if (!process.isAlive()) {
          throw new IllegalStateException(
              "a Flink process exited with " + process.exitValue() + "; see " + logs());
        }
      }
      try {
        Matcher matcher = count.matcher(rest("/overview"));
        if (matcher.find() && Integer.parseInt(matcher.group(1)) >= taskManagers) {
          return;
        }
      } catch (IOException e) {
        // not up yet
      }
      Thread.sleep(500);
    }
    throw new IllegalStateException(
        "the Flink cluster did not start within " + START_TIMEOUT + "; see " + logs());
  }

  /** GETs a path of the REST API and returns the body. */
  public String rest(String path) throws IOException, InterruptedException {
    HttpResponse<String> response =
        http.send(
            HttpRequest.newBuilder(URI.create("http://" + restAddress() + path))
                .timeout(Duration.ofSeconds(10))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    if (response.statusCode() != 200) {
      throw new IOException("GET " + path + ": " + response.statusCode() + " " + response.body());
    }
    return response.body();
  }

  /** The state of a job as the REST API gives it ({@code RUNNING}, {@code FINISHED}, ...). */
  public String jobState(String jobId) throws IOException, InterruptedException {
    Matcher state = Pattern.compile("\"state\"\\s*:\\s*\"(\\w+)\"").matcher(rest("/jobs/" + jobId));
    return state.find() ? state.group(1) : "UNKNOWN";
  }

  /** Waits until a job is in one of the given states; fails if it ends in another. */
  public void awaitJobState(String jobId, Duration timeout, String... states) throws Exception {
    List<String> wanted = List.of(states);
    long deadline = System.nanoTime() + timeout.toNanos();
    String state = "UNKNOWN";
    while (System.nanoTime() < deadline) {
      state = jobState(jobId);
      if (wanted.contains(state)) {
        return;
      }
      if (List.of("FAILED", "CANCELED", "FINISHED").contains(state)) {
        break;
      }
      Thread.sleep(250);
    }
    throw new IllegalStateException(
        "job " + jobId + " is " + state + ", not " + wanted + "; see " + logs());
  }

  /**
   * Runs Flink's command-line front end ({@code bin/flink}) with these arguments against the
   * cluster, as a process, and returns its exit code and output.
   */
  public Result flink(Duration timeout, String... arguments) throws Exception {
    return run(CLI_JVM, libraryClassPath(), CLI_MAIN, Arrays.asList(arguments), CLI_LOG, timeout);
  }

  /**
   * Runs Flink's SQL client ({@code bin/sql-client.sh}) in embedded mode on a statement file, with
   * the given jars added to its session (its {@code -j}), against the cluster.
   */
  public Result sqlClient(Duration timeout, Path statements, Path... jars) throws Exception {
    Path sqlClientJar = opt("flink-sql-client-");
    List<String> arguments = new ArrayList<>(List.of("-f", statements.toString()));
    for (Path jar : jars) {
      arguments.add("-j");
      arguments.add(jar.toString());
    }
    arguments.add("--jar");
    arguments.add(sqlClientJar.toString());
    String classPath =
        libraryClassPath()
            + java.io.File.pathSeparator
            + String.join(
                java.io.File.pathSeparator,
                sqlClientJar.toString(),
                opt("flink-sql-gateway-").toString(),
                opt("flink-python-").toString());
    return run(
        List.of("-Xmx512m"),
        classPath,
        "org.apache.flink.table.client.SqlClient",
        arguments,
        "sql-client.log",
        timeout);
  }

  private Path opt(String prefix) throws IOException {
    try (Stream<Path> jars = Files.list(distribution.resolve("opt"))) {
      return jars.filter(p -> p.getFileName().toString().startsWith(prefix))
          .findFirst()
          .orElseThrow(() -> new IllegalStateException("no " + prefix + "*.jar in opt/"));
    }
  }

  private Result run(
      List<String> jvm,
      String classPath,
      String mainClass,
      List<String> arguments,
      String log,
      Duration timeout)
      throws Exception {
    List<String> command = javaCommand(jvm, classPath, mainClass, log);
    command.addAll(arguments);
    Process process =
        processBuilder(command).redirectInput(ProcessBuilder.Redirect.from(nullFile())).start();
    byte[] output;
    try (InputStream in = process.getInputStream()) {
      // The output is small; read it to the end (the process ends before that) or time out.
      java.io.ByteArrayOutputStream buffer = new java.io.ByteArrayOutputStream();
      Thread reader =
          new Thread(
              () -> {
                try {
                  in.transferTo(buffer);
                } catch (IOException e) {
                  // the process was killed
                }
              });
      reader.start();
      if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
        process.destroyForcibly().waitFor();
        reader.join(5000);
        throw new IllegalStateException(
            mainClass
                + " "
                + arguments
                + " did not end within "
                + timeout
                + ": "
                + buffer.toString(StandardCharsets.UTF_8));
      }
      reader.join(10_000);
      output = buffer.toByteArray();
    }
    return new Result(process.exitValue(), new String(output, StandardCharsets.UTF_8));
  }

  private static java.io.File nullFile() {
    return new java.io.File(
        System.getProperty("os.name").startsWith("Windows") ? "NUL" : "/dev/null");
  }

  private String libraryClassPath() {
    try (Stream<Path> jars = Files.list(distribution.resolve("lib"))) {
      return Stream.concat(
              jars.filter(p -> p.toString().endsWith(".jar")).sorted(), libraryJars.stream())
          .map(Path::toString)
          .collect(Collectors.joining(java.io.File.pathSeparator));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static String java() {
    return Paths.get(System.getProperty("java.home"), "bin", "java").toString();
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }

  /** The exit code and output (standard output and error) of a command-line tool. */
  public record Result(int exitCode, String output) {

    /** The first group of the first match of {@code regex} in the output. */
    public String find(String regex) {
      Matcher matcher = Pattern.compile(regex).matcher(output);
      if (!matcher.find()) {
        throw new IllegalStateException("no match of " + regex + " in: " + output);
      }
      return matcher.group(1);
    }
  }

  @Override
  public void close() throws Exception {
    // TaskManagers first, then the JobManager: as stop-cluster.sh does.
    for (int i = processes.size() - 1; i >= 0; i--) {
      Process process = processes.get(i);
      process.destroy();
      if (!process.waitFor(30, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor();
      }
    }
    processes.clear();
    taskManagerProcesses.clear();
  }
}
