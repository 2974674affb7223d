package io.icebergcdc.cdc;

import java.io.Serializable;
import java.util.Arrays;
import java.util.Locale;
import java.util.Objects;

/**
 * The position of a change in its source, comparable across all changes of one key.
 *
 * <p>A sequence is a short tuple of signed 64-bit components compared lexicographically, tagged
 * with the {@link Kind} of source it came from so that it can be shown as the source shows it (a
 * PostgreSQL LSN as {@code 0/16B3748}, a MySQL position as {@code mysql-bin.000003:4015#2}).
 * Sequences of different kinds never compare: a key whose changes come from two kinds of source has
 * no defined order, and comparing them fails loudly.
 */
public final class SourceSequence implements Comparable<SourceSequence>, Serializable {

  private static final long serialVersionUID = 1L;

  /** Where a sequence comes from; decides how it is shown. */
  public enum Kind {
    /** PostgreSQL: {@code [lsn]} or {@code [last commit lsn, lsn]}. */
    POSTGRES_LSN,
    /** MySQL and MariaDB: {@code [binlog file number, position, row in event]}. */
    MYSQL_BINLOG,
    /** A user-named column: {@code [value]}, a number or a timestamp in microseconds. */
    COLUMN,
    /** Kafka: {@code [partition, offset]}, safe only for topics partitioned by primary key. */
    KAFKA_OFFSET,
    /**
     * Order of arrival, for changelogs without a sequence: {@code []} on a change yet to be
     * numbered, {@code [n]} once the dedup has numbered it after the changes of its key before it.
     */
    ARRIVAL,
    /**
     * No order at all: the changes of a bounded input without a sequence, all at {@code []}. Two
     * that differ for one key are ambiguous.
     */
    UNORDERED
  }

  private final Kind kind;
  private final long[] components;
  private final String prefix;

  private SourceSequence(Kind kind, String prefix, long... components) {
    this.kind = Objects.requireNonNull(kind, "kind");
    this.prefix = prefix;
    this.components = components;
  }

  /** A PostgreSQL log sequence number. */
  public static SourceSequence postgresLsn(long lsn) {
    return new SourceSequence(Kind.POSTGRES_LSN, null, lsn);
  }

  /**
   * A PostgreSQL position ordered first by the commit LSN of the transaction before the change's
   * own (Debezium's {@code source.sequence}), then by the change's LSN: this is the order in which
   * transactions committed, which a bare LSN is not.
   */
  public static SourceSequence postgresLsn(long lastCommitLsn, long lsn) {
    return new SourceSequence(Kind.POSTGRES_LSN, null, lastCommitLsn, lsn);
  }

  /**
   * A MySQL/MariaDB binlog position.
   *
   * @param binlogFile the binlog file name; its numeric suffix orders the files
   * @param position the position of the event in that file
   * @param row the index of the row within the event
   */
  public static SourceSequence mysqlBinlog(String binlogFile, long position, long row) {
    int dot = binlogFile.lastIndexOf('.');
    long fileNumber;
    try {
      fileNumber = Long.parseLong(binlogFile.substring(dot + 1));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          "binlog file name '" + binlogFile + "' does not end in a file number", e);
    }
    return new SourceSequence(
        Kind.MYSQL_BINLOG, binlogFile.substring(0, dot + 1), fileNumber, position, row);
  }

  /** The value of a user-named sequence column. */
  public static SourceSequence column(long value) {
    return new SourceSequence(Kind.COLUMN, null, value);
  }

  /** A change ordered by its arrival, to be numbered by the dedup. */
  public static SourceSequence arrival() {
    return new SourceSequence(Kind.ARRIVAL, null);
  }

  /** The {@code n}th change of a key in order of arrival. */
  public static SourceSequence arrival(long n) {
    return new SourceSequence(Kind.ARRIVAL, null, n);
  }

  /** The position of every change of a bounded input that has no sequence. */
  public static SourceSequence unordered() {
    return new SourceSequence(Kind.UNORDERED, null);
  }

  /** Whether this is an arrival yet to be numbered. */
  public boolean isUnnumberedArrival() {
    return kind == Kind.ARRIVAL && components.length == 0;
  }

  /** A Kafka partition and offset. */
  public static SourceSequence kafkaOffset(int partition, long offset) {
    return new SourceSequence(Kind.KAFKA_OFFSET, null, partition, offset);
  }

  /**
   * Rebuilds a sequence from its parts, as written by {@link #kind()} and {@link #components()}.
   */
  public static SourceSequence of(Kind kind, String prefix, long[] components) {
    return new SourceSequence(kind, prefix, components.clone());
  }

  public Kind kind() {
    return kind;
  }

  /** For MySQL, the binlog file name without its number ({@code mysql-bin.}); else null. */
  public String prefix() {
    return prefix;
  }

  public long[] components() {
    return components.clone();
  }

  /** Whichever of the two is later; {@code other} may be null. */
  public SourceSequence max(SourceSequence other) {
    return other == null || compareTo(other) >= 0 ? this : other;
  }

  @Override
  public int compareTo(SourceSequence other) {
    if (kind != other.kind) {
      throw new IllegalArgumentException(
          "cannot order a " + kind + " position against a " + other.kind + " position");
    }
    int n = Math.min(components.length, other.components.length);
    for (int i = 0; i < n; i++) {
      int c = Long.compare(components[i], other.components[i]);
      if (c != 0) {
        return c;
      }
    }
    return Integer.compare(components.length, other.components.length);
  }

  @Override
  public boolean equals(Object o) {
    if (this == o) {
      return true;
    }
    if (!(o instanceof SourceSequence)) {
      return false;
    }
    SourceSequence that = (SourceSequence) o;
    return kind == that.kind && Arrays.equals(components, that.components);
  }

  @Override
  public int hashCode() {
    return 31 * kind.hashCode() + Arrays.hashCode(components);
  }

  /** The position as the source writes it. */
  @Override
  public String toString() {
    switch (kind) {
      case POSTGRES_LSN:
        if (components.length == 2) {
          return "lsn="
              + formatLsn(components[1])
              + " (after commit "
              + formatLsn(components[0])
              + ")";
        }
        return "lsn=" + formatLsn(components[0]);
      case MYSQL_BINLOG:
        return String.format(
            Locale.ROOT,
            "%s%06d:%d#%d",
            prefix == null ? "" : prefix,
            components[0],
            components[1],
            components[2]);
      case KAFKA_OFFSET:
        return "partition=" + components[0] + ",offset=" + components[1];
      case ARRIVAL:
        return components.length == 0 ? "arrival" : "arrival #" + components[0];
      case UNORDERED:
        return "unordered";
      case COLUMN:
      default:
        return "sequence=" + components[0];
    }
  }

  /** A PostgreSQL LSN in its text form, {@code X/Y} in hex. */
  public static String formatLsn(long value) {
    return Long.toHexString(value >>> 32).toUpperCase(Locale.ROOT)
        + "/"
        + Long.toHexString(value & 0xFFFFFFFFL).toUpperCase(Locale.ROOT);
  }

  /** Parses a PostgreSQL LSN written as {@code XXX/XXX}. */
  public static long parseLsn(String text) {
    int slash = text.indexOf('/');
    if (slash < 0) {
      throw new IllegalArgumentException("'" + text + "' is not an LSN of the form XXX/XXX");
    }
    return (Long.parseLong(text.substring(0, slash), 16) << 32)
        | Long.parseLong(text.substring(slash + 1), 16);
  }
}
