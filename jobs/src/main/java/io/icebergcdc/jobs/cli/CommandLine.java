package io.icebergcdc.jobs.cli;

import io.icebergcdc.cdc.MalformedChangeException;
import io.icebergcdc.cdc.RefusedSourceException;
import io.icebergcdc.commit.CommitException;
import io.icebergcdc.dedup.AmbiguousChangeException;
import io.icebergcdc.jobs.definition.JobDefinitionException;
import java.io.PrintStream;
import java.util.List;
import java.util.Set;

/** Parses a command line, runs its command and turns what went wrong into one line and a status. */
public final class CommandLine {

  private CommandLine() {}

  private static final String USAGE =
      String.join(
          "\n",
          "usage: <command> [flags]; <command> --help lists a command's flags",
          "  apply --source file|postgres|mysql|mariadb|kafka ...  apply a changelog to Iceberg"
              + " tables",
          "  inspect --table <db.table> ...                         show a table's snapshots and"
              + " files",
          "  add-files --table <db.table> --path <dir|uri> ...      add existing Parquet files"
              + " to a table",
          "  demo [--changes N] [--keys N] ...                      the default: generate,"
              + " apply and check a changelog",
          "Every command takes the catalog flags --catalog-type hadoop|rest|jdbc|hive,"
              + " --catalog-impl <class>,",
          "--catalog-name <name>, --catalog-uri, --warehouse, --catalog-property key=value and"
              + " --catalog-properties-file <file>.");

  private static final Set<String> HELP = Set.of("--help", "-h", "help");

  /** Runs a command; returns the process exit status. */
  public static int run(String[] args, PrintStream out, PrintStream err) {
    // The demo is the default command, also when only its flags are given.
    boolean implicitDemo =
        args.length == 0 || (args[0].startsWith("--") && !HELP.contains(args[0]));
    String command = implicitDemo ? "demo" : args[0];
    int from = implicitDemo ? 0 : 1;
    try {
      switch (command) {
        case "apply":
          if (wantsHelp(args, from)) {
            out.print(ApplyCommand.help());
            return 0;
          }
          return ApplyCommand.run(Arguments.parse("apply", args, from, ApplyCommand.flags()), out);
        case "inspect":
          if (wantsHelp(args, from)) {
            out.print(InspectCommand.help());
            return 0;
          }
          return InspectCommand.run(
              Arguments.parse("inspect", args, from, InspectCommand.flags()), out);
        case "add-files":
          if (wantsHelp(args, from)) {
            out.print(AddFilesCommand.help());
            return 0;
          }
          return AddFilesCommand.run(
              Arguments.parse("add-files", args, from, AddFilesCommand.flags()), out);
        case "demo":
          if (wantsHelp(args, from)) {
            out.print(DemoCommand.help());
            return 0;
          }
          DemoCommand.refuseOnACluster();
          return DemoCommand.run(Arguments.parse("demo", args, from, DemoCommand.flags()), out);
        case "help":
        case "--help":
        case "-h":
          out.println(USAGE);
          return 0;
        default:
          err.println(
              "error: unknown command '"
                  + command
                  + "'; the commands are apply, inspect, add-files and demo (see --help)");
          return 2;
      }
    } catch (Arguments.UsageException e) {
      err.println("error: " + e.getMessage());
      return 2;
    } catch (Exception e) {
      return failed(command, e, err);
    }
  }

  /**
   * Tells what ended a command, and its status: 2 for a definition that does not fit what the job
   * met before it changed anything, 1 for a failure, and for a source the running job refused (a
   * table or topic that appeared, whose cause may be such a definition error: the job ran).
   */
  static int failed(String command, Exception e, PrintStream err) {
    Throwable refused = find(e, RefusedSourceException.class);
    if (refused != null) {
      err.println("error: " + refused.getMessage());
      return 1;
    }
    Throwable definition = find(e, JobDefinitionException.class);
    if (definition != null) {
      err.println("error: " + command + ": " + definition.getMessage());
      return 2;
    }
    err.println("error: " + rootMessage(e));
    return 1;
  }

  private static boolean wantsHelp(String[] args, int from) {
    // "help" asks for help only as the word after the command, and -h only where a flag could be:
    // as a flag's value (a table, a file or a topic named help, a password variable -h) either is
    // the value.
    if (args.length > from && args[from].equals("help")) {
      return true;
    }
    for (int i = from; i < args.length; i++) {
      String arg = args[i];
      if (arg.equals("--help") || arg.equals("-h")) {
        return true;
      }
      if (arg.startsWith("--") && !arg.contains("=") && i + 1 < args.length) {
        // Every flag takes a value: the next argument, unless it is a flag.
        if (!args[i + 1].startsWith("--")) {
          i++;
        }
      }
    }
    return false;
  }

  private static Throwable find(Throwable e, Class<? extends Throwable> type) {
    // Also where the failure reached the client serialized.
    return io.icebergcdc.jobs.pipeline.JobRunner.cause(e, type);
  }

  /**
   * The message worth one line: that of the first exception in the cause chain that the applier or
   * an argument check raised, else that of the deepest cause.
   */
  static String rootMessage(Throwable e) {
    String deepest = e.toString();
    for (Throwable cause = e; cause != null; cause = cause.getCause()) {
      for (Class<?> type : LEADING) {
        if (type.isInstance(cause)) {
          return cause.getMessage();
        }
      }
      String message = cause.getMessage();
      if (message == null) {
        continue;
      }
      // A wrapper whose message holds its cause's and adds to it (the database it could not reach,
      // say) says more than any cause below it.
      if (addsTo(message, cause.getCause())) {
        return message;
      }
      deepest = message;
    }
    return deepest;
  }

  /**
   * Whether {@code message} is its cause's message with what the wrapper knew before it, as {@code
   * "cannot connect to ...: " + cause.getMessage()}.
   */
  private static boolean addsTo(String message, Throwable cause) {
    String inner = cause == null ? null : cause.getMessage();
    return inner != null
        && !inner.isBlank()
        && message.endsWith(": " + inner)
        && !message.equals(cause.toString());
  }

  private static final List<Class<?>> LEADING =
      List.of(
          MalformedChangeException.class,
          AmbiguousChangeException.class,
          CommitException.class,
          io.icebergcdc.commit.ReplacedTableException.class,
          IllegalArgumentException.class);
}
