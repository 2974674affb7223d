package io.icebergcdc.dedup.internal;

/**
 * The room an array of a checkpoint interval's pending keys keeps between intervals: what recent
 * intervals used, the room of a burst given back over the quieter intervals after it. The recent
 * count is the last interval's, or half the one before if that was more; the room is cut to twice
 * it once it is more than four times that, so intervals alternating between a burst and a quiet one
 * keep theirs.
 */
final class BurstRoom {

  private final int least;
  private int recent;

  /** Room that is never given back below {@code least}. */
  BurstRoom(int least) {
    this.least = least;
  }

  /**
   * After an interval that used {@code used} of {@code length}: the length to reallocate to, or
   * {@code length} to keep the room.
   */
  int after(int used, int length) {
    recent = Math.max(used, recent / 2);
    int enough = Math.max(least, 2 * recent);
    return length > 4 * enough ? enough : length;
  }
}
