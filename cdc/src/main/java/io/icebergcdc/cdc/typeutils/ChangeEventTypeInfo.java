package io.icebergcdc.cdc.typeutils;

import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.ChangeSchema;
import java.util.Map;
import java.util.Objects;
import java.util.SortedMap;
import java.util.TreeMap;
import org.apache.flink.api.common.serialization.SerializerConfig;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.table.runtime.typeutils.RowDataSerializer;
import org.apache.flink.table.types.logical.RowType;

/**
 * Type information for the {@link ChangeEvent}s of one table schema, or of several tables, each
 * with its schema ({@link #ofTables}).
 */
public final class ChangeEventTypeInfo extends OpaqueTypeInfo<ChangeEvent> {

  private static final long serialVersionUID = 1L;

  private final RowType rowType;

  /** The row type of each table by name ({@link ChangeEvent#table()}); null for one schema. */
  private final SortedMap<String, RowType> tables;

  public ChangeEventTypeInfo(RowType rowType) {
    super(ChangeEvent.class);
    this.rowType = rowType;
    this.tables = null;
  }

  private ChangeEventTypeInfo(SortedMap<String, RowType> tables) {
    super(ChangeEvent.class);
    this.rowType = null;
    this.tables = tables;
  }

  /** The events of several tables, by the name their events carry ({@link ChangeEvent#table()}). */
  public static ChangeEventTypeInfo ofTables(Map<String, ChangeSchema> tables) {
    SortedMap<String, RowType> types = new TreeMap<>();
    tables.forEach((table, schema) -> types.put(table, schema.rowType()));
    return new ChangeEventTypeInfo(types);
  }

  public static ChangeEventTypeInfo of(ChangeSchema schema) {
    return new ChangeEventTypeInfo(schema.rowType());
  }

  @Override
  public TypeSerializer<ChangeEvent> createSerializer(SerializerConfig config) {
    if (tables != null) {
      Map<String, RowDataSerializer> rows = new TreeMap<>();
      tables.forEach((table, type) -> rows.put(table, new RowDataSerializer(type)));
      return ChangeEventSerializer.ofTables(rows);
    }
    return new ChangeEventSerializer(new RowDataSerializer(rowType));
  }

  @Override
  public String toString() {
    return tables != null
        ? "ChangeEvent<" + tables.size() + " tables>"
        : "ChangeEvent<" + rowType + ">";
  }

  @Override
  public boolean equals(Object obj) {
    return obj instanceof ChangeEventTypeInfo that
        && Objects.equals(rowType, that.rowType)
        && Objects.equals(tables, that.tables);
  }

  @Override
  public int hashCode() {
    return Objects.hash(rowType, tables);
  }
}
