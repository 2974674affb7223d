package io.icebergcdc.commit;

import org.apache.flink.runtime.throwable.ThrowableAnnotation;
import org.apache.flink.runtime.throwable.ThrowableType;

/**
 * A table of the job that the catalog no longer has, or has as another table (dropped and created
 * again): the job's state of it (the applied sequence and file position of every key, checkpoints
 * to commit) describes the table it wrote, so the job cannot go on with it. The job ends, and Flink
 * does not restart it, since a restart meets the same catalog and state; the message names the
 * table and the ways out.
 */
@ThrowableAnnotation(ThrowableType.NonRecoverableError)
public final class ReplacedTableException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  /**
   * What a user can do about it: the same for a table dropped while the job runs and for one
   * created again since.
   */
  static final String WAYS_OUT =
      " To write it anew and keep the other tables' state: drop it from the catalog if it was"
          + " created again, resume the job once with it left out of the job's tables"
          + " (--restore-from latest; that run drops the job's state of it), then once more with"
          + " it back in: a database capture reads it whole again from the source then. Or start"
          + " the job without state.";

  private ReplacedTableException(String message, Throwable cause) {
    super(message, cause);
  }

  /** {@code table}, which the job writes, was dropped from the catalog (or renamed) meanwhile. */
  public static ReplacedTableException dropped(String table, Throwable cause) {
    return new ReplacedTableException(
        "table "
            + table
            + " of the job is no longer in the catalog (dropped or renamed while the job ran):"
            + " its changes cannot be committed."
            + WAYS_OUT,
        cause);
  }

  /**
   * The restored state of {@code table} was written for the table of UUID {@code restoredUuid},
   * where the catalog's is {@code uuid}.
   */
  public static ReplacedTableException replaced(
      String table, String restoredUuid, String uuid, String pending) {
    return new ReplacedTableException(
        "the restored state of table "
            + table
            + " belongs to another table (UUID "
            + restoredUuid
            + "; this one is "
            + uuid
            + "): the table was dropped and created again, or the job now names another table."
            + " The job's state (pending checkpoints "
            + pending
            + ", the applied sequence and row location of every key) describes that table."
            + WAYS_OUT
            + " Or point the job at the table it wrote.",
        null);
  }
}
