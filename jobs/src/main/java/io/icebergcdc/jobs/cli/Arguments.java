package io.icebergcdc.jobs.cli;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The {@code --name value} arguments of a command. Every name must be one of the command's {@link
 * Flag}s, and every lookup that fails names the flag, what it takes, and the value given.
 */
final class Arguments {

  private final String command;
  private final Map<String, List<String>> values;
  private final Set<String> used = new HashSet<>();

  private Arguments(String command, Map<String, List<String>> values) {
    this.command = command;
    this.values = values;
  }

  /**
   * Parses {@code args} from index {@code from}.
   *
   * @param flags the flags the command knows; only {@link Flag#repeatable()} ones may be repeated
   */
  static Arguments parse(String command, String[] args, int from, List<Flag> flags) {
    Map<String, Flag> known = new LinkedHashMap<>();
    flags.forEach(f -> known.put(f.name(), f));
    Map<String, List<String>> values = new LinkedHashMap<>();
    for (int i = from; i < args.length; i++) {
      String arg = args[i];
      if (!arg.startsWith("--") || arg.length() == 2) {
        throw new UsageException(
            command + ": unexpected argument '" + arg + "' (flags start with --; see --help)");
      }
      String name = arg.substring(2);
      String value = null;
      int eq = name.indexOf('=');
      if (eq >= 0) {
        value = name.substring(eq + 1);
        name = name.substring(0, eq);
      }
      Flag flag = known.get(name);
      if (flag == null) {
        throw new UsageException(
            command
                + ": unknown flag --"
                + name
                + suggestion(name, known.keySet())
                + "; see --help");
      }
      if (value == null) {
        if (i + 1 < args.length && !args[i + 1].startsWith("--")) {
          value = args[++i];
        } else {
          throw new UsageException(
              command + ": --" + name + " needs a value (" + flag.value() + ")");
        }
      }
      if (value.isBlank()) {
        // An unset variable ("--warehouse $W"): taken as the current directory, or as "on" for a
        // dead-letter path, it would quietly mean something the user did not write.
        throw new UsageException(
            command
                + ": --"
                + name
                + " is given an empty value; give "
                + flag.value()
                + " or leave the flag out");
      }
      List<String> given = values.computeIfAbsent(name, n -> new ArrayList<>());
      if (!given.isEmpty() && !flag.repeatable()) {
        throw new UsageException(command + ": --" + name + " is given twice");
      }
      given.add(value);
    }
    return new Arguments(command, values);
  }

  /** A known flag that the unknown one resembles, as {@code " (did you mean --x?)"}, or "". */
  private static String suggestion(String name, Set<String> known) {
    for (String candidate : known) {
      if (candidate.startsWith(name) || name.startsWith(candidate) || candidate.endsWith(name)) {
        return " (did you mean --" + candidate + "?)";
      }
    }
    return "";
  }

  String command() {
    return command;
  }

  boolean has(String name) {
    return values.containsKey(name);
  }

  String required(String name) {
    used.add(name);
    String value = single(name);
    if (value == null || value.isBlank()) {
      throw new UsageException(command + ": --" + name + " is required");
    }
    return value;
  }

  /** The value given for a flag, or null, without counting the flag as used. */
  String peek(String name) {
    return single(name);
  }

  String optional(String name, String fallback) {
    used.add(name);
    String value = single(name);
    return value == null ? fallback : value;
  }

  /** Every value of a repeatable flag, in order. */
  List<String> all(String name) {
    used.add(name);
    return values.getOrDefault(name, List.of());
  }

  private String single(String name) {
    List<String> given = values.get(name);
    return given == null ? null : given.get(0);
  }

  int intValue(String name, int fallback) {
    String value = optional(name, null);
    if (value == null) {
      return fallback;
    }
    try {
      return Integer.parseInt(value.trim());
    } catch (NumberFormatException e) {
      throw invalid(name, value, "a whole number");
    }
  }

  /** A whole number of 64 bits; {@code fallback} when the flag is not given. */
  long longValue(String name, long fallback) {
    String value = optional(name, null);
    if (value == null) {
      return fallback;
    }
    try {
      return Long.parseLong(value.trim());
    } catch (NumberFormatException e) {
      throw invalid(name, value, "a whole number");
    }
  }

  /**
   * A size with its unit ({@code 64mb}, {@code 1gb}); 0 where {@code zeroAllowed}. A bare number is
   * refused: Flink would read {@code 64} as 64 bytes.
   */
  org.apache.flink.configuration.MemorySize size(String name, String example, boolean zeroAllowed) {
    String value = optional(name, null);
    if (value == null) {
      return null;
    }
    String expected = "a size with its unit, such as " + example + (zeroAllowed ? ", or 0" : "");
    String trimmed = value.trim();
    if (trimmed.matches("\\d+") && !(zeroAllowed && Long.parseLong(trimmed) == 0)) {
      throw invalid(name, value, expected);
    }
    try {
      return org.apache.flink.configuration.MemorySize.parse(trimmed);
    } catch (IllegalArgumentException e) {
      throw invalid(name, value, expected);
    }
  }

  /** A whole number from {@code min} on. */
  int intValue(String name, int fallback, int min) {
    int value = intValue(name, fallback);
    if (value < min) {
      throw invalid(name, Integer.toString(value), "a whole number of at least " + min);
    }
    return value;
  }

  /** One of the given values (in any case), lower-cased. */
  String choice(String name, String fallback, List<String> choices) {
    String value = optional(name, fallback);
    if (value == null) {
      return null;
    }
    String lower = value.trim().toLowerCase(Locale.ROOT);
    if (!choices.contains(lower)) {
      throw invalid(
          name,
          value,
          String.join(", ", choices.subList(0, choices.size() - 1))
              + (choices.size() > 1 ? " or " : "")
              + choices.get(choices.size() - 1));
    }
    return lower;
  }

  /** A constant of an enum, given in any case with - or _. */
  <E extends Enum<E>> E enumValue(String name, Class<E> type) {
    List<String> choices =
        Arrays.stream(type.getEnumConstants())
            .map(c -> c.name().toLowerCase(Locale.ROOT))
            .collect(Collectors.toList());
    String value = choice(name, null, choices);
    return value == null ? null : Enum.valueOf(type, value.toUpperCase(Locale.ROOT));
  }

  Boolean bool(String name) {
    String value = choice(name, null, List.of("true", "false"));
    return value == null ? null : Boolean.valueOf(value);
  }

  Duration duration(String name, Duration fallback) {
    String value = optional(name, null);
    if (value == null) {
      return fallback;
    }
    // Flink reads a number without a unit as milliseconds: --checkpoint-interval 10 would commit
    // every 10 ms.
    if (value.trim().matches("[0-9]+") && !value.trim().matches("0+")) {
      throw invalid(name, value, "a duration with its unit, such as 10s, 5min or 7d");
    }
    try {
      return org.apache.flink.util.TimeUtils.parseDuration(value.trim());
    } catch (IllegalArgumentException e) {
      throw invalid(name, value, "a duration such as 10s, 5min or 7d");
    }
  }

  /** A comma-separated list, required. */
  List<String> list(String name) {
    return split(required(name));
  }

  /** A comma-separated list, or empty when the flag is not given. */
  List<String> optionalList(String name) {
    String value = optional(name, null);
    return value == null ? List.of() : split(value);
  }

  /**
   * A comma-separated list of regular expressions, or empty when the flag is not given: a comma
   * within an expression is written {@code \,} (as in Debezium's lists), which stands for a comma,
   * whether it is a literal one or part of a quantifier such as {@code {1,3}}.
   */
  List<String> optionalPatterns(String name) {
    String value = optional(name, null);
    if (value == null) {
      return List.of();
    }
    if (value.replace("\\,", ",").replace(",", "").isBlank()) {
      // Not the default: an empty --tables "$T" would otherwise capture every table.
      throw invalid(name, value, "one or more patterns; leave the flag out for the default");
    }
    return splitEscaped(value);
  }

  /**
   * A comma-separated list whose items may hold a comma written {@code \,}, or empty when the flag
   * is not given; other backslashes are the items' own.
   */
  List<String> optionalEscapedList(String name) {
    String value = optional(name, null);
    return value == null ? List.of() : splitEscaped(value);
  }

  private static List<String> splitEscaped(String value) {
    List<String> items = new java.util.ArrayList<>();
    StringBuilder item = new StringBuilder();
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      if (c == '\\' && i + 1 < value.length()) {
        char next = value.charAt(++i);
        if (next != ',') {
          item.append(c);
        }
        item.append(next);
      } else if (c == ',') {
        items.add(item.toString());
        item.setLength(0);
      } else {
        item.append(c);
      }
    }
    items.add(item.toString());
    return items.stream().map(String::trim).filter(s -> !s.isEmpty()).toList();
  }

  private static List<String> split(String value) {
    return Arrays.stream(value.split(",")).map(String::trim).filter(s -> !s.isEmpty()).toList();
  }

  /** An argument error naming the flag, the value given and what the flag takes. */
  UsageException invalid(String name, String value, String expected) {
    return new UsageException(
        command + ": --" + name + " must be " + expected + ", not '" + value + "'");
  }

  /**
   * Fails on flags that were given but that the command never read: flags of another source, say,
   * which would otherwise be ignored without a word.
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
