package io.icebergcdc.sink;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.hadoop.HadoopCatalog;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

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

  private static Table table(Path dir, Schema schema) {
    HadoopCatalog catalog = new HadoopCatalog(new Configuration(), dir.toString());
    return CdcTables.createOrLoad(
        catalog, TableIdentifier.of("db", "t"), schema, null, 2, List.of("id"));
  }

  @Test
  void evolvesATableToAChangedSourceSchema(@TempDir Path dir) {
    Table table =
        table(
            dir,
            new Schema(
                List.of(
                    Types.NestedField.required(1, "id", Types.IntegerType.get()),
                    Types.NestedField.required(2, "qty", Types.IntegerType.get()),
                    Types.NestedField.required(3, "gone", Types.StringType.get()),
                    Types.NestedField.optional(4, "price", Types.DecimalType.of(10, 2)),
                    Types.NestedField.optional(5, "total", Types.LongType.get()),
                    Types.NestedField.required(7, "code", Types.StringType.get()),
                    Types.NestedField.required(8, "rank", Types.IntegerType.get())),
                Set.of(1)));
    Schema source =
        new Schema(
            List.of(
                Types.NestedField.required(1, "id", Types.LongType.get()),
                Types.NestedField.required(2, "qty", Types.LongType.get()),
                Types.NestedField.optional(4, "price", Types.DecimalType.of(12, 2)),
                Types.NestedField.optional(5, "total", Types.IntegerType.get()),
                Types.NestedField.optional(6, "note", Types.StringType.get()),
                // NOT NULL dropped in the source, once with the type widened too.
                Types.NestedField.optional(7, "code", Types.StringType.get()),
                Types.NestedField.optional(8, "rank", Types.LongType.get())),
            Set.of(1));

    List<String> changes = CdcTables.evolve(table, source, true);

    assertThat(changes)
        .containsExactlyInAnyOrder(
            "widened column 'id' from int to long",
            "widened column 'qty' from int to long",
            "widened column 'price' from decimal(10, 2) to decimal(12, 2)",
            "added column 'note' string",
            "made column 'gone' optional, the source dropped it",
            "made column 'code' optional, the source allows nulls in it",
            "made column 'rank' optional, the source allows nulls in it",
            "widened column 'rank' from int to long");
    table.refresh();
    assertThat(table.schema().findField("id").type()).isEqualTo(Types.LongType.get());
    assertThat(table.schema().findField("gone").isOptional()).isTrue();
    assertThat(table.schema().findField("note").isOptional()).isTrue();
    assertThat(table.schema().findField("code").isOptional()).isTrue();
    assertThat(table.schema().findField("rank").isOptional()).isTrue();
    assertThat(table.schema().findField("rank").type()).isEqualTo(Types.LongType.get());
    // A narrower source type (int into a long column) fits as it is.
    assertThat(table.schema().findField("total").type()).isEqualTo(Types.LongType.get());
    assertThat(table.schema().identifierFieldNames()).containsExactly("id");
    // Done once: the same source schema changes nothing more.
    assertThat(CdcTables.evolve(table, source, true)).isEmpty();
  }

  @Test
  void refusesTypeChangesIcebergCannotFollowOnlyWhenStrict(@TempDir Path dir) {
    Table table =
        table(
            dir,
            new Schema(
                List.of(
                    Types.NestedField.required(1, "id", Types.LongType.get()),
                    Types.NestedField.optional(2, "v", Types.StringType.get())),
                Set.of(1)));
    Schema source =
        new Schema(
            List.of(
                Types.NestedField.required(1, "id", Types.LongType.get()),
                Types.NestedField.optional(2, "v", Types.IntegerType.get())),
            Set.of(1));

    assertThatThrownBy(() -> CdcTables.evolve(table, source, true))
        .hasMessageContaining("column 'v'")
        .hasMessageContaining("int in the source and string in the Iceberg table");
    assertThat(CdcTables.evolve(table, source, false)).isEmpty();

    Schema keyGone =
        new Schema(
            List.of(
                Types.NestedField.required(3, "other", Types.LongType.get()),
                Types.NestedField.optional(2, "v", Types.StringType.get())),
            Set.of(3));
    assertThatThrownBy(() -> CdcTables.evolve(table, keyGone, false))
        .hasMessageContaining("primary key column 'id'");
  }
}
