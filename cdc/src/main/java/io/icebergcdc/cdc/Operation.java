package io.icebergcdc.cdc;

/** What a change event did to its row. */
public enum Operation {
  /** A row was inserted (Debezium {@code op: c}). */
  INSERT('c'),
  /** A row was updated in place; its key did not change (Debezium {@code op: u}). */
  UPDATE('u'),
  /** A row was deleted (Debezium {@code op: d}). */
  DELETE('d'),
  /** A row was read by the initial snapshot of the source (Debezium {@code op: r}). */
  SNAPSHOT_READ('r'),
  /**
   * The source table was truncated (Debezium {@code op: t}): every row whose last change came
   * before it is deleted. It has no rows and no key of its own; it reaches every writer subtask of
   * its table ({@link TruncateCopies}).
   */
  TRUNCATE('t');

  /**
   * Why a truncate fails the job, or goes to the dead letters, where its table's writer cannot
   * apply it.
   */
  public static final String TRUNCATE_NOT_APPLIED =
      "the source table was truncated (operation 't'), which the job applies only with the"
          + " key-indexed writer (sink.delete-mode = position, the default): this table's Iceberg"
          + " table would keep the rows the TRUNCATE removed; with a dead-letter output"
          + " (--dead-letter-path, or --dead-letter-topic from Kafka) the job goes on past it"
          + " (README, Bad input)";

  private final char code;

  Operation(char code) {
    this.code = code;
  }

  /** The one-letter code Debezium uses for this operation. */
  public char code() {
    return code;
  }

  /** Whether the row exists after this change: everything but a delete and a truncate. */
  public boolean isUpsert() {
    return this != DELETE && this != TRUNCATE;
  }

  /**
   * The operation for a Debezium {@code op} code.
   *
   * @throws IllegalArgumentException for a code that is not one of c, u, d, r, t
   */
  public static Operation fromCode(String code) {
    if (code != null && code.length() == 1) {
      for (Operation op : values()) {
        if (op.code == code.charAt(0)) {
          return op;
        }
      }
    }
    throw new IllegalArgumentException(
        "unknown operation '" + code + "' (expected one of c, u, d, r, t)");
  }
}
