package io.icebergcdc.sink.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.icebergcdc.cdc.ChangeSchema;
import io.icebergcdc.cdc.RowKey;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.api.common.TaskInfoImpl;
import org.apache.flink.table.data.GenericRowData;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.GenericFileWriterFactory;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.encryption.EncryptedFiles;
import org.apache.iceberg.hadoop.HadoopCatalog;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The key index's bootstrap from a table's rows. */
class KeyIndexBootstrapTest {

  @TempDir Path dir;

  /**
   * The rows' schema keeps a column the table dropped, before the key: the key is read by its name,
   * not by the position it has in the rows' schema (in the table's, that is another column, and
   * every key was loaded as null: a later change of a key then inserted a second row).
   */
  @Test
  void loadsEachKeyWhereTheRowsSchemaHasAColumnTheTableDropped() throws Exception {
    Schema written =
        new Schema(
            List.of(
                Types.NestedField.optional(1, "note", Types.StringType.get()),
                Types.NestedField.required(2, "id", Types.LongType.get()),
                Types.NestedField.optional(3, "v", Types.StringType.get())),
            java.util.Set.of(2));
    Table table =
        new HadoopCatalog(new Configuration(), dir.toString())
            .createTable(TableIdentifier.of("db", "t"), written);
    var writer =
        new GenericFileWriterFactory.Builder(table)
            .dataFileFormat(FileFormat.PARQUET)
            .build()
            .newDataWriter(
                EncryptedFiles.plainAsEncryptedOutput(
                    table.io().newOutputFile(table.location() + "/data/a.parquet")),
                table.spec(),
                null);
    try (writer) {
      for (long id : new long[] {7, 8}) {
        GenericRecord row = GenericRecord.create(table.schema());
        row.setField("note", "n");
        row.setField("id", id);
        row.setField("v", "v" + id);
        writer.write(row);
      }
    }
    DataFile file = writer.toDataFile();
    table.newAppend().appendFile(file).commit();
    table.updateSchema().deleteColumn("note").commit();

    ChangeSchema schema = new ChangeSchema(written);
    List<String> expected =
        List.of(
            schema.keyOf(GenericRowData.of(null, 7L, null)) + "@0",
            schema.keyOf(GenericRowData.of(null, 8L, null)) + "@1");
    assertThat(loaded(table, schema)).containsExactlyInAnyOrderElementsOf(expected);

    // The key column renamed in the table since: found by its field id.
    table.updateSchema().renameColumn("id", "ident").commit();
    assertThat(loaded(table, schema)).containsExactlyInAnyOrderElementsOf(expected);
  }

  /** The keys the bootstrap loads from the table, as {@code key@position}. */
  private static List<String> loaded(Table table, ChangeSchema schema) throws Exception {
    List<String> loaded = new ArrayList<>();
    new KeyIndexBootstrap<RowKey>(
            schema, new RowKeySelector(), new TaskInfoImpl("writer", 128, 0, 1, 0), key -> key)
        .load(
            table,
            location -> location,
            (key, location, position) -> loaded.add(key + "@" + position));
    return loaded;
  }
}
