package io.icebergcdc.cdc;

import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * What the applier did with the changes of one checkpoint, or of several added together: the net
 * rows it inserted, updated and deleted, the changes it dropped as stale (older than the change
 * already applied to their key) or as duplicates, the changes it sent to the dead-letter output,
 * the latest source position it saw, for changes read from Kafka the highest offset of each topic
 * partition they came from, and the source position of the latest truncate of the table that the
 * writer applied or took up from the table.
 *
 * <p>Immutable; {@link #plus} adds two.
 */
public final class ChangeStats {

  public static final ChangeStats EMPTY = new ChangeStats(0, 0, 0, 0, 0, 0, null);

  private final long inserted;
  private final long updated;
  private final long deleted;
  private final long staleDropped;
  private final long duplicatesDropped;
  private final long deadLettered;
  private final SourceSequence lastSourcePosition;
  private final SortedMap<String, Long> sourceOffsets;
  private final SourceSequence truncatedAt;

  public ChangeStats(
      long inserted,
      long updated,
      long deleted,
      long staleDropped,
      long duplicatesDropped,
      long deadLettered,
      SourceSequence lastSourcePosition) {
    this(
        inserted,
        updated,
        deleted,
        staleDropped,
        duplicatesDropped,
        deadLettered,
        lastSourcePosition,
        Collections.emptySortedMap());
  }

  /**
   * @param sourceOffsets the highest offset seen per Kafka topic partition ({@code
   *     topic/partition})
   */
  public ChangeStats(
      long inserted,
      long updated,
      long deleted,
      long staleDropped,
      long duplicatesDropped,
      long deadLettered,
      SourceSequence lastSourcePosition,
      Map<String, Long> sourceOffsets) {
    this(
        inserted,
        updated,
        deleted,
        staleDropped,
        duplicatesDropped,
        deadLettered,
        lastSourcePosition,
        sourceOffsets,
        null);
  }

  /**
   * @param sourceOffsets the highest offset seen per Kafka topic partition ({@code
   *     topic/partition})
   * @param truncatedAt the source position of the table's latest truncate that the writer took, or
   *     null
   */
  public ChangeStats(
      long inserted,
      long updated,
      long deleted,
      long staleDropped,
      long duplicatesDropped,
      long deadLettered,
      SourceSequence lastSourcePosition,
      Map<String, Long> sourceOffsets,
      SourceSequence truncatedAt) {
    this.sourceOffsets =
        sourceOffsets.isEmpty()
            ? Collections.emptySortedMap()
            : Collections.unmodifiableSortedMap(new TreeMap<>(sourceOffsets));
    this.inserted = inserted;
    this.updated = updated;
    this.deleted = deleted;
    this.staleDropped = staleDropped;
    this.duplicatesDropped = duplicatesDropped;
    this.deadLettered = deadLettered;
    this.lastSourcePosition = lastSourcePosition;
    this.truncatedAt = truncatedAt;
  }

  public long inserted() {
    return inserted;
  }

  public long updated() {
    return updated;
  }

  public long deleted() {
    return deleted;
  }

  public long staleDropped() {
    return staleDropped;
  }

  public long duplicatesDropped() {
    return duplicatesDropped;
  }

  public long deadLettered() {
    return deadLettered;
  }

  /** The latest source position seen, or null if none was. */
  public SourceSequence lastSourcePosition() {
    return lastSourcePosition;
  }

  /** The highest offset seen per Kafka topic partition ({@code topic/partition}), sorted. */
  public SortedMap<String, Long> sourceOffsets() {
    return sourceOffsets;
  }

  /**
   * The source position of the table's latest truncate that the writer took in these changes, or
   * took up from the table's summaries in a job without state; null if none.
   */
  public SourceSequence truncatedAt() {
    return truncatedAt;
  }

  /**
   * Whether nothing at all was counted or seen. The position of a truncate alone, which the
   * statistics of every checkpoint of a truncated table carry, is not news.
   */
  public boolean isEmpty() {
    return inserted == 0
        && updated == 0
        && deleted == 0
        && staleDropped == 0
        && duplicatesDropped == 0
        && deadLettered == 0
        && lastSourcePosition == null
        && sourceOffsets.isEmpty();
  }

  /**
   * These statistics and {@code other}'s added together: counts summed, offsets and positions the
   * later of each; where two positions cannot be ordered, {@code other}'s, so that the statistics
   * of a later checkpoint are to be added to those of an earlier one.
   */
  public ChangeStats plus(ChangeStats other) {
    SourceSequence position = later(lastSourcePosition, other.lastSourcePosition);
    Map<String, Long> offsets = sourceOffsets;
    if (!other.sourceOffsets.isEmpty()) {
      TreeMap<String, Long> merged = new TreeMap<>(sourceOffsets);
      other.sourceOffsets.forEach(
          (partition, offset) -> merged.merge(partition, offset, Math::max));
      offsets = merged;
    }
    return new ChangeStats(
        inserted + other.inserted,
        updated + other.updated,
        deleted + other.deleted,
        staleDropped + other.staleDropped,
        duplicatesDropped + other.duplicatesDropped,
        deadLettered + other.deadLettered,
        position,
        offsets,
        later(truncatedAt, other.truncatedAt));
  }

  /**
   * The later of two positions; the second where they cannot be ordered (of different kinds, or of
   * binlogs of different names): {@code plus} is called on the older statistics.
   */
  private static SourceSequence later(SourceSequence a, SourceSequence b) {
    if (b == null) {
      return a;
    }
    return a == null || a.kind() != b.kind() || !java.util.Objects.equals(a.prefix(), b.prefix())
        ? b
        : a.max(b);
  }

  @Override
  public boolean equals(Object o) {
    if (this == o) {
      return true;
    }
    if (!(o instanceof ChangeStats)) {
      return false;
    }
    ChangeStats that = (ChangeStats) o;
    return inserted == that.inserted
        && updated == that.updated
        && deleted == that.deleted
        && staleDropped == that.staleDropped
        && duplicatesDropped == that.duplicatesDropped
        && deadLettered == that.deadLettered
        && Objects.equals(lastSourcePosition, that.lastSourcePosition)
        && sourceOffsets.equals(that.sourceOffsets)
        && Objects.equals(truncatedAt, that.truncatedAt);
  }

  @Override
  public int hashCode() {
    return Objects.hash(inserted, updated, deleted, staleDropped, duplicatesDropped, deadLettered);
  }

  @Override
  public String toString() {
    return "inserted="
        + inserted
        + " updated="
        + updated
        + " deleted="
        + deleted
        + " stale="
        + staleDropped
        + " duplicates="
        + duplicatesDropped
        + " dead-lettered="
        + deadLettered
        + " position="
        + lastSourcePosition
        + (sourceOffsets.isEmpty() ? "" : " offsets=" + sourceOffsets)
        + (truncatedAt == null ? "" : " truncated-at=" + truncatedAt);
  }
}
