package io.icebergcdc.bench;

import io.icebergcdc.sink.DeleteMode;
import java.util.Locale;

/**
 * Estimates the keyed state per primary key of the position mode from what its serializers write:
 * the key (length and bytes) and its one entry (format byte, flags, sequence, fingerprint, the data
 * file's name in the index's dictionary, the position). State backends add their own overhead on
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
  static long bytesPerKey(DeleteMode mode) {
    if (mode == DeleteMode.EQUALITY) {
      return KEY_BYTES + DEDUP_BYTES;
    }
    return KEY_BYTES + DEDUP_BYTES + LOCATION_BYTES;
  }

  /**
   * The data file's name in the index's dictionary (length, then '#' and a number in base 36: a few
   * thousand files at most here) and the position.
   */
  private static final long LOCATION_BYTES = 2 + 3 + 8;

  static String describe() {
    long locationBytes = LOCATION_BYTES;
    long entryBytes = DEDUP_BYTES + locationBytes;
    return String.format(
        Locale.ROOT,
        "about %d bytes (key %d bytes; entry %d: sequence %d, fingerprint 8, row location %d, of"
            + " which %d the data file's name in the dictionary)",
        KEY_BYTES + entryBytes,
        KEY_BYTES,
        entryBytes,
        SEQUENCE_BYTES,
        locationBytes,
        locationBytes - 10);
  }
}
