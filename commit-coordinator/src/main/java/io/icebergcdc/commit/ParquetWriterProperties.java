package io.icebergcdc.commit;

import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import org.apache.iceberg.TableProperties;

/**
 * The write properties a table or a write gives, as Iceberg's Parquet writers must be handed them.
 *
 * <p>Iceberg passes {@code write.parquet.compression-level} of a gzip table to Hadoop's zlib
 * compressor as the number it is ({@code zlib.compress.level = 6}), but that compressor reads the
 * key as the name of its {@code CompressionLevel} enum and fails every write with "No enum constant
 * ...CompressionLevel.6". So a gzip level is given to Hadoop by its name instead ({@code SIX}), and
 * Iceberg is not given the number. zstd's and brotli's levels reach their codecs as numbers, which
 * they take.
 */
public final class ParquetWriterProperties {

  /** The names of zlib's levels 0 to 9 in Hadoop's {@code ZlibCompressor.CompressionLevel}. */
  private static final String[] ZLIB_LEVELS = {
    "NO_COMPRESSION",
    "BEST_SPEED",
    "TWO",
    "THREE",
    "FOUR",
    "FIVE",
    "SIX",
    "SEVEN",
    "EIGHT",
    "BEST_COMPRESSION"
  };

  /** The Hadoop key zlib's level is read from. */
  public static final String ZLIB_LEVEL_KEY = "zlib.compress.level";

  private ParquetWriterProperties() {}

  /**
   * The properties for Iceberg's writer factories: the same, with a gzip level moved to Hadoop's
   * key by name. Properties already checked ({@code WriteProperties.validate}) are expected; a
   * level outside 0 to 9 is left as it is.
   */
  public static Map<String, String> of(Map<String, String> properties) {
    String codec =
        properties.getOrDefault(
            TableProperties.PARQUET_COMPRESSION, TableProperties.PARQUET_COMPRESSION_DEFAULT);
    String level = properties.get(TableProperties.PARQUET_COMPRESSION_LEVEL);
    if (level == null || !codec.toLowerCase(Locale.ROOT).equals("gzip")) {
      return properties;
    }
    int number;
    try {
      number = Integer.parseInt(level.trim());
    } catch (NumberFormatException e) {
      return properties;
    }
    if (number < 0 || number >= ZLIB_LEVELS.length) {
      return properties;
    }
    Map<String, String> translated = new HashMap<>(properties);
    translated.remove(TableProperties.PARQUET_COMPRESSION_LEVEL);
    translated.put(ZLIB_LEVEL_KEY, ZLIB_LEVELS[number]);
    return translated;
  }
}
