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
 * columns are read as longs, in either schema: a key whose int columns hold values in the int range
 * is partitioned as the job's schema partitions it (its partition, and so its subtask, does not
 * change with its column's type), and one with a value beyond it, which only a widened column
 * holds, as though the columns were longs (Iceberg gives an int and the same long the same bucket
 * and identity; an int's truncation, computed in int arithmetic, differs near the int range's
 * ends).
 */
public final class PartitionedKeySelector implements ChangeKeySelector<PartitionedKey> {

  private static final long serialVersionUID = 1L;

  private final ChangeSchema schema;
  private final PartitionSpec spec;

  /** The partition of a key whose int columns hold ints: as the job's schema has them. */
  private transient PartitionKey partitionKey;

  /** The partition of a key with a value beyond the int range in an int column: as longs. */
  private transient PartitionKey widenedKey;

  /** How the rows of the job's schema, and the generic rows of any other, are read. */
  private transient KeyColumns columns;

  /** How the rows of the schemas taken while the job runs are read, by schema id. */
  private transient Map<Integer, KeyColumns> columnsOfSchemas;

  public PartitionedKeySelector(ChangeSchema schema, PartitionSpec spec) {
    this.schema = schema;
    this.spec = spec;
  }

  /** The id of the partition spec the keys are hashed by. */
  public int specId() {
    return spec.specId();
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
    if (rowSchema == schema) {
      return keyOf(key, columns.wrap(row));
    }
    // By schema id, not by comparing row types for every row: a schema equal to the job's gets
    // columns of its own, read the same way.
    KeyColumns ofSchema =
        columnsOfSchemas.computeIfAbsent(
            rowSchema.schema().schemaId(),
            id -> new KeyColumns(schema, spec, rowSchema.rowType(), rowSchema.schema()));
    return keyOf(key, ofSchema.wrap(row));
  }

  private PartitionedKey keyOf(RowKey key, KeyColumns row) {
    PartitionKey partition = row.intsFit() ? partitionKey : widenedKey;
    partition.partition(row);
    // The partition path is a stable text form of the partition values in every JVM.
    return new PartitionedKey(partition.toPath().hashCode(), key);
  }

  private void init() {
    if (partitionKey == null) {
      Schema widened = intsAsLongs(schema.schema());
      partitionKey = new PartitionKey(spec, schema.schema());
      widenedKey =
          new PartitionKey(
              PartitionSpecParser.fromJson(widened, PartitionSpecParser.toJson(spec)), widened);
      columns = new KeyColumns(schema, spec, schema.rowType(), schema.schema());
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

    /** Per column, whether the job's schema has an int there that a partition field reads. */
    private final boolean[] ints;

    /** Per column, whether the row's schema has a long there (an int widened). */
    private final boolean[] longs;

    private RowData row;

    KeyColumns(ChangeSchema job, PartitionSpec spec, RowType rowType, Schema rowSchema) {
      this.wrapper = new RowDataWrapper(rowType, rowSchema.asStruct());
      java.util.Set<Integer> sources = new java.util.HashSet<>();
      spec.fields().forEach(field -> sources.add(field.sourceId()));
      List<Types.NestedField> fields = job.schema().columns();
      this.ints = new boolean[fields.size()];
      this.longs = new boolean[fields.size()];
      for (int i = 0; i < ints.length; i++) {
        ints[i] =
            fields.get(i).type().typeId() == Type.TypeID.INTEGER
                && sources.contains(fields.get(i).fieldId());
        longs[i] = rowType.getTypeAt(i).getTypeRoot() == LogicalTypeRoot.BIGINT;
      }
    }

    KeyColumns wrap(RowData keyRow) {
      this.row = keyRow;
      wrapper.wrap(keyRow);
      return this;
    }

    /** Whether every int column partitioned by holds a value in the int range (or null). */
    boolean intsFit() {
      for (int pos = 0; pos < ints.length; pos++) {
        if (ints[pos] && !row.isNullAt(pos)) {
          long value = intAt(pos);
          if (value != (int) value) {
            return false;
          }
        }
      }
      return true;
    }

    private long intAt(int pos) {
      // A row of an evolved schema is a GenericRowData (ChangeEvent#rowSchemaId), whose widened
      // column holds a Long; a binary row of an evolved schema (read back for compaction), a long.
      if (row instanceof GenericRowData generic) {
        return ((Number) generic.getField(pos)).longValue();
      }
      return longs[pos] ? row.getLong(pos) : row.getInt(pos);
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
      long value = intAt(pos);
      // As an int for the job's schema (a value in range), as a long for the widened one.
      return javaClass == Integer.class ? javaClass.cast((int) value) : javaClass.cast(value);
    }

    @Override
    public <T> void set(int pos, T value) {
      throw new UnsupportedOperationException("read only");
    }
  }
}
