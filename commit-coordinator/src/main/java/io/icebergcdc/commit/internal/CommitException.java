package io.icebergcdc.commit.internal;

/** A commit failed in a way that retrying inside the committer cannot fix; the job fails. */
public final class CommitException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  CommitException(String message, Throwable cause) {
    super(message, cause);
  }
}
