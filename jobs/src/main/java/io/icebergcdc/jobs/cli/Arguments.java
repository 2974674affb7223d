package io.icebergcdc.jobs;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The {@code --name value} arguments of a command. Every name must be one the command knows, and
 * every lookup that fails says which argument is wrong.
 */
final class Arguments {

  private final String command;
  private final Map<String, String> values;
  private final Set<String> used = new HashSet<>();

  private Arguments(String command, Map<String, String> values) {
    this.command = command;
    this.values = values;
  }

  static Arguments parse(String command, String[] args, int from, Set<String> known) {
    Map<String, String> values = new LinkedHashMap<>();
    for (int i = from; i < args.length; i++) {
      String arg = args[i];
      if (!arg.startsWith("--") || arg.length() == 2) {
        throw new UsageException(command + ": unexpected argument '" + arg + "'");
      }
      String name = arg.substring(2);
      String value;
      int eq = name.indexOf('=');
      if (eq >= 0) {
        value = name.substring(eq + 1);
        name = name.substring(0, eq);
      } else if (i + 1 < args.length && !args[i + 1].startsWith("--")) {
        value = args[++i];
      } else {
        throw new UsageException(command + ": --" + name + " needs a value");
      }
      if (!known.contains(name)) {
        List<String> sorted = new ArrayList<>(known);
        sorted.sort(null);
        throw new UsageException(
            command
                + ": unknown option --"
                + name
                + " (known: --"
                + String.join(", --", sorted)
                + ")");
      }
      if (values.put(name, value) != null) {
        throw new UsageException(command + ": --" + name + " is given twice");
      }
    }
    return new Arguments(command, values);
  }

  String required(String name) {
    used.add(name);
    String value = values.get(name);
    if (value == null || value.isBlank()) {
      throw new UsageException(command + ": --" + name + " is required");
    }
    return value;
  }

  /** The value given for an option, or null, without counting the option as used. */
  String peek(String name) {
    return values.get(name);
  }

  String optional(String name, String fallback) {
    used.add(name);
    return values.getOrDefault(name, fallback);
  }

  int intValue(String name, int fallback) {
    used.add(name);
    String value = values.get(name);
    if (value == null) {
      return fallback;
    }
    try {
      return Integer.parseInt(value.trim());
    } catch (NumberFormatException e) {
      throw new UsageException(
          command + ": --" + name + " must be a whole number, not '" + value + "'");
    }
  }

  Duration duration(String name, Duration fallback) {
    used.add(name);
    String value = values.get(name);
    if (value == null) {
      return fallback;
    }
    try {
      return org.apache.flink.util.TimeUtils.parseDuration(value.trim());
    } catch (IllegalArgumentException e) {
      throw new UsageException(
          command + ": --" + name + " must be a duration such as 10s or 1min, not '" + value + "'");
    }
  }

  List<String> list(String name) {
    return Arrays.stream(required(name).split(","))
        .map(String::trim)
        .filter(s -> !s.isEmpty())
        .toList();
  }

  /**
   * Fails on options that were given but that the command never read: options of another source,
   * say, which would otherwise be ignored without a word.
   *
   * @param context what the command was doing, such as {@code apply --source postgres}
   */
  void rejectUnused(String context) {
    List<String> unused = new ArrayList<>();
    for (String name : values.keySet()) {
      if (!used.contains(name)) {
        unused.add("--" + name);
      }
    }
    if (!unused.isEmpty()) {
      throw new UsageException(
          context
              + ": "
              + String.join(", ", unused)
              + (unused.size() == 1 ? " does" : " do")
              + " not apply here");
    }
  }

  /** An argument error: the command prints the message and exits with status 2. */
  static final class UsageException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    UsageException(String message) {
      super(message);
    }
  }
}
