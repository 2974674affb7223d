package io.icebergcdc.cdc;

import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.StringData;
import org.apache.iceberg.Schema;
import org.apache.iceberg.types.Types;

/** Change events of a small table {@code (id bigint primary key, name string)}, for tests. */
public final class TestChanges {

  public static final String TABLE = "db.items";

  public static final Schema SCHEMA =
      new Schema(
          java.util.List.of(
              Types.NestedField.required(1, "id", Types.LongType.get()),
              Types.NestedField.optional(2, "name", Types.StringType.get())),
          java.util.Set.of(1));

  public static final ChangeSchema CHANGE_SCHEMA = new ChangeSchema(SCHEMA);

  private TestChanges() {}

  public static GenericRowData row(long id, String name) {
    return GenericRowData.of(id, name == null ? null : StringData.fromString(name));
  }

  public static ChangeEvent insert(long id, String name, long lsn) {
    return change(Operation.INSERT, id, name, lsn);
  }

  public static ChangeEvent update(long id, String name, long lsn) {
    return change(Operation.UPDATE, id, name, lsn);
  }

  /** An update of {@code id} whose name the source did not send (an unchanged TOASTed value). */
  public static ChangeEvent updateWithoutName(long id, long lsn) {
    return change(Operation.UPDATE, id, null, lsn).withUnavailableColumns(ColumnMask.EMPTY.with(1));
  }

  public static ChangeEvent delete(long id, long lsn) {
    GenericRowData before = row(id, null);
    return new ChangeEvent(
        TABLE,
        Operation.DELETE,
        CHANGE_SCHEMA.keyOf(before),
        before,
        null,
        SourceSequence.postgresLsn(lsn),
        lsn);
  }

  private static ChangeEvent change(Operation op, long id, String name, long lsn) {
    GenericRowData after = row(id, name);
    return new ChangeEvent(
        TABLE, op, CHANGE_SCHEMA.keyOf(after), null, after, SourceSequence.postgresLsn(lsn), lsn);
  }
}
