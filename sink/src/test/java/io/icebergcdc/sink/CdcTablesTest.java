package io.icebergcdc.sink;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Set;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;

class CdcTablesTest {

  private static final Schema SCHEMA =
      new Schema(
          List.of(
              Types.NestedField.required(1, "id", Types.LongType.get()),
              Types.NestedField.required(2, "day", Types.DateType.get()),
              Types.NestedField.required(3, "ts", Types.TimestampType.withoutZone()),
              Types.NestedField.required(4, "region", Types.StringType.get()),
              Types.NestedField.optional(5, "note", Types.StringType.get())),
          Set.of(1, 2, 3, 4));

  @Test
  void parsesEveryTransform() {
    PartitionSpec spec =
        CdcTables.parsePartitionSpec(
            SCHEMA, "region, bucket(16, id), truncate(3, region), days(day), hours(ts)");
    assertThat(spec.fields())
        .extracting(f -> f.transform().toString())
        .containsExactly("identity", "bucket[16]", "truncate[3]", "day", "hour");
    assertThat(CdcTables.parsePartitionSpec(SCHEMA, "years(day)").fields()).hasSize(1);
    assertThat(CdcTables.parsePartitionSpec(SCHEMA, "months(ts)").fields()).hasSize(1);
    assertThat(CdcTables.parsePartitionSpec(SCHEMA, "identity(id)").fields()).hasSize(1);
    assertThat(CdcTables.parsePartitionSpec(SCHEMA, " ").isUnpartitioned()).isTrue();
  }

  @Test
  void rejectsBadSpecsNamingThePart() {
    assertThatThrownBy(() -> CdcTables.parsePartitionSpec(SCHEMA, "bucket(id)"))
        .hasMessageContaining("bucket(id)");
    assertThatThrownBy(() -> CdcTables.parsePartitionSpec(SCHEMA, "weeks(day)"))
        .hasMessageContaining("weeks");
    assertThatThrownBy(() -> CdcTables.parsePartitionSpec(SCHEMA, "colour"))
        .hasMessageContaining("'colour'");
  }

  @Test
  void partitionColumnsMustBeKeyColumns() {
    PartitionSpec spec = CdcTables.parsePartitionSpec(SCHEMA, "note");
    assertThatThrownBy(() -> CdcTables.checkPartitionColumnsAreKeyColumns(SCHEMA, spec))
        .hasMessageContaining("'note'")
        .hasMessageContaining("primary key");
  }
}
