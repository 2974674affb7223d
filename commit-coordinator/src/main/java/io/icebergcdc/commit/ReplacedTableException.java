package io.icebergcdc.commit;

import java.util.function.Supplier;
import org.apache.flink.runtime.throwable.ThrowableAnnotation;
import org.apache.flink.runtime.throwable.ThrowableType;
import org.apache.iceberg.exceptions.NoSuchTableException;

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
      " A database capture job of several tables whose state its own chunked snapshot wrote"
          + " (--snapshot-chunk-rows above 0 from its first start) can write it anew and keep the"
          + " other tables' state:"
          + " resume it with --restore-from latest and --read-again naming the table's source table"
          + " (schema.table or database.table), which drops the job's state of the table and reads"
          + " it whole again from the source. Other jobs start without state.";

  private ReplacedTableException(String message, Throwable cause) {
    super(message, cause);
  }

  /**
   * {@code table}, which the job writes, was dropped from the catalog (or renamed) meanwhile, as
   * {@code cause} says; {@code table} may be null where only the cause names it.
   */
  public static ReplacedTableException dropped(String table, NoSuchTableException cause) {
    return new ReplacedTableException(
        (table != null
                ? "table " + table + " of the job"
                : "a table of the job (" + cause.getMessage() + ")")
            + " is no longer in the catalog (dropped or renamed while the job ran): its"
            + " changes cannot be committed."
            + WAYS_OUT,
        cause);
  }

  /**
   * {@code table}, which the job writes, was dropped and created again while it ran, as {@code
   * cause} (may be null) says.
   */
  public static ReplacedTableException recreated(
      String table, String uuid, String newUuid, Throwable cause) {
    return new ReplacedTableException(
        "table "
            + table
            + " of the job was dropped and created again while the job ran (UUID "
            + (uuid == null ? "unknown" : uuid)
            + ", now "
            + newUuid
            + "): the job's state describes the table it wrote."
            + WAYS_OUT,
        cause);
  }

  /** Whether two UUIDs of a table's name, both known (not null), are of two tables. */
  public static boolean isOtherTable(String uuid, String uuidNow) {
    return uuid != null && uuidNow != null && !uuid.equals(uuidNow);
  }

  /**
   * Nothing where {@code table} has the UUID it had when the job first loaded it, or either is not
   * known (null); otherwise a {@link #recreated}: a table dropped and created again under its name.
   */
  public static void requireSameTable(String table, String uuid, String uuidNow) {
    if (isOtherTable(uuid, uuidNow)) {
      throw recreated(table, uuid, uuidNow, null);
    }
  }

  /**
   * What {@code load} loads, a table the job writes; where the catalog does not have it, tried
   * again over some 3.5 s ({@link #CONFIRMATION_PAUSES_MS}: a REST catalog answers any 404 so, an
   * ingress's in a rollout too), then a {@link #dropped} naming {@code table} (null: as the
   * catalog's exception names it).
   */
  public static <T> T unlessDropped(String table, Supplier<T> load) {
    return unlessDropped(table, load, CONFIRMATION_PAUSES_MS);
  }

  /** Pauses before each load of a table the catalog did not have, the first at once. */
  static final long[] CONFIRMATION_PAUSES_MS = {0, 500, 1_000, 2_000};

  /** One load, for callers that let a failure pass and try again later. */
  static final long[] AT_ONCE = {0};

  static <T> T unlessDropped(String table, Supplier<T> load, long[] pauses) {
    NoSuchTableException last = null;
    for (long pause : pauses) {
      if (pause > 0) {
        try {
          Thread.sleep(pause);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          // A task cancelled meanwhile: no drop was confirmed.
          throw new IllegalStateException("interrupted while loading table " + table, e);
        }
      }
      try {
        return load.get();
      } catch (NoSuchTableException e) {
        last = e;
      }
    }
    throw dropped(table, last);
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
