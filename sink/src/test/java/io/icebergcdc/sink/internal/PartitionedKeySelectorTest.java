package io.icebergcdc.sink.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.icebergcdc.cdc.ChangeSchema;
import io.icebergcdc.cdc.RowKey;
import java.util.Set;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.binary.BinaryRowData;
import org.apache.flink.table.data.writer.BinaryRowWriter;
import org.apache.iceberg.PartitionKey;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.flink.RowDataWrapper;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class PartitionedKeySelectorTest {

  private static final Schema SCHEMA =
      new Schema(
          java.util.List.of(
              Types.NestedField.required(1, "id", Types.IntegerType.get()),
              Types.NestedField.required(2, "region", Types.StringType.get()),
              Types.NestedField.optional(3, "name", Types.StringType.get())),
          Set.of(1, 2));

  /** The schema the table took: its key column widened to a long, a column added. */
  private static final ChangeSchema WIDENED_SCHEMA =
      new ChangeSchema(
          new Schema(
              1,
              java.util.List.of(
                  Types.NestedField.required(1, "id", Types.LongType.get()),
                  Types.NestedField.required(2, "region", Types.StringType.get()),
                  Types.NestedField.optional(3, "name", Types.StringType.get()),
                  Types.NestedField.optional(4, "note", Types.StringType.get())),
              Set.of(1, 2)));

  private static PartitionSpec spec(String transform) {
    PartitionSpec.Builder spec = PartitionSpec.builderFor(SCHEMA);
    return switch (transform) {
      case "bucket" -> spec.bucket("id", 16).build();
      case "identity" -> spec.identity("id").identity("region").build();
      case "truncate" -> spec.truncate("id", 10).bucket("region", 4).build();
      default -> throw new IllegalArgumentException(transform);
    };
  }

  /**
   * A key's partition hash is the same for the job schema's row (binary, as the serializer reads
   * it), for a generic row, for a row of a schema whose key column was widened to a long, and as
   * the selector gave it before it read ints as longs: a restored job's keys stay on their subtask.
   */
  @ParameterizedTest
  @ValueSource(strings = {"bucket", "identity", "truncate"})
  void aKeyKeepsItsPartitionWhenItsIntColumnIsWidened(String transform) {
    PartitionSpec spec = spec(transform);
    ChangeSchema schema = new ChangeSchema(SCHEMA);
    PartitionedKeySelector selector = new PartitionedKeySelector(schema, spec);
    java.util.Set<Integer> partitions = new java.util.HashSet<>();
    for (int id :
        new int[] {
          0, 1, 7, 42, -3, 1_000_003, Integer.MAX_VALUE, Integer.MIN_VALUE, Integer.MIN_VALUE + 3
        }) {
      GenericRowData generic =
          GenericRowData.of(
              id, StringData.fromString("eu-" + (id % 3)), StringData.fromString("x"));
      RowKey key = schema.keyOf(generic);
      int expected = beforeWidening(schema, spec, generic);
      GenericRowData widened =
          GenericRowData.of(
              (long) id,
              StringData.fromString("eu-" + (id % 3)),
              StringData.fromString("x"),
              StringData.fromString("a column added"));

      assertThat(selector.keyOf(key, binary(id, "eu-" + (id % 3))).hashCode()).isEqualTo(expected);
      assertThat(selector.keyOf(key, generic).hashCode()).isEqualTo(expected);
      assertThat(selector.keyOf(key, widened).hashCode()).isEqualTo(expected);
      assertThat(selector.keyOf(key, widened)).isEqualTo(selector.keyOf(key, generic));
      assertThat(
              selector.keyOf(key, widenedBinary(id, "eu-" + (id % 3)), WIDENED_SCHEMA).hashCode())
          .as("a binary row of the widened schema, as compaction reads it back")
          .isEqualTo(expected);
      partitions.add(expected);
    }
    assertThat(partitions).as("keys in several partitions").hasSizeGreaterThan(1);
  }

  /** A long beyond the int range, which only the widened column holds, has a partition too. */
  @ParameterizedTest
  @ValueSource(strings = {"bucket", "identity", "truncate"})
  void aWidenedKeyBeyondTheIntRangeIsPartitioned(String transform) {
    ChangeSchema schema = new ChangeSchema(SCHEMA);
    PartitionedKeySelector selector = new PartitionedKeySelector(schema, spec(transform));
    GenericRowData wide =
        GenericRowData.of(5_000_000_000L, StringData.fromString("eu-1"), null, null);
    GenericRowData other =
        GenericRowData.of(5_000_000_001L, StringData.fromString("eu-1"), null, null);

    assertThat(selector.keyOf(new RowKey(new byte[] {1}), wide))
        .isEqualTo(selector.keyOf(new RowKey(new byte[] {1}), wide))
        .isEqualTo(
            selector.keyOf(
                new RowKey(new byte[] {1}), widenedBinary(5_000_000_000L, "eu-1"), WIDENED_SCHEMA));
    assertThat(selector.keyOf(new RowKey(new byte[] {1}), wide))
        .isNotEqualTo(selector.keyOf(new RowKey(new byte[] {2}), other));
  }

  /** The hash as the selector computed it with the int columns read as ints. */
  private static int beforeWidening(ChangeSchema schema, PartitionSpec spec, RowData row) {
    PartitionKey partition = new PartitionKey(spec, schema.schema());
    partition.partition(new RowDataWrapper(schema.rowType(), schema.schema().asStruct()).wrap(row));
    return partition.toPath().hashCode();
  }

  private static BinaryRowData widenedBinary(long id, String region) {
    BinaryRowData row = new BinaryRowData(4);
    BinaryRowWriter writer = new BinaryRowWriter(row);
    writer.writeLong(0, id);
    writer.writeString(1, StringData.fromString(region));
    writer.writeString(2, StringData.fromString("x"));
    writer.writeString(3, StringData.fromString("a column added"));
    writer.complete();
    return row;
  }

  private static BinaryRowData binary(int id, String region) {
    BinaryRowData row = new BinaryRowData(3);
    BinaryRowWriter writer = new BinaryRowWriter(row);
    writer.writeInt(0, id);
    writer.writeString(1, StringData.fromString(region));
    writer.writeString(2, StringData.fromString("x"));
    writer.complete();
    return row;
  }
}
