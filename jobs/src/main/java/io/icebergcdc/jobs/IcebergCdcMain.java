package io.icebergcdc.jobs;

import io.icebergcdc.jobs.cli.CommandLine;

/**
 * The job jar's entry point: {@code apply}, {@code inspect} and {@code demo} (the default), each
 * with {@code --help}. Errors in arguments print one line and exit with status 2; a job that fails
 * prints one line and exits with status 1.
 */
public final class IcebergCdcMain {

  private IcebergCdcMain() {}

  public static void main(String[] args) {
    int status = CommandLine.run(args, System.out, System.err);
    if (status != 0) {
      System.exit(status);
    }
  }
}
