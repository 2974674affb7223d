package io.icebergcdc.sink.internal;

import io.icebergcdc.cdc.ChangeSchema;
import io.icebergcdc.cdc.RowKey;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.types.logical.LogicalTypeRoot;
import org.apache.flink.table.types.logical.RowType;
import org.apache.iceberg.PartitionKey;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.PartitionSpecParser;
import org.apache.iceberg.Schema;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.flink.RowDataWrapper;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/**
 * Keys a changelog by primary key, hashed by the Iceberg partition of the row: each partition is
 * written by one subtask. All changes of a key share its partition, since the partition columns are
 * key columns.
 *
 * <p>A key column may be widened from int to long while the job runs (a schema change it follows),
 * and the rows of the new schema then hold longs where the job's schema has ints. So the int
 * columns are read as longs, in either schema, and partitioned as long columns: Iceberg's
 * transforms give an int and the same long the same partition (the bucket hash of an int is that of
 * the long, and identity and truncation keep the value), so a key's partition, and so its subtask,
 * does not change with its column's type, and is what it was before the columns were read as longs.
 */
public final class PartitionedKeySelector implements ChangeKeySelector<PartitionedKey> {

  private static final long serialVersionUID = 1L;

  private final ChangeSchema schema;
  private final PartitionSpec spec;
  private transient PartitionKey partitionKey;

  /** How the rows of the job's schema, and the generic rows of any other, are read. */
  private transient KeyColumns columns;

  /** How the rows of the schemas taken while the job runs are read, by schema id. */
  private transient Map<Integer, KeyColumns> columnsOfSchemas;

  public PartitionedKeySelector(ChangeSchema schema, PartitionSpec spec) {
    this.schema = schema;
    this.spec = spec;
  }

  @Override
  public PartitionedKey keyOf(RowKey key, RowData keyRow) {
    if (keyRow == null) {
      // A copy of a truncate, which has no row: hashed as its key, one copy for each key group
      // (io.icebergcdc.cdc.TruncateCopies#forOneTable).
      return new PartitionedKey(key.hashCode(), key);
    }
    init();
    return keyOf(key, columns.wrap(keyRow));
  }

  @Override
  public PartitionedKey keyOf(RowKey key, RowData row, ChangeSchema rowSchema) {
    init();
    if (rowSchema == schema || rowSchema.rowType().equals(schema.rowType())) {
      return keyOf(key, columns.wrap(row));
    }
    KeyColumns ofSchema =
        columnsOfSchemas.computeIfAbsent(
            rowSchema.schema().schemaId(),
            id -> new KeyColumns(schema, rowSchema.rowType(), rowSchema.schema()));
    return keyOf(key, ofSchema.wrap(row));
  }

  private PartitionedKey keyOf(RowKey key, StructLike row) {
    partitionKey.partition(row);
    // The partition path is a stable text form of the partition values in every JVM.
    return new PartitionedKey(partitionKey.toPath().hashCode(), key);
  }

  private void init() {
    if (partitionKey == null) {
      Schema widened = intsAsLongs(schema.schema());
      partitionKey =
          new PartitionKey(
              PartitionSpecParser.fromJson(widened, PartitionSpecParser.toJson(spec)), widened);
      columns = new KeyColumns(schema, schema.rowType(), schema.schema());
      columnsOfSchemas = new HashMap<>();
    }
  }

  /** The schema with its int columns as longs, their ids and names kept. */
  private static Schema intsAsLongs(Schema schema) {
    List<Types.NestedField> columns = new ArrayList<>();
    for (Types.NestedField column : schema.columns()) {
      columns.add(
          column.type().typeId() == Type.TypeID.INTEGER
              ? Types.NestedField.of(
                  column.fieldId(), column.isOptional(), column.name(), Types.LongType.get())
              : column);
    }
    return new Schema(columns, schema.identifierFieldIds());
  }

  /**
   * A row of a schema of the table, as the job's schema with its ints as longs reads it: the
   * columns keep their positions in every schema the table takes (columns are only added behind,
   * never dropped or moved).
   */
  private static final class KeyColumns implements StructLike {
    private final RowDataWrapper wrapper;

    /** Per column, whether the job's schema has an int there. */
    private final boolean[] ints;

    /** Per column, whether the row's schema has a long there (an int widened). */
    private final boolean[] longs;

    private RowData row;

    KeyColumns(ChangeSchema job, RowType rowType, Schema rowSchema) {
      this.wrapper = new RowDataWrapper(rowType, rowSchema.asStruct());
      List<Types.NestedField> fields = job.schema().columns();
      this.ints = new boolean[fields.size()];
      this.longs = new boolean[fields.size()];
      for (int i = 0; i < ints.length; i++) {
        ints[i] = fields.get(i).type().typeId() == Type.TypeID.INTEGER;
        longs[i] = rowType.getTypeAt(i).getTypeRoot() == LogicalTypeRoot.BIGINT;
      }
    }

    StructLike wrap(RowData keyRow) {
      this.row = keyRow;
      wrapper.wrap(keyRow);
      return this;
    }

    @Override
    public int size() {
      return ints.length;
    }

    @Override
    public <T> T get(int pos, Class<T> javaClass) {
      if (!ints[pos] || row.isNullAt(pos)) {
        return wrapper.get(pos, javaClass);
      }
      long value;
      if (row instanceof GenericRowData generic) {
        // A generic row of any schema holds an Integer or, widened, a Long.
        value = ((Number) generic.getField(pos)).longValue();
      } else {
        value = longs[pos] ? row.getLong(pos) : row.getInt(pos);
      }
      return javaClass.cast(value);
    }

    @Override
    public <T> void set(int pos, T value) {
      throw new UnsupportedOperationException("read only");
    }
  }
}
