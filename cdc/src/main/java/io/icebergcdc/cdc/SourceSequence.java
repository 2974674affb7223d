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

  /**
   * Components kept in fields, as {@link #of(Kind, String, int, long, long, long)} takes them; a
   * sequence with more keeps them all in an array.
   */
  public static final int INLINE_COMPONENTS = 3;

  // One object per sequence, however many components it has (up to three): each dedup state entry
  // holds one, and its snapshot, comparisons and serialization read it without following arrays.
  private final Kind kind;
  private final String prefix;
  private final int size;
  private final long c0;
  private final long c1;
  private final long c2;
  private final long[] more;

  private SourceSequence(Kind kind, String prefix, long... components) {
    this.kind = Objects.requireNonNull(kind, "kind");
    this.prefix = prefix;
    this.size = components.length;
    this.c0 = size > 0 ? components[0] : 0;
    this.c1 = size > 1 ? components[1] : 0;
    this.c2 = size > 2 ? components[2] : 0;
    this.more = size > INLINE_COMPONENTS ? components : null;
  }

  private SourceSequence(Kind kind, String prefix, int size, long c0, long c1, long c2) {
    this.kind = Objects.requireNonNull(kind, "kind");
    this.prefix = prefix;
    this.size = size;
    this.c0 = c0;
    this.c1 = c1;
    this.c2 = c2;
    this.more = null;
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

  /**
   * The position of a row that a snapshot read from the database while its log was being captured
   * (the job's own chunked snapshot): before every position of that log, so that any change the log
   * delivers for the row's key wins over it, in whichever order the two arrive. A row read this way
   * shows the database at some moment after the log's start; the log's changes since that start
   * bring every key to its latest state.
   *
   * @param kind {@link Kind#POSTGRES_LSN} or {@link Kind#MYSQL_BINLOG}
   */
  public static SourceSequence beforeLog(Kind kind) {
    if (kind != Kind.POSTGRES_LSN && kind != Kind.MYSQL_BINLOG) {
      throw new IllegalArgumentException("a " + kind + " position has no log to be before");
    }
    return new SourceSequence(kind, null);
  }

  /** Whether this is {@link #beforeLog}'s position. */
  public boolean isBeforeLog() {
    return size == 0 && isGlobal();
  }

  /** The value of a user-named sequence column. */
  public static SourceSequence column(long value) {
    return new SourceSequence(Kind.COLUMN, null, value);
  }

  /**
   * This sequence as a delete's whose row is the one deleted: a sequence column's value read from a
   * deleted row (a Debezium delete's {@code before}, a Flink SQL {@code DELETE}) is the value of
   * the change that wrote that row, so the delete is ordered right after that change and before any
   * later value ({@code [value, 1]}). Other sequences, which place the delete itself, as they are.
   */
  public SourceSequence ofDeletedRow() {
    return kind == Kind.COLUMN && size == 1 ? new SourceSequence(Kind.COLUMN, null, c0, 1L) : this;
  }

  /** Whether this is a delete's sequence read from its deleted row ({@link #ofDeletedRow}). */
  public boolean isOfDeletedRow() {
    return kind == Kind.COLUMN && size == 2 && c1 == 1L;
  }

  /**
   * Whether this is the sequence of the delete of the row that {@code write}, a change at a
   * sequence column's value, wrote: the same value. A later change at that value is either that
   * write delivered late, or a row written again at the value of the one deleted, which the value
   * does not order.
   */
  public boolean isDeleteOfRowAt(SourceSequence write) {
    return isOfDeletedRow() && write.kind == Kind.COLUMN && write.size == 1 && write.c0 == c0;
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

  /**
   * Whether the source numbers all its changes in one order, whatever their key (a PostgreSQL LSN,
   * a MySQL binlog position), so that everything at or before a position a table holds was seen by
   * the job that wrote it; a sequence column, a Kafka offset or an arrival number orders the
   * changes of a key, or of a partition, only.
   */
  public boolean isGlobal() {
    return kind == Kind.POSTGRES_LSN || kind == Kind.MYSQL_BINLOG;
  }

  /**
   * The sequence as text that {@link #decode} reads back, for a snapshot's summary: {@code
   * KIND:prefix:c0,c1,...} (the prefix empty where there is none).
   */
  public String encode() {
    StringBuilder text = new StringBuilder(kind.name()).append(':');
    if (prefix != null) {
      text.append(prefix);
    }
    text.append(':');
    for (int i = 0; i < size; i++) {
      text.append(i == 0 ? "" : ",").append(component(i));
    }
    return text.toString();
  }

  /** Reads a sequence written by {@link #encode}. */
  public static SourceSequence decode(String text) {
    int first = text.indexOf(':');
    int last = text.lastIndexOf(':');
    if (first < 0 || last == first) {
      throw new IllegalArgumentException("'" + text + "' is not an encoded source sequence");
    }
    Kind kind = Kind.valueOf(text.substring(0, first));
    String prefix = text.substring(first + 1, last);
    String parts = text.substring(last + 1);
    long[] components =
        parts.isEmpty()
            ? new long[0]
            : Arrays.stream(parts.split(",")).mapToLong(Long::parseLong).toArray();
    return new SourceSequence(kind, prefix.isEmpty() ? null : prefix, components);
  }

  /** Whether this is an arrival yet to be numbered. */
  public boolean isUnnumberedArrival() {
    return kind == Kind.ARRIVAL && size == 0;
  }

  /** A Kafka partition and offset. */
  public static SourceSequence kafkaOffset(int partition, long offset) {
    return new SourceSequence(Kind.KAFKA_OFFSET, null, partition, offset);
  }

  /**
   * A Kafka partition and offset, with the record's timestamp (milliseconds; negative where the
   * record has none, which leaves it out), which orders records of a key across partitions.
   */
  public static SourceSequence kafkaOffset(int partition, long offset, long timestamp) {
    return timestamp < 0
        ? kafkaOffset(partition, offset)
        : new SourceSequence(Kind.KAFKA_OFFSET, null, partition, offset, timestamp);
  }

  /**
   * Rebuilds a sequence from its parts, as written by {@link #kind()} and {@link #components()}.
   */
  public static SourceSequence of(Kind kind, String prefix, long[] components) {
    return new SourceSequence(kind, prefix, components.clone());
  }

  /**
   * Rebuilds a sequence of at most three components from its parts, without an array; the unused
   * components are ignored.
   */
  public static SourceSequence of(Kind kind, String prefix, int size, long c0, long c1, long c2) {
    if (size < 0 || size > INLINE_COMPONENTS) {
      throw new IllegalArgumentException("not 0 to " + INLINE_COMPONENTS + " components: " + size);
    }
    return new SourceSequence(
        kind, prefix, size, size > 0 ? c0 : 0, size > 1 ? c1 : 0, size > 2 ? c2 : 0);
  }

  public Kind kind() {
    return kind;
  }

  /** For MySQL, the binlog file name without its number ({@code mysql-bin.}); else null. */
  public String prefix() {
    return prefix;
  }

  /** The components, in a new array. */
  public long[] components() {
    long[] components = new long[size];
    for (int i = 0; i < size; i++) {
      components[i] = component(i);
    }
    return components;
  }

  /** How many components the sequence has. */
  public int size() {
    return size;
  }

  /** The component at {@code index}, below {@link #size()}. */
  public long component(int index) {
    Objects.checkIndex(index, size);
    if (more != null) {
      return more[index];
    }
    return index == 0 ? c0 : index == 1 ? c1 : c2;
  }

  /** Whichever of the two is later; {@code other} may be null. */
  public SourceSequence max(SourceSequence other) {
    return other == null || compareTo(other) >= 0 ? this : other;
  }

  /**
   * How this change's position orders against the position of its key's last change {@code last}:
   * as {@link #compareTo}, except for Kafka offsets of two partitions, which say nothing of each
   * other. Kafka orders a key's records only within a partition; a key's records in two partitions
   * (a topic given more partitions moves keys between them) are ordered by their timestamps, and
   * where those are equal or missing this one, which arrived later, is the later: ordered by
   * partition first, a key moved to a lower partition had every later change dropped as stale.
   */
  public int orderAgainstLast(SourceSequence last) {
    if (kind == Kind.KAFKA_OFFSET && last.kind == Kind.KAFKA_OFFSET) {
      if (component(0) == last.component(0)) {
        // One partition: its offsets, whether or not the positions carry timestamps (a state of
        // an earlier build holds none).
        return Long.compare(component(1), last.component(1));
      }
      if (size > 2 && last.size > 2) {
        int byTime = Long.compare(component(2), last.component(2));
        if (byTime != 0) {
          return byTime;
        }
      }
      return 1;
    }
    return compareTo(last);
  }

  @Override
  public int compareTo(SourceSequence other) {
    if (kind != other.kind) {
      throw new IllegalArgumentException(
          "cannot order a " + kind + " position against a " + other.kind + " position");
    }
    int n = Math.min(size, other.size);
    for (int i = 0; i < n; i++) {
      int c = Long.compare(component(i), other.component(i));
      if (c != 0) {
        return c;
      }
    }
    return Integer.compare(size, other.size);
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
    return kind == that.kind && compareTo(that) == 0;
  }

  @Override
  public int hashCode() {
    return 31 * kind.hashCode() + Arrays.hashCode(components());
  }

  /** The position as the source writes it. */
  @Override
  public String toString() {
    if (isBeforeLog()) {
      return "snapshot (before the log)";
    }
    switch (kind) {
      case POSTGRES_LSN:
        if (size == 2) {
          return "lsn=" + formatLsn(c1) + " (after commit " + formatLsn(c0) + ")";
        }
        return "lsn=" + formatLsn(c0);
      case MYSQL_BINLOG:
        return String.format(Locale.ROOT, "%s%06d:%d#%d", prefix == null ? "" : prefix, c0, c1, c2);
      case KAFKA_OFFSET:
        return "partition=" + c0 + ",offset=" + c1;
      case ARRIVAL:
        return size == 0 ? "arrival" : "arrival #" + c0;
      case UNORDERED:
        return "unordered";
      case COLUMN:
      default:
        return "sequence=" + c0 + (size > 1 ? " (its row's delete)" : "");
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
