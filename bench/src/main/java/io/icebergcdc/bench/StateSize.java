package io.icebergcdc.bench;

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

  static String describe(Table table) {
    long keyBytes = 4 + 8; // a bigint key: length and eight bytes
    long sequenceBytes = 1 + 1 + 1 + 8; // kind, no prefix, one long
    long locationBytes = 2 + averageLocationLength(table) + 8;
    long entryBytes = 1 + 1 + sequenceBytes + 8 + locationBytes;
    return String.format(
        Locale.ROOT,
        "about %d bytes (key %d bytes; entry %d: sequence %d, fingerprint 8, row location %d, of"
            + " which %d the data file's location)",
        keyBytes + entryBytes,
        keyBytes,
        entryBytes,
        sequenceBytes,
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
