package io.icebergcdc.sink.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.ChangeSchema;
import io.icebergcdc.cdc.ColumnMask;
import io.icebergcdc.cdc.Operation;
import io.icebergcdc.cdc.SourceSequence;
import java.math.BigDecimal;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.apache.flink.table.data.DecimalData;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.StringData;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.hadoop.HadoopCatalog;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The rows of a change in the schema a writer writes: a change of the job's schema, or of an
 * earlier one, gets the current schema's columns by field id, each value widened as its column was.
 */
class RowSchemasTest {

  @TempDir Path warehouse;

  private Table table() {
    HadoopCatalog catalog = new HadoopCatalog(new Configuration(), warehouse.toString());
    return catalog.createTable(
        TableIdentifier.of("db", "t"),
        new Schema(
            List.of(
                Types.NestedField.required(1, "id", Types.LongType.get()),
                Types.NestedField.optional(2, "price", Types.DecimalType.of(10, 2)),
                Types.NestedField.optional(3, "ratio", Types.FloatType.get()),
                Types.NestedField.optional(4, "big", Types.StringType.get())),
            java.util.Set.of(1)),
        org.apache.iceberg.PartitionSpec.unpartitioned(),
        Map.of("format-version", "3"));
  }

  @Test
  void aChangeOfTheJobsSchemaGetsTheNewerSchemasColumnsAndWidenedValues() {
    Table table = table();
    ChangeSchema job = new ChangeSchema(table.schema());
    table
        .updateSchema()
        .updateColumn("price", Types.DecimalType.of(14, 2))
        .updateColumn("ratio", Types.DoubleType.get())
        .addColumn("note", Types.StringType.get())
        .commit();
    table.refresh();
    int evolved = table.schema().schemaId();
    RowSchemas schemas = new RowSchemas(job, () -> table);

    GenericRowData newRow =
        GenericRowData.of(
            2L,
            DecimalData.fromBigDecimal(new BigDecimal("123456789012.34"), 14, 2),
            0.25d,
            null,
            StringData.fromString("n"));
    ChangeEvent newer =
        upsert(job, newRow).inSchema(evolved, null, newRow, ColumnMask.EMPTY, ColumnMask.EMPTY);
    assertThat(schemas.fit(newer)).isSameAs(newer);
    assertThat(schemas.current().schema().schemaId()).isEqualTo(evolved);

    // Of the job's schema, with its text column not sent (an unchanged TOASTed value).
    GenericRowData oldRow =
        GenericRowData.of(
            1L, DecimalData.fromBigDecimal(new BigDecimal("12.50"), 10, 2), 0.5f, null);
    ChangeEvent old = upsert(job, oldRow).withUnavailableColumns(ColumnMask.EMPTY.with(3));
    ChangeEvent fitted = schemas.fit(old);
    assertThat(fitted.rowSchemaId()).isEqualTo(evolved);
    GenericRowData row = (GenericRowData) fitted.after();
    assertThat(row.getArity()).isEqualTo(5);
    assertThat(row.getField(0)).isEqualTo(1L);
    assertThat(((DecimalData) row.getField(1)).precision()).isEqualTo(14);
    assertThat(((DecimalData) row.getField(1)).toBigDecimal()).isEqualByComparingTo("12.50");
    assertThat(row.getField(2)).isEqualTo(0.5d);
    assertThat(row.isNullAt(4)).isTrue();
    assertThat(fitted.unavailableColumns()).isEqualTo(ColumnMask.EMPTY.with(3));
    assertThat(fitted.missingColumns()).isEqualTo(ColumnMask.EMPTY.with(3));
    assertThat(fitted.sequence()).isEqualTo(old.sequence());
  }

  @Test
  void aChangeOfASchemaTheTableHasNotFailsNamingIt() {
    Table table = table();
    ChangeSchema job = new ChangeSchema(table.schema());
    RowSchemas schemas = new RowSchemas(job, () -> table);
    GenericRowData row = GenericRowData.of(1L, null, null, null);
    ChangeEvent unknown =
        upsert(job, row).inSchema(42, null, row, ColumnMask.EMPTY, ColumnMask.EMPTY);
    assertThatThrownBy(() -> schemas.fit(unknown))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("schema 42")
        .hasMessageContaining("db.t");
  }

  private static ChangeEvent upsert(ChangeSchema schema, GenericRowData row) {
    return new ChangeEvent(
        "src.t", Operation.UPDATE, schema.keyOf(row), null, row, SourceSequence.postgresLsn(5), 0);
  }
}
