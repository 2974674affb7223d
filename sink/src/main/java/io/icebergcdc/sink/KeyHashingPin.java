package io.icebergcdc.sink;

import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Table;

/**
 * How the keys of a table taken while the job runs ({@link NewTables}) are hashed over the writers,
 * recorded in the table as a property when the job takes it: {@value #PROPERTY} = {@code
 * primary-key} or {@code partition-spec-<id>}.
 *
 * <p>The stream of the shared writer was keyed before the table was known, so each task that keys
 * it (the source's readers and the writer's subtasks) looks the table up on its own, at its first
 * change there, which may be long after the others (a subtask that gets its first key of a small
 * table days later, a reader restarted). Were each to read the table's distribution and partition
 * spec as they are then, a change of either in between would have two tasks hash a key apart, and
 * its rows written on two subtasks. Reading the pin, they agree whatever the table's settings
 * became since, and across Flink's restarts. The job's own tables do not read it: their hashing is
 * fixed when the job is built, and a restore refuses state hashed otherwise.
 */
final class KeyHashingPin {

  static final String PROPERTY = "iceberg-cdc.keys-hashed-by";

  private static final String BY_PRIMARY_KEY = "primary-key";
  private static final String BY_PARTITION_SPEC = "partition-spec-";

  private KeyHashingPin() {}

  /** The pin's value for keys hashed by {@code distribution}, by partitions of {@code spec}. */
  static String of(Distribution distribution, PartitionSpec spec) {
    return distribution == Distribution.PARTITION
        ? BY_PARTITION_SPEC + spec.specId()
        : BY_PRIMARY_KEY;
  }

  /** The distribution that {@code table}'s pin says, or null where it has none. */
  static Distribution distribution(Table table) {
    String pin = table.properties().get(PROPERTY);
    if (pin == null) {
      return null;
    }
    return pin.equals(BY_PRIMARY_KEY) ? Distribution.PRIMARY_KEY : Distribution.PARTITION;
  }

  /**
   * The partition spec that {@code table}'s pin hashes by, where it says {@code
   * partition-spec-<id>}.
   *
   * @throws IllegalStateException where the pin cannot be read or names a spec the table no longer
   *     has
   */
  static PartitionSpec spec(Table table) {
    String pin = table.properties().get(PROPERTY);
    PartitionSpec spec = null;
    if (pin != null && pin.startsWith(BY_PARTITION_SPEC)) {
      try {
        spec = table.specs().get(Integer.parseInt(pin.substring(BY_PARTITION_SPEC.length())));
      } catch (NumberFormatException e) {
        spec = null;
      }
    }
    if (spec == null || spec.isUnpartitioned()) {
      throw new IllegalStateException(
          "table "
              + table.name()
              + " has "
              + PROPERTY
              + " = "
              + pin
              + ", which names no partition spec of the table: the job hashes the keys of a table it"
              + " took while it ran as this property says; remove it and start the job without"
              + " state");
    }
    return spec;
  }
}
