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
 * the key (length and bytes), the dedup's entry (format byte, sequence, fingerprint, flag) and the
 * key index's entry (format byte, the data file's location relative to the table's, the position).
 * State backends add their own overhead on top (RocksDB's per-entry and key-group prefixes, for
 * instance).
 */
final class StateSize {

  private StateSize() {}

  private static final long KEY_BYTES = 4 + 8; // a bigint key: length and eight bytes
  // format, sequence (kind, no prefix, 1 long), fingerprint, flag
  private static final long DEDUP_BYTES = 1 + (1 + 1 + 1 + 8) + 8 + 1;

  /**
   * The bytes per key: in position mode the key twice (once per state), the dedup's entry and the
   * index's; in equality mode, which keeps no index, the key and the dedup's entry.
   */
  static long bytesPerKey(Table table, DeleteMode mode) {
    if (mode == DeleteMode.EQUALITY) {
      return KEY_BYTES + DEDUP_BYTES;
    }
    return 2 * KEY_BYTES + DEDUP_BYTES + indexEntryBytes(table);
  }

  private static long indexEntryBytes(Table table) {
    return 1 + 2 + averageLocationLength(table) + 8;
  }

  static String describe(Table table) {
    long keyBytes = KEY_BYTES;
    long dedupBytes = DEDUP_BYTES;
    long locationBytes = indexEntryBytes(table);
    long perKeyTwice = 2 * keyBytes; // the key is stored once per state (dedup and index)
    return String.format(
        Locale.ROOT,
        "about %d bytes (key %d bytes, stored with each of the two states; dedup entry %d; index"
            + " entry %d, of which %d the data file's location)",
        perKeyTwice + dedupBytes + locationBytes,
        keyBytes,
        dedupBytes,
        locationBytes,
        locationBytes - 11);
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
