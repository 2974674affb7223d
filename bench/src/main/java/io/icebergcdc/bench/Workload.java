package io.icebergcdc.bench;

import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.types.Types;

/**
 * The kinds of input the benchmarks apply. Every kind writes rows of (BIGINT id, STRING payload,
 * BIGINT amount, BIGINT seq), where {@code seq} is the change's number and so orders the changes of
 * a key; the partitioned kind adds a DATE column {@code day} derived from the key.
 */
enum Workload {
  /** Upserts to {@code keys} keys, delivered in order. */
  UPSERTS("in-order upserts", "upserts"),
  /** The same upserts, one in ten delivered late and one in fifty twice. */
  DISORDERED("upserts, 10% out of order, 2% delivered twice", "disordered"),
  /** Every change a new key. */
  INSERTS("insert-only", "inserts"),
  /** The upserts into a table partitioned by a day derived from the key, over 30 days. */
  PARTITIONED("upserts into a table partitioned by day (30 days)", "partitioned"),
  /** The upserts as Debezium JSON events, parsed in the job. */
  DEBEZIUM_JSON("Debezium JSON upserts, parsing included", "debezium-json");

  static final int DAYS = 30;

  /** 2026-01-01, the first of the days. */
  static final int FIRST_DAY = 20454;

  private static final Schema SCHEMA =
      new Schema(
          List.of(
              Types.NestedField.required(1, "id", Types.LongType.get()),
              Types.NestedField.optional(2, "payload", Types.StringType.get()),
              Types.NestedField.optional(3, "amount", Types.LongType.get()),
              Types.NestedField.optional(4, "seq", Types.LongType.get())),
          Set.of(1));

  private static final Schema PARTITIONED_SCHEMA =
      new Schema(
          Stream.concat(
                  SCHEMA.columns().stream(),
                  Stream.of(Types.NestedField.required(5, "day", Types.DateType.get())))
              .toList(),
          Set.of(1, 5));

  private final String description;
  private final String id;

  Workload(String description, String id) {
    this.description = description;
    this.id = id;
  }

  String description() {
    return description;
  }

  /** The name on the command line and in file names. */
  String id() {
    return id;
  }

  static Workload of(String id) {
    for (Workload workload : values()) {
      if (workload.id.equals(id)) {
        return workload;
      }
    }
    throw new IllegalArgumentException("unknown workload " + id);
  }

  /** The table's schema; its identifier fields are the primary key (with the day, if any). */
  Schema schema() {
    return this == PARTITIONED ? PARTITIONED_SCHEMA : SCHEMA;
  }

  PartitionSpec spec() {
    return this == PARTITIONED
        ? PartitionSpec.builderFor(PARTITIONED_SCHEMA).identity("day").build()
        : PartitionSpec.unpartitioned();
  }

  List<String> keyColumns() {
    return this == PARTITIONED ? List.of("id", "day") : List.of("id");
  }
}
