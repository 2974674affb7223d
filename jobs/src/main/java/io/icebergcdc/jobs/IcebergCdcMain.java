package io.icebergcdc.jobs;

import io.icebergcdc.jobs.cli.CommandLine;
import io.icebergcdc.jobs.pipeline.RuntimeTranslator;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.apache.flink.configuration.ReadableConfig;

/**
 * The job jar's entry point: {@code apply}, {@code inspect} and {@code demo} (the default), each
 * with {@code --help}. Errors in arguments print one line and exit with status 2; a job that fails
 * prints one line and exits with status 1.
 *
 * <p>Run inside a JobManager (Flink's application mode, or a jar submitted through its REST API or
 * web UI), it does not exit the process, which is the JobManager's and may run other jobs: a
 * failure is thrown instead, with the line it printed, and Flink reports the program as failed.
 */
public final class IcebergCdcMain {

  private IcebergCdcMain() {}

  public static void main(String[] args) {
    if (!runsInJobManager(RuntimeTranslator.clusterConfiguration().orElse(null))) {
      int status = CommandLine.run(args, System.out, System.err);
      if (status != 0) {
        System.exit(status);
      }
      return;
    }
    // What the command prints to stderr: its error lines, at its end.
    ByteArrayOutputStream printed = new ByteArrayOutputStream();
    int status =
        CommandLine.run(args, System.out, new PrintStream(printed, true, StandardCharsets.UTF_8));
    System.err.print(printed.toString(StandardCharsets.UTF_8));
    if (status != 0) {
      throw new ProgramFailedException(status, printed.toString(StandardCharsets.UTF_8).strip());
    }
  }

  /** Whether the program runs inside a JobManager, where exiting would end the JobManager. */
  static boolean runsInJobManager(ReadableConfig flink) {
    return RuntimeTranslator.runsInJobManager(flink);
  }

  /** The command's failure where it cannot exit: its status and the line it printed. */
  static final class ProgramFailedException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    ProgramFailedException(int status, String printed) {
      super("iceberg-cdc ended with status " + status + (printed.isEmpty() ? "" : ": " + printed));
    }
  }
}
