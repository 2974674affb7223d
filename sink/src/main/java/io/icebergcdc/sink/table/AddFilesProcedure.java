package io.icebergcdc.sink.table;

import io.icebergcdc.sink.AddFiles;
import org.apache.flink.table.annotation.ArgumentHint;
import org.apache.flink.table.annotation.DataTypeHint;
import org.apache.flink.table.annotation.ProcedureHint;
import org.apache.flink.table.procedure.ProcedureContext;
import org.apache.flink.table.procedures.Procedure;
import org.apache.flink.types.Row;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.NoSuchTableException;

/**
 * {@code CALL lake.`system`.add_files('db.table', 's3://bucket/prefix')}: adopts the Parquet files
 * under a location into a table of the catalog without copying them, in one snapshot ({@link
 * AddFiles}). Returns one row: the files added, their rows and the snapshot id. A table named
 * without a database is in the catalog's default database.
 */
public final class AddFilesProcedure implements Procedure {

  /** The procedure's name in the catalog's {@link #DATABASE} database. */
  static final String NAME = "add_files";

  /** The database of the catalog's procedures. */
  static final String DATABASE = "system";

  private final Catalog catalog;
  private final String catalogName;
  private final String defaultDatabase;

  AddFilesProcedure(Catalog catalog, String catalogName, String defaultDatabase) {
    this.catalog = catalog;
    this.catalogName = catalogName;
    this.defaultDatabase = defaultDatabase;
  }

  @ProcedureHint(
      argument = {
        @ArgumentHint(name = "table", type = @DataTypeHint("STRING")),
        @ArgumentHint(name = "path", type = @DataTypeHint("STRING"))
      },
      output = @DataTypeHint("ROW<added_files BIGINT, added_rows BIGINT, snapshot_id BIGINT>"))
  public Row[] call(ProcedureContext context, String table, String location) {
    return ContextClassLoader.ofThisJar(
        () -> {
          AddFiles.Result result = AddFiles.adopt(load(table), location);
          return new Row[] {Row.of((long) result.files(), result.rows(), result.snapshotId())};
        });
  }

  private Table load(String name) {
    if (name == null || name.isBlank()) {
      throw new IllegalArgumentException("add_files: give the table as '<database>.<table>'");
    }
    TableIdentifier parsed = TableIdentifier.parse(name.trim());
    TableIdentifier identifier =
        parsed.hasNamespace()
            ? parsed
            : TableIdentifier.of(Namespace.of(defaultDatabase), parsed.name());
    try {
      return catalog.loadTable(identifier);
    } catch (NoSuchTableException e) {
      throw new IllegalArgumentException(
          "add_files: there is no table " + identifier + " in catalog " + catalogName, e);
    }
  }
}
