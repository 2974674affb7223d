package io.icebergcdc.commit;

/** A commit failed in a way that retrying inside the committer cannot fix; the job fails. */
public final class CommitException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  private final boolean surelyNotCommitted;

  public CommitException(String message, Throwable cause) {
    this(message, cause, false);
  }

  /**
   * @param surelyNotCommitted whether the table is known not to hold the commit, so that files
   *     written for it can be removed
   */
  public CommitException(String message, Throwable cause, boolean surelyNotCommitted) {
    super(message, cause);
    this.surelyNotCommitted = surelyNotCommitted;
  }

  public boolean surelyNotCommitted() {
    return surelyNotCommitted;
  }
}
