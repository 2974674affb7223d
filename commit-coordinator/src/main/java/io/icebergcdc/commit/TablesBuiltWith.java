package io.icebergcdc.commit;

import java.nio.charset.StandardCharsets;
import java.util.Collection;
import java.util.TreeSet;
import java.util.UUID;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;

/**
 * The tables an operator of several tables was built with, as one number, which an operator that
 * takes the tables that appear while the job runs writes into its state. A restored state that
 * holds its own number is the state of the job as it was built (Flink's restart after a failure, a
 * resume of the same job): the tables that appeared before are taken back from it. A job built with
 * other tables (its pattern changed, a table taken out, or the tables that exist at its start)
 * treats the restored tables it does not write as tables taken out of the job.
 */
public final class TablesBuiltWith {

  /** The operator state that holds the number, one value per subtask (a union list). */
  public static final ListStateDescriptor<Long> STATE =
      new ListStateDescriptor<>("tables-built-with", Types.LONG);

  private TablesBuiltWith() {}

  /** The number of an operator built with {@code tables}, whatever their order. */
  public static long of(Collection<String> tables) {
    return UUID.nameUUIDFromBytes(
            String.join("\n", new TreeSet<>(tables)).getBytes(StandardCharsets.UTF_8))
        .getMostSignificantBits();
  }
}
