package io.icebergcdc.sink;

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

  static final Set<String> KNOWN =
      Set.of(
          TableProperties.WRITE_TARGET_FILE_SIZE_BYTES,
          TableProperties.PARQUET_COMPRESSION,
          TableProperties.PARQUET_COMPRESSION_LEVEL,
          TableProperties.PARQUET_ROW_GROUP_SIZE_BYTES,
          TableProperties.PARQUET_PAGE_SIZE_BYTES,
          TableProperties.PARQUET_PAGE_ROW_LIMIT,
          TableProperties.PARQUET_DICT_SIZE_BYTES,
          TableProperties.WRITE_DISTRIBUTION_MODE);

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
                + "' (an alias and its full key must agree)");
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
   * @throws IllegalArgumentException naming the property and the table
   */
  public static void validate(String table, Map<String, String> properties) {
    for (Map.Entry<String, String> property : properties.entrySet()) {
      String key = property.getKey();
      if ((key.startsWith("write.parquet.") || key.startsWith("write.target-"))
          && !KNOWN.contains(key)) {
        throw new IllegalArgumentException(
            "table " + table + ": unknown write property '" + key + "'; the writers know " + KNOWN);
      }
      if (SIZES.contains(key)) {
        long value;
        try {
          value = Long.parseLong(property.getValue().trim());
        } catch (NumberFormatException e) {
          value = -1;
        }
        if (value <= 0) {
          throw new IllegalArgumentException(
              "table "
                  + table
                  + ": write property '"
                  + key
                  + "' must be a positive number, not '"
                  + property.getValue()
                  + "'");
        }
      }
    }
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
