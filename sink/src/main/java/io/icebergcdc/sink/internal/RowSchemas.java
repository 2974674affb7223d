package io.icebergcdc.sink.internal;

import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.ChangeSchema;
import io.icebergcdc.cdc.ColumnMask;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Supplier;
import org.apache.flink.table.data.DecimalData;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.types.logical.DecimalType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.LogicalTypeRoot;
import org.apache.flink.table.types.logical.RowType;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.types.Types;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The schemas of the rows of one table's changes as its writer takes them: the job's ({@link
 * ChangeEvent#JOB_SCHEMA}), and those the table was evolved to while the job runs, which the source
 * gives the changes of ({@link ChangeEvent#rowSchemaId()}).
 *
 * <p>The writer works in one schema at a time, {@link #current()}: the newest its changes have
 * shown. A change of a newer schema makes that schema current (the table is read again to learn
 * it); a change of an older one is given the current schema's columns, matched by field id: a
 * column added since is null, a widened value is widened (int to long, float to double, a decimal
 * to its new precision), and the positions of the columns the source did not send follow their
 * columns.
 *
 * <p>Not thread-safe: Flink's task thread only.
 */
final class RowSchemas {

  private static final Logger LOG = LoggerFactory.getLogger(RowSchemas.class);

  private final ChangeSchema job;
  private final Supplier<Table> refreshedTable;

  private ChangeSchema current;

  /** The id of the current schema's rows; {@link ChangeEvent#JOB_SCHEMA} while it is the job's. */
  private int currentId = ChangeEvent.JOB_SCHEMA;

  /** The conversions into the current schema, by the id of the schema converted from. */
  private final Map<Integer, Conversion> conversions = new HashMap<>();

  /**
   * @param job the schema the job was built with for the table
   * @param refreshedTable the table, read again from its catalog
   */
  RowSchemas(ChangeSchema job, Supplier<Table> refreshedTable) {
    this.job = job;
    this.current = job;
    this.refreshedTable = refreshedTable;
  }

  /**
   * Starts at the table's current schema where it is a later schema of the job's (every column of
   * the job's is in it, by field id): a writer that starts after the table was evolved (a restart
   * of the job, or a subtask that opened late) writes and reads the table's files in that schema,
   * and gives the job's rows its columns, as it would have after the change.
   */
  void startAt(Table table) {
    Schema tableSchema = table.schema();
    if (tableSchema.sameSchema(job.schema()) || tableSchema.schemaId() == idOf(currentId)) {
      return;
    }
    for (Types.NestedField column : job.schema().columns()) {
      if (tableSchema.findField(column.fieldId()) == null) {
        return;
      }
    }
    current = new ChangeSchema(tableSchema);
    currentId = tableSchema.schemaId();
    conversions.clear();
    LOG.info(
        "Table {} has schema {}, later than the job's: its changes are written in it",
        table.name(),
        currentId);
  }

  /** The schema of the rows {@link #fit} gives. */
  ChangeSchema current() {
    return current;
  }

  /**
   * {@code change} with rows of the current schema, which it makes the change's own schema first if
   * that is newer.
   *
   * @throws IllegalStateException if the table has no schema of the change's id
   */
  ChangeEvent fit(ChangeEvent change) {
    int id = change.rowSchemaId();
    if (id == currentId
        || (current == job && (id == ChangeEvent.JOB_SCHEMA || id == job.schema().schemaId()))) {
      return change;
    }
    if (id != ChangeEvent.JOB_SCHEMA && id > idOf(currentId)) {
      use(id);
      if (id == currentId) {
        return change;
      }
    }
    Conversion conversion = conversions.get(id);
    if (conversion == null) {
      Schema from = id == ChangeEvent.JOB_SCHEMA ? job.schema() : schema(id);
      conversion = new Conversion(from, current.schema());
      conversions.put(id, conversion);
    }
    return conversion.apply(change, currentId);
  }

  private int idOf(int rowSchemaId) {
    return rowSchemaId == ChangeEvent.JOB_SCHEMA ? job.schema().schemaId() : rowSchemaId;
  }

  private void use(int id) {
    Table table = refreshedTable.get();
    current = new ChangeSchema(schemaOf(table, id));
    currentId = id;
    conversions.clear();
    LOG.info(
        "Table {} changed its schema while the job runs: its changes have the columns of"
            + " schema {} from now on, and its data files from the next checkpoint",
        table.name(),
        id);
  }

  private Schema schema(int id) {
    return schemaOf(refreshedTable.get(), id);
  }

  /**
   * The schema of {@code id} of {@code table}, which a change's rows have.
   *
   * @throws IllegalStateException if the table has no such schema
   */
  static Schema schemaOf(Table table, int id) {
    Schema schema = table.schemas().get(id);
    if (schema == null) {
      throw new IllegalStateException(
          "a change holds rows of schema " + id + ", which table " + table.name() + " has not");
    }
    return schema;
  }

  /** From the rows of one schema into those of another, by field id. */
  private static final class Conversion {

    private final int arity;

    /** Per column of the target schema, its position in the source schema; -1 if it has none. */
    private final int[] sourcePositions;

    private final RowData.FieldGetter[] getters;
    private final LogicalType[] targetTypes;

    /** Per position of the source schema, its position in the target schema; -1 if none. */
    private final int[] targetPositions;

    Conversion(Schema from, Schema to) {
      RowType fromType = org.apache.iceberg.flink.FlinkSchemaUtil.convert(from);
      RowType toType = org.apache.iceberg.flink.FlinkSchemaUtil.convert(to);
      arity = to.columns().size();
      sourcePositions = new int[arity];
      getters = new RowData.FieldGetter[arity];
      targetTypes = new LogicalType[arity];
      targetPositions = new int[from.columns().size()];
      java.util.Arrays.fill(targetPositions, -1);
      Map<Integer, Integer> fromPositions = new HashMap<>();
      for (int i = 0; i < from.columns().size(); i++) {
        fromPositions.put(from.columns().get(i).fieldId(), i);
      }
      for (int i = 0; i < arity; i++) {
        Types.NestedField column = to.columns().get(i);
        Integer source = fromPositions.get(column.fieldId());
        sourcePositions[i] = source == null ? -1 : source;
        targetTypes[i] = toType.getTypeAt(i);
        if (source != null) {
          getters[i] = RowData.createFieldGetter(fromType.getTypeAt(source), source);
          targetPositions[source] = i;
        }
      }
    }

    ChangeEvent apply(ChangeEvent change, int toId) {
      return change.inSchema(
          toId,
          row(change.before()),
          row(change.after()),
          mask(change.unavailableColumns()),
          mask(change.missingColumns()));
    }

    private RowData row(RowData row) {
      if (row == null) {
        return null;
      }
      GenericRowData converted = new GenericRowData(row.getRowKind(), arity);
      for (int i = 0; i < arity; i++) {
        if (sourcePositions[i] >= 0) {
          converted.setField(i, widen(getters[i].getFieldOrNull(row), targetTypes[i]));
        }
      }
      return converted;
    }

    private ColumnMask mask(ColumnMask mask) {
      if (mask.isEmpty()) {
        return mask;
      }
      ColumnMask[] converted = {ColumnMask.EMPTY};
      mask.forEach(
          position -> {
            int target = position < targetPositions.length ? targetPositions[position] : -1;
            if (target >= 0) {
              converted[0] = converted[0].with(target);
            }
          });
      return converted[0];
    }

    private static Object widen(Object value, LogicalType to) {
      if (value == null) {
        return null;
      }
      LogicalTypeRoot root = to.getTypeRoot();
      if (root == LogicalTypeRoot.BIGINT && value instanceof Integer n) {
        return n.longValue();
      }
      if (root == LogicalTypeRoot.DOUBLE && value instanceof Float f) {
        return f.doubleValue();
      }
      if (root == LogicalTypeRoot.DECIMAL && value instanceof DecimalData d) {
        DecimalType type = (DecimalType) to;
        if (d.precision() != type.getPrecision() || d.scale() != type.getScale()) {
          return DecimalData.fromBigDecimal(d.toBigDecimal(), type.getPrecision(), type.getScale());
        }
      }
      return value;
    }
  }
}
