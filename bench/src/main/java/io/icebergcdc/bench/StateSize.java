package io.icebergcdc.bench;

import io.icebergcdc.sink.DeleteMode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Locale;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Table;
import org.apache.iceberg.io.CloseableIterable;

/**
 * Estimates the keyed state per primary key of the position mode from what its serializers write:
 * the key (length and bytes) and its one entry (format byte, flags, sequence, fingerprint, the data
 * file's location relative to the table's, the position). State backends add their own overhead on
 * top (RocksDB's per-entry and key-group prefixes, for instance).
 */
final class StateSize {

  private StateSize() {}

  private static final long KEY_BYTES = 4 + 8; // a bigint key: length and eight bytes
  private static final long SEQUENCE_BYTES = 1 + 1 + 1 + 8; // kind, no prefix, one long
  // format, flags, sequence, fingerprint (the equality mode's entry, which has no location)
  private static final long DEDUP_BYTES = 1 + 1 + SEQUENCE_BYTES + 8;

  /**
   * The bytes per key: the key and its one entry, which in position mode also holds the row's
   * location.
   */
  static long bytesPerKey(Table table, DeleteMode mode) {
    if (mode == DeleteMode.EQUALITY) {
      return KEY_BYTES + DEDUP_BYTES;
    }
    return KEY_BYTES + DEDUP_BYTES + locationBytes(table);
  }

  /** The data file's location (length and characters) and the position. */
  private static long locationBytes(Table table) {
    return 2 + averageLocationLength(table) + 8;
  }

  static String describe(Table table) {
    long locationBytes = locationBytes(table);
    long entryBytes = DEDUP_BYTES + locationBytes;
    return String.format(
        Locale.ROOT,
        "about %d bytes (key %d bytes; entry %d: sequence %d, fingerprint 8, row location %d, of"
            + " which %d the data file's location)",
        KEY_BYTES + entryBytes,
        KEY_BYTES,
        entryBytes,
        SEQUENCE_BYTES,
        locationBytes,
        locationBytes - 10);
  }

  private static long averageLocationLength(Table table) {
    long total = 0;
    long count = 0;
    try (CloseableIterable<FileScanTask> tasks = table.newScan().planFiles()) {
      for (FileScanTask task : tasks) {
        String location = task.file().location();
        String prefix = table.location().endsWith("/") ? table.location() : table.location() + "/";
        total +=
            location.startsWith(prefix) ? location.length() - prefix.length() : location.length();
        count++;
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return count == 0 ? 0 : total / count;
  }
}
