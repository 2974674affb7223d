package io.icebergcdc.jobs.cli;

import io.icebergcdc.sink.CatalogDefinition;
import java.util.List;
import java.util.Locale;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.description.BlockElement;
import org.apache.flink.configuration.description.TextElement;

/**
 * One flag of a command: its name, what its value looks like, what it does and its default, for
 * parsing and for {@code --help}.
 *
 * @param name the name without {@code --}
 * @param value what the value looks like, such as {@code <dir>} or {@code position|equality}
 * @param description what the flag does
 * @param defaultValue its default as text, or null when it has none
 * @param repeatable whether it may be given more than once
 */
record Flag(
    String name, String value, String description, String defaultValue, boolean repeatable) {

  static Flag of(String name, String value, String description) {
    return new Flag(name, value, description, null, false);
  }

  static Flag of(String name, String value, String description, Object defaultValue) {
    return new Flag(name, value, description, String.valueOf(defaultValue), false);
  }

  /** The flag without a fixed default: its description says what decides when it is unset. */
  Flag defaultInDescription() {
    return new Flag(name, value, description, null, repeatable);
  }

  Flag repeated() {
    return new Flag(name, value, description, defaultValue, true);
  }

  /**
   * The flag of a sink, dedup or catalog option: the key without its namespace, dots made dashes
   * ({@code sink.compaction.deleted-ratio} is {@code --compaction-deleted-ratio}, {@code
   * dedup.tombstone-ttl} is {@code --tombstone-ttl}), but for the maintenance options, which keep
   * theirs ({@code maintenance.interval} is {@code --maintenance-interval}); a catalog's {@code
   * uri} is {@code --catalog-uri}.
   */
  static Flag of(ConfigOption<?> option, String value) {
    Object fallback = option.hasDefaultValue() ? option.defaultValue() : null;
    if (fallback instanceof Enum<?> constant) {
      fallback = constant.name().toLowerCase(Locale.ROOT);
    } else if (fallback instanceof java.time.Duration duration) {
      fallback = org.apache.flink.util.TimeUtils.formatWithHighestUnit(duration).replace(" ", "");
    }
    return new Flag(
        flagName(option.key()),
        value,
        text(option),
        fallback == null ? null : String.valueOf(fallback),
        false);
  }

  static String flagName(String key) {
    if (key.equals(CatalogDefinition.URI.key())) {
      return "catalog-uri";
    }
    if (key.startsWith("sink.") || key.startsWith("dedup.")) {
      return key.substring(key.indexOf('.') + 1).replace('.', '-');
    }
    if (key.startsWith("maintenance.")) {
      return key.replace('.', '-');
    }
    return key;
  }

  private static String text(ConfigOption<?> option) {
    StringBuilder text = new StringBuilder();
    for (BlockElement block : option.description().getBlocks()) {
      if (block instanceof TextElement element) {
        text.append(element.getFormat());
      }
    }
    return text.toString();
  }

  /** The flags of a section of {@code --help}, as lines wrapped to 100 columns. */
  static void describe(StringBuilder out, String heading, List<Flag> flags) {
    out.append('\n').append(heading).append(":\n");
    for (Flag flag : flags) {
      String head = "  --" + flag.name() + " " + flag.value();
      String body =
          flag.description()
              + (flag.defaultValue() == null ? "" : " Default: " + flag.defaultValue() + ".")
              + (flag.repeatable() ? " May be repeated." : "");
      out.append(head).append('\n');
      wrap(out, body, "      ", 100);
    }
  }

  private static void wrap(StringBuilder out, String text, String indent, int width) {
    StringBuilder line = new StringBuilder(indent);
    for (String word : text.split("\\s+")) {
      if (line.length() + word.length() + 1 > width && line.length() > indent.length()) {
        out.append(line.toString().stripTrailing()).append('\n');
        line = new StringBuilder(indent);
      }
      line.append(word).append(' ');
    }
    out.append(line.toString().stripTrailing()).append('\n');
  }
}
