package io.icebergcdc.capture;

import java.util.List;

/**
 * A range of one table's rows, by primary key, for the initial snapshot: the rows whose key is at
 * or after {@code lower} and before {@code upper}, read in key order. A chunk that was being read
 * at a checkpoint carries the last key it emitted ({@code after}), so that a restore reads on from
 * the next key; a chunk that is done is in no checkpoint at all.
 *
 * <p>Keys are lists of the primary key's values in key-column order, each encoded as text by {@link
 * SnapshotColumns#encode}; an empty list is no bound.
 *
 * @param topic the table's Debezium topic, which names its route
 * @param number the chunk's number within its table, from 0
 * @param lower the first key of the chunk; empty for the table's first chunk
 * @param upper the first key after the chunk; empty for the table's last chunk
 * @param after the last key already emitted; empty if none
 */
public record SnapshotChunk(
    String topic, long number, List<String> lower, List<String> upper, List<String> after)
    implements CaptureSplit {

  public SnapshotChunk {
    lower = List.copyOf(lower);
    upper = List.copyOf(upper);
    after = List.copyOf(after);
  }

  @Override
  public String splitId() {
    return "chunk-" + number + "-" + topic;
  }

  /** This chunk, read up to and including {@code key}. */
  SnapshotChunk readUpTo(List<String> key) {
    return new SnapshotChunk(topic, number, lower, upper, key);
  }

  @Override
  public String toString() {
    return "chunk "
        + number
        + " of "
        + topic
        + " ["
        + (lower.isEmpty() ? "start" : String.join(",", lower))
        + ", "
        + (upper.isEmpty() ? "end" : String.join(",", upper))
        + ")"
        + (after.isEmpty() ? "" : " after " + String.join(",", after));
  }
}
