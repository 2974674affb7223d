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
    Map<String, String> values = new LinkedHashMap<>();
    for (int i = 0; i < args.length; i++) {
      String name = args[i].replaceFirst("^--", "");
      if (!known.contains(name)) {
        throw new IllegalArgumentException(
            "unknown argument " + args[i] + "; known: --" + String.join(", --", known));
      }
      boolean flag = i + 1 == args.length || args[i + 1].startsWith("--");
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
    return values.containsKey(name) ? Long.parseLong(values.get(name)) : orElse;
  }

  boolean has(String name) {
    return values.containsKey(name);
  }

  long millis(String name, String orElse) {
    return TimeUtils.parseDuration(get(name, orElse)).toMillis();
  }
}
