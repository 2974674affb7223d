package io.icebergcdc.sink;

import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.apache.iceberg.TableProperties;

/**
 * Checks the table properties that the writers honour, when a write is planned: a key under {@code
 * write.parquet.} or {@code write.target-} that is none of them fails, naming it (a misspelt key
 * would otherwise be ignored without a word); the codec must be one Parquet has; a compression
 * level must fit its codec (snappy, lz4, lz4_raw and uncompressed take none); sizes and row limits
 * must be positive; the distribution mode must be none or hash. Other properties are left alone.
 */
public final class WriteProperties {

  static final Set<String> SIZES =
      Set.of(
          TableProperties.WRITE_TARGET_FILE_SIZE_BYTES,
          TableProperties.PARQUET_ROW_GROUP_SIZE_BYTES,
          TableProperties.PARQUET_PAGE_SIZE_BYTES,
          TableProperties.PARQUET_PAGE_ROW_LIMIT,
          TableProperties.PARQUET_DICT_SIZE_BYTES);

  /** The content-defined chunking keys of the loading guides, checked here. */
  static final String CDC_PREFIX = "write.parquet.content-defined-chunking.";

  static final String CDC_ENABLED = CDC_PREFIX + "enabled";
  static final String CDC_MIN = CDC_PREFIX + "min-chunk-size";
  static final String CDC_MAX = CDC_PREFIX + "max-chunk-size";
  static final String CDC_NORM_LEVEL = CDC_PREFIX + "norm-level";

  static final Set<String> KNOWN =
      Set.of(
          CDC_ENABLED,
          CDC_MIN,
          CDC_MAX,
          CDC_NORM_LEVEL,
          TableProperties.WRITE_TARGET_FILE_SIZE_BYTES,
          TableProperties.PARQUET_COMPRESSION,
          TableProperties.PARQUET_COMPRESSION_LEVEL,
          TableProperties.PARQUET_ROW_GROUP_SIZE_BYTES,
          TableProperties.PARQUET_PAGE_SIZE_BYTES,
          TableProperties.PARQUET_PAGE_ROW_LIMIT,
          TableProperties.PARQUET_DICT_SIZE_BYTES,
          TableProperties.PARQUET_PAGE_VERSION,
          TableProperties.PARQUET_ROW_GROUP_CHECK_MIN_RECORD_COUNT,
          TableProperties.PARQUET_ROW_GROUP_CHECK_MAX_RECORD_COUNT,
          TableProperties.PARQUET_BLOOM_FILTER_MAX_BYTES,
          TableProperties.PARQUET_SHRED_VARIANTS,
          TableProperties.PARQUET_VARIANT_BUFFER_SIZE,
          TableProperties.WRITE_DISTRIBUTION_MODE);

  /**
   * The per-column Parquet properties of Iceberg's writers (bloom filters, column statistics),
   * followed by a column's name: the writers are Iceberg's, which honour them.
   */
  static final List<String> KNOWN_PREFIXES =
      List.of(
          TableProperties.PARQUET_BLOOM_FILTER_COLUMN_ENABLED_PREFIX,
          TableProperties.PARQUET_BLOOM_FILTER_COLUMN_FPP_PREFIX,
          TableProperties.PARQUET_BLOOM_FILTER_COLUMN_NDV_PREFIX,
          TableProperties.PARQUET_COLUMN_STATS_ENABLED_PREFIX);

  /** The short names a write may use for the most common properties. */
  public static final Map<String, String> ALIASES =
      Map.of(
          "compression", TableProperties.PARQUET_COMPRESSION,
          "compression-level", TableProperties.PARQUET_COMPRESSION_LEVEL,
          "target-file-size-bytes", TableProperties.WRITE_TARGET_FILE_SIZE_BYTES);

  private WriteProperties() {}

  /**
   * The properties one write uses: the table's, overridden by the write's own (full keys or their
   * {@link #ALIASES}), checked with {@link #validate}. The table's properties are not changed. A
   * write that changes the codec without giving a level drops a level the table has, which was
   * meant for the table's codec.
   *
   * @throws IllegalArgumentException if an alias and its full key disagree, or the result is
   *     invalid
   */
  public static Map<String, String> effective(
      String table, Map<String, String> tableProperties, Map<String, String> overrides) {
    Map<String, String> given = new java.util.HashMap<>();
    for (Map.Entry<String, String> override : overrides.entrySet()) {
      String key = ALIASES.getOrDefault(override.getKey(), override.getKey());
      String previous = given.put(key, override.getValue());
      if (previous != null && !previous.equals(override.getValue())) {
        throw new IllegalArgumentException(
            "table "
                + table
                + ": write property '"
                + key
                + "' is given twice, as '"
                + previous
                + "' and '"
                + override.getValue()
                + "' (an alias and its full key must agree; Flink hands a connector table's hints"
                + " merged into its WITH clause, so a hint that overrides the WITH clause must use"
                + " the key the WITH clause uses)");
      }
    }
    Map<String, String> result = new java.util.HashMap<>(tableProperties);
    String codec = given.get(TableProperties.PARQUET_COMPRESSION);
    if (codec != null
        && !given.containsKey(TableProperties.PARQUET_COMPRESSION_LEVEL)
        && !codec.equalsIgnoreCase(
            tableProperties.getOrDefault(
                TableProperties.PARQUET_COMPRESSION,
                TableProperties.PARQUET_COMPRESSION_DEFAULT))) {
      result.remove(TableProperties.PARQUET_COMPRESSION_LEVEL);
    }
    result.putAll(given);
    validate(table, result);
    return result;
  }

  /**
   * The content-defined chunking keys: sizes positive, the maximum above the minimum, a whole
   * normalization level; {@code enabled = true} is refused, as the Parquet writer Iceberg 1.11 uses
   * (parquet-java 1.17) cannot cut pages by content yet: a table asking for it would otherwise get
   * files written without it.
   */
  private static void checkContentDefinedChunking(String table, Map<String, String> properties) {
    String enabled = properties.get(CDC_ENABLED);
    if (enabled != null) {
      if (!enabled.trim().equalsIgnoreCase("true") && !enabled.trim().equalsIgnoreCase("false")) {
        throw new IllegalArgumentException(
            "table "
                + table
                + ": write property '"
                + CDC_ENABLED
                + "' must be true or false, not '"
                + enabled
                + "'");
      }
      if (Boolean.parseBoolean(enabled.trim())) {
        throw new IllegalArgumentException(
            "table "
                + table
                + ": write property '"
                + CDC_ENABLED
                + "' is true, but the Parquet writer of Iceberg 1.11 (parquet-java 1.17) has no"
                + " content-defined chunking yet; set it to false or leave it out");
      }
    }
    long min = positive(table, properties, CDC_MIN);
    long max = positive(table, properties, CDC_MAX);
    if (min > 0 && max > 0 && max <= min) {
      throw new IllegalArgumentException(
          "table "
              + table
              + ": write property '"
              + CDC_MAX
              + "' is "
              + max
              + "; it must be above '"
              + CDC_MIN
              + "', "
              + min);
    }
    String level = properties.get(CDC_NORM_LEVEL);
    if (level != null) {
      try {
        Integer.parseInt(level.trim());
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException(
            "table "
                + table
                + ": write property '"
                + CDC_NORM_LEVEL
                + "' must be a whole number, not '"
                + level
                + "'");
      }
    }
  }

  /** A property that must be a positive number, or 0 when it is not given. */
  private static long positive(String table, Map<String, String> properties, String key) {
    String text = properties.get(key);
    if (text == null) {
      return 0;
    }
    // Iceberg reads all but the target file size as an int, and none of them trimmed.
    long max =
        key.equals(TableProperties.WRITE_TARGET_FILE_SIZE_BYTES)
                || key.equals(CDC_MIN)
                || key.equals(CDC_MAX)
            ? Long.MAX_VALUE
            : Integer.MAX_VALUE;
    long value;
    try {
      value = Long.parseLong(text);
    } catch (NumberFormatException e) {
      value = -1;
    }
    if (value <= 0 || value > max) {
      throw new IllegalArgumentException(
          "table "
              + table
              + ": write property '"
              + key
              + "' must be a whole number from 1 to "
              + max
              + ", not '"
              + text
              + "'");
    }
    return value;
  }

  /**
   * @throws IllegalArgumentException naming the property and the table
   */
  public static void validate(String table, Map<String, String> properties) {
    for (Map.Entry<String, String> property : properties.entrySet()) {
      String key = property.getKey();
      if ((key.startsWith("write.parquet.") || key.startsWith("write.target-"))
          && !KNOWN.contains(key)
          && KNOWN_PREFIXES.stream().noneMatch(key::startsWith)) {
        throw new IllegalArgumentException(
            "table "
                + table
                + ": unknown write property '"
                + key
                + "'; the writers know "
                + new java.util.TreeSet<>(KNOWN)
                + " and "
                + KNOWN_PREFIXES.stream().map(prefix -> prefix + "<column>").toList());
      }
      if (SIZES.contains(key)) {
        positive(table, properties, key);
      }
    }
    checkContentDefinedChunking(table, properties);
    String distribution = properties.get(TableProperties.WRITE_DISTRIBUTION_MODE);
    if (distribution != null
        && !distribution.equalsIgnoreCase("none")
        && !distribution.equalsIgnoreCase("hash")) {
      throw new IllegalArgumentException(
          "table "
              + table
              + ": write property '"
              + TableProperties.WRITE_DISTRIBUTION_MODE
              + "' is '"
              + distribution
              + "'; this sink takes none (rows by primary key, or as they come without one) or"
              + " hash (by partition)"
              + (distribution.equalsIgnoreCase("range") ? ", not range" : ""));
    }
    String codec =
        properties
            .getOrDefault(
                TableProperties.PARQUET_COMPRESSION, TableProperties.PARQUET_COMPRESSION_DEFAULT)
            .toLowerCase(Locale.ROOT);
    int[] levels;
    switch (codec) {
      case "zstd":
        levels = new int[] {1, 22};
        break;
      case "gzip":
        levels = new int[] {1, 9};
        break;
      case "brotli":
        levels = new int[] {0, 11};
        break;
      case "snappy":
      case "lz4":
      case "lz4_raw":
      case "uncompressed":
        levels = null;
        break;
      default:
        throw new IllegalArgumentException(
            "table "
                + table
                + ": write property '"
                + TableProperties.PARQUET_COMPRESSION
                + "' is '"
                + codec
                + "', not one of uncompressed, snappy, zstd, gzip, brotli, lz4, lz4_raw");
    }
    String level = properties.get(TableProperties.PARQUET_COMPRESSION_LEVEL);
    if (level == null) {
      return;
    }
    if (levels == null) {
      throw new IllegalArgumentException(
          "table "
              + table
              + ": codec "
              + codec
              + " takes no compression level, but '"
              + TableProperties.PARQUET_COMPRESSION_LEVEL
              + "' is "
              + level);
    }
    int value;
    try {
      value = Integer.parseInt(level.trim());
    } catch (NumberFormatException e) {
      value = Integer.MIN_VALUE;
    }
    if (value < levels[0] || value > levels[1]) {
      throw new IllegalArgumentException(
          "table "
              + table
              + ": compression level "
              + level
              + " does not fit codec "
              + codec
              + ", which takes "
              + levels[0]
              + " to "
              + levels[1]);
    }
  }
}
