package io.icebergcdc.bench;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import org.apache.flink.util.TimeUtils;

/**
 * The {@code --name value} and {@code --flag} arguments of a benchmark's command line; a name the
 * command does not know fails with a message naming it.
 */
final class BenchOptions {

  private final Map<String, String> values;

  private BenchOptions(Map<String, String> values) {
    this.values = values;
  }

  static BenchOptions parse(String[] args, Set<String> known) {
    return parse(args, known, Set.of());
  }

  /** As {@link #parse(String[], Set)}; each option of {@code valued} fails without a value. */
  static BenchOptions parse(String[] args, Set<String> known, Set<String> valued) {
    Map<String, String> values = new LinkedHashMap<>();
    for (int i = 0; i < args.length; i++) {
      String name = args[i].replaceFirst("^--", "");
      if (!args[i].startsWith("--") || !known.contains(name)) {
        throw new IllegalArgumentException(
            "unknown argument "
                + args[i]
                + "; known: --"
                + String.join(", --", new java.util.TreeSet<>(known)));
      }
      boolean flag = i + 1 == args.length || args[i + 1].startsWith("--");
      if (flag && valued.contains(name)) {
        throw new IllegalArgumentException(args[i] + " needs a value");
      }
      values.put(name, flag ? "true" : args[++i]);
    }
    return new BenchOptions(values);
  }

  String get(String name, String orElse) {
    return values.getOrDefault(name, orElse);
  }

  String get(String name) {
    return values.get(name);
  }

  long getLong(String name, long orElse) {
    try {
      return values.containsKey(name) ? Long.parseLong(values.get(name)) : orElse;
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          "--" + name + " takes a whole number, not " + values.get(name), e);
    }
  }

  /** The value of {@code name}, one of {@code values} (in any case), else {@code orElse}. */
  String oneOf(String name, String orElse, String... values) {
    String value = get(name, orElse);
    for (String known : values) {
      if (known.equalsIgnoreCase(value)) {
        return known;
      }
    }
    throw new IllegalArgumentException(
        "--" + name + " is one of " + String.join(", ", values) + ", not " + value);
  }

  boolean getBoolean(String name, boolean orElse) {
    return Boolean.parseBoolean(oneOf(name, Boolean.toString(orElse), "true", "false"));
  }

  java.time.Duration duration(String name, String orElse) {
    String value = get(name, orElse);
    try {
      java.time.Duration duration = TimeUtils.parseDuration(value);
      // In milliseconds, as Flink takes it.
      duration.toMillis();
      return duration;
    } catch (IllegalArgumentException | ArithmeticException e) {
      throw new IllegalArgumentException(
          "--" + name + " takes a duration such as 2s, not " + value, e);
    }
  }

  /** {@code --checkpoint-interval}, as {@link #duration}, at least Flink's least, 10 ms. */
  java.time.Duration checkpointInterval(String orElse) {
    java.time.Duration interval = duration("checkpoint-interval", orElse);
    if (interval.toMillis() < 10) {
      throw new IllegalArgumentException(
          "--checkpoint-interval is 10ms at least, not " + get("checkpoint-interval"));
    }
    return interval;
  }

  int getInt(String name, int orElse) {
    long value = getLong(name, orElse);
    if (value != (int) value) {
      throw new IllegalArgumentException("--" + name + " is out of range: " + value);
    }
    return (int) value;
  }

  boolean has(String name) {
    return values.containsKey(name);
  }

  long millis(String name, String orElse) {
    return TimeUtils.parseDuration(get(name, orElse)).toMillis();
  }
}
