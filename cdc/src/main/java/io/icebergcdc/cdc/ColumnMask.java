package io.icebergcdc.cdc;

import java.util.Arrays;
import java.util.function.IntConsumer;

/**
 * A set of column positions of a table's rows; immutable. Nearly every change has none, so the
 * empty set is one shared instance and a set allocates only when a column is added.
 */
public final class ColumnMask {

  /** No column. */
  public static final ColumnMask EMPTY = new ColumnMask(new long[0]);

  private final long[] words;

  private ColumnMask(long[] words) {
    this.words = words;
  }

  /**
   * The set of the words' bits, as {@link #words()} gives them; trailing zero words are dropped.
   */
  public static ColumnMask ofWords(long[] words) {
    int length = words.length;
    while (length > 0 && words[length - 1] == 0) {
      length--;
    }
    return length == 0 ? EMPTY : new ColumnMask(Arrays.copyOf(words, length));
  }

  /** This set and the column at {@code position}. */
  public ColumnMask with(int position) {
    if (position < 0) {
      throw new IllegalArgumentException("column position " + position + " is negative");
    }
    int word = position >>> 6;
    long[] bits = Arrays.copyOf(words, Math.max(words.length, word + 1));
    bits[word] |= 1L << position;
    return new ColumnMask(bits);
  }

  /** The columns of this set that are not in {@code other}. */
  public ColumnMask minus(ColumnMask other) {
    if (isEmpty() || other.isEmpty()) {
      return this;
    }
    long[] bits = words.clone();
    for (int i = 0; i < Math.min(bits.length, other.words.length); i++) {
      bits[i] &= ~other.words[i];
    }
    return ofWords(bits);
  }

  /** The columns in both sets. */
  public ColumnMask and(ColumnMask other) {
    if (isEmpty() || other.isEmpty()) {
      return EMPTY;
    }
    long[] bits = Arrays.copyOf(words, Math.min(words.length, other.words.length));
    for (int i = 0; i < bits.length; i++) {
      bits[i] &= other.words[i];
    }
    return ofWords(bits);
  }

  public boolean contains(int position) {
    int word = position >>> 6;
    return word < words.length && (words[word] & (1L << position)) != 0;
  }

  public boolean isEmpty() {
    return words.length == 0;
  }

  /** Calls {@code action} with each position, in ascending order. */
  public void forEach(IntConsumer action) {
    for (int i = 0; i < words.length; i++) {
      long bits = words[i];
      while (bits != 0) {
        action.accept(i * 64 + Long.numberOfTrailingZeros(bits));
        bits &= bits - 1;
      }
    }
  }

  /** The bits, 64 columns a word, lowest position in the lowest bit; a copy. */
  public long[] words() {
    return words.clone();
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof ColumnMask other && Arrays.equals(words, other.words);
  }

  @Override
  public int hashCode() {
    return Arrays.hashCode(words);
  }

  @Override
  public String toString() {
    StringBuilder sb = new StringBuilder("[");
    forEach(
        position -> {
          if (sb.length() > 1) {
            sb.append(", ");
          }
          sb.append(position);
        });
    return sb.append(']').toString();
  }
}
