package io.icebergcdc.commit;

import java.util.UUID;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;

/**
 * The build of an operator of several tables that takes the tables that appear while the job runs:
 * a number drawn when the job is built, which the operator writes into its state. Flink restarts a
 * failed job as it was built, the operator deserialized with its number, so a restored state that
 * holds the operator's own number is of the same build, and the tables that appeared in it are
 * taken back. A job built again ({@code apply} started again, whatever its tables) draws another:
 * the restored tables it was not built with are tables taken out of the job, whose state it drops,
 * and the tables that appeared before and still match are among the ones it was built with.
 */
public final class TablesBuiltWith {

  /** The operator state that holds the number, one value per subtask (a union list). */
  public static final ListStateDescriptor<Long> STATE =
      new ListStateDescriptor<>("tables-built-with", Types.LONG);

  private TablesBuiltWith() {}

  /** The number of a new build. */
  public static long draw() {
    return UUID.randomUUID().getMostSignificantBits();
  }
}
