package io.icebergcdc.sink;

import io.icebergcdc.cdc.RefusedSourceException;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.PartitionSpecParser;
import org.apache.iceberg.Table;

/**
 * How the keys of a table taken while the job runs ({@link NewTables}) are hashed over the writers,
 * recorded in the table as a property when the job takes it: {@value #PROPERTY} = {@code
 * primary-key}, or {@code partition-spec:} and the partition spec as Iceberg writes it in JSON (so
 * that it can be read after the table dropped the spec).
 *
 * <p>The stream of the shared writer was keyed before the table was known, so each task that keys
 * it (the source's readers and the writer's subtasks) looks the table up on its own, at its first
 * change there, which may be long after the others (a subtask that gets its first key of a small
 * table days later, a reader restarted). Were each to read the table's distribution and partition
 * spec as they are then, a change of either in between would have two tasks hash a key apart, and
 * its rows written on two subtasks. Reading the pin, they agree whatever the table's settings
 * became since, and across Flink's restarts. The job's own tables are hashed as the job was built;
 * where the job takes tables in flight, it records their hashing over a pin that says otherwise,
 * for the day one of them is taken back in flight (dropped from the source, its changes still to
 * apply).
 */
final class KeyHashingPin {

  static final String PROPERTY = "iceberg-cdc.keys-hashed-by";

  private static final String BY_PRIMARY_KEY = "primary-key";
  private static final String BY_PARTITION_SPEC = "partition-spec:";

  private KeyHashingPin() {}

  /**
   * How a table's keys are hashed: by the partitions of {@code spec}, or by primary key if null.
   */
  record Hashing(PartitionSpec spec) {
    Distribution distribution() {
      return spec == null ? Distribution.PRIMARY_KEY : Distribution.PARTITION;
    }
  }

  /** The pin's value for keys hashed by {@code distribution}, by partitions of {@code spec}. */
  static String of(Distribution distribution, PartitionSpec spec) {
    return distribution == Distribution.PARTITION
        ? BY_PARTITION_SPEC + PartitionSpecParser.toJson(spec)
        : BY_PRIMARY_KEY;
  }

  /**
   * The hashing {@code table}'s pin records, or null where it has none.
   *
   * @throws RefusedSourceException where the pin cannot be read (Flink does not retry: every
   *     restart would meet it)
   */
  static Hashing read(Table table) {
    String pin = table.properties().get(PROPERTY);
    if (pin == null) {
      return null;
    }
    if (pin.equals(BY_PRIMARY_KEY)) {
      return new Hashing(null);
    }
    if (pin.startsWith(BY_PARTITION_SPEC)) {
      try {
        PartitionSpec spec = bind(table.schema(), pin.substring(BY_PARTITION_SPEC.length()));
        if (spec.isPartitioned()) {
          return new Hashing(spec);
        }
      } catch (RuntimeException | java.io.IOException e) {
        // Refused below.
      }
    }
    throw new RefusedSourceException(
        "table "
            + table.name()
            + " has "
            + PROPERTY
            + " = '"
            + pin
            + "', which the job cannot read: it records there how it hashes the keys of a table it"
            + " took while it ran, '"
            + BY_PRIMARY_KEY
            + "' or '"
            + BY_PARTITION_SPEC
            + "' and a partition spec of the table's columns in JSON; remove the property (the job"
            + " records it again as it takes the table) and resume the job with --restore-from"
            + " latest");
  }

  /**
   * {@code spec} bound to {@code schema}'s columns: its partition values typed as that schema has
   * its source columns (a restored writer's schema, whose key column may be an int the table has
   * since widened to a long).
   */
  static PartitionSpec bind(org.apache.iceberg.Schema schema, PartitionSpec spec) {
    if (spec.isUnpartitioned()) {
      return spec;
    }
    try {
      return bind(schema, PartitionSpecParser.toJson(spec));
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  /**
   * The spec written in {@code json} bound to {@code schema}'s source columns of it alone: Iceberg
   * keeps the names of the fields of the table's own specs clear of its columns', not those of a
   * spec the table has dropped since.
   */
  private static PartitionSpec bind(org.apache.iceberg.Schema schema, String json)
      throws java.io.IOException {
    java.util.Set<Integer> sources = new java.util.HashSet<>();
    for (com.fasterxml.jackson.databind.JsonNode field :
        org.apache.iceberg.util.JsonUtil.mapper().readTree(json).get("fields")) {
      sources.add(field.get("source-id").asInt());
    }
    return PartitionSpecParser.fromJson(
        org.apache.iceberg.types.TypeUtil.select(schema, sources), json);
  }
}
