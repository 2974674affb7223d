package io.icebergcdc.sink;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.apache.iceberg.Metrics;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.mapping.NameMapping;
import org.apache.iceberg.parquet.ParquetSchemaUtil;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.TypeUtil;
import org.apache.iceberg.types.Types;
import org.apache.parquet.column.ColumnDescriptor;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.PrimitiveType;

/**
 * Checks that a Parquet file's columns read as a table's: every column of the file is one of the
 * table's (by Iceberg field id, or by name through the table's name mapping for a file written
 * without ids), of the same type or one that Iceberg widens on read (int to long, float to double,
 * a decimal's precision), and every required column of the table is in the file without nulls. A
 * required column may be missing when the file's path gives its value (a Hive-style {@code
 * col=value} directory of an identity partition).
 *
 * <p>A failed check throws an {@link IllegalArgumentException} whose message names the column and
 * both types, for the caller to prefix with the file.
 */
final class FileSchemaCheck {

  private final Schema schema;
  private final NameMapping mapping;

  /** Every name each field id has had in any of the table's schemas, to tell a rename. */
  private final Map<Integer, Set<String>> names = new HashMap<>();

  FileSchemaCheck(Table table, NameMapping mapping) {
    this.schema = table.schema();
    this.mapping = mapping;
    for (Schema past : table.schemas().values()) {
      TypeUtil.indexById(past.asStruct())
          .forEach(
              (id, field) -> names.computeIfAbsent(id, i -> new HashSet<>()).add(field.name()));
    }
  }

  /** The file's Parquet schema with the Iceberg field ids that its columns read as. */
  MessageType withIds(MessageType fileType) {
    return ParquetSchemaUtil.hasIds(fileType)
        ? fileType
        : ParquetSchemaUtil.applyNameMapping(fileType, mapping);
  }

  /**
   * @param fileType the file's Parquet schema
   * @param metrics the file's metrics, for the null counts of columns the table requires
   * @param fromPath the ids of the columns whose value the file's path gives
   */
  void check(MessageType fileType, Metrics metrics, Set<Integer> fromPath) {
    boolean ids = ParquetSchemaUtil.hasIds(fileType);
    MessageType typeWithIds = withIds(fileType);
    for (ColumnDescriptor column : typeWithIds.getColumns()) {
      PrimitiveType leaf = column.getPrimitiveType();
      readAsIcebergReadsIt(column, leaf);
      if (leaf.getId() == null || schema.findField(leaf.getId().intValue()) == null) {
        throw new IllegalArgumentException(
            "its column "
                + String.join(".", column.getPath())
                + " ("
                + parquetType(leaf)
                + ") is not in the table");
      }
    }
    if (!ids && !schema.identifierFieldIds().isEmpty()) {
      readsTheSameByPosition(fileType, typeWithIds);
    }
    Schema fileSchema = ParquetSchemaUtil.convertAndPrune(typeWithIds);
    new Comparison(metrics, fromPath, ids).struct("", fileSchema.asStruct(), schema.asStruct());
  }

  /**
   * Refuses a column whose values Iceberg would take for others: a timestamp in milli- or
   * nanoseconds (Iceberg reads each unit as its microsecond type, and takes the file's bounds, and
   * the partition it puts the file in, as microseconds), and an unsigned integer (read as a signed
   * one of its width, or failing on its statistics).
   */
  private static void readAsIcebergReadsIt(ColumnDescriptor column, PrimitiveType leaf) {
    org.apache.parquet.schema.LogicalTypeAnnotation logical = leaf.getLogicalTypeAnnotation();
    String name = String.join(".", column.getPath());
    if (logical
            instanceof
            org.apache.parquet.schema.LogicalTypeAnnotation.TimestampLogicalTypeAnnotation timestamp
        && timestamp.getUnit() != org.apache.parquet.schema.LogicalTypeAnnotation.TimeUnit.MICROS) {
      throw new IllegalArgumentException(
          "its column "
              + name
              + " holds timestamps in "
              + timestamp.getUnit()
              + ", which Iceberg would read, with the file's bounds and the partition it takes from"
              + " them, as microseconds; write the file with microsecond timestamps");
    }
    if (logical
            instanceof
            org.apache.parquet.schema.LogicalTypeAnnotation.IntLogicalTypeAnnotation integer
        && !integer.isSigned()) {
      throw new IllegalArgumentException(
          "its column "
              + name
              + " holds unsigned "
              + integer.getBitWidth()
              + "-bit integers, which Iceberg would read as signed ones; write it as a signed"
              + " integer of more bits");
    }
  }

  /**
   * A table with a primary key is read by this project's writers (the key index, compaction) and
   * committer through Iceberg's generic readers, which do not apply a name mapping: they read a
   * file without field ids by the positions of its columns. Such a file must then read the same by
   * position as by name.
   */
  private static void readsTheSameByPosition(MessageType fileType, MessageType byName) {
    MessageType byPosition = ParquetSchemaUtil.addFallbackIds(fileType);
    for (ColumnDescriptor column : byName.getColumns()) {
      PrimitiveType named = column.getPrimitiveType();
      PrimitiveType positional =
          byPosition.getColumnDescription(column.getPath()).getPrimitiveType();
      if (positional.getId() == null
          || named.getId() == null
          || positional.getId().intValue() != named.getId().intValue()) {
        throw new IllegalArgumentException(
            "it has no Iceberg field ids and its columns are not in the table's order (column "
                + String.join(".", column.getPath())
                + " is at another position): the table has a primary key, and the readers of"
                + " its key index read such a file by column position; write the file with the"
                + " table's columns in the table's order, or with Iceberg field ids");
      }
    }
  }

  private static String parquetType(PrimitiveType type) {
    String name = type.getPrimitiveTypeName().name().toLowerCase(Locale.ROOT);
    return type.getLogicalTypeAnnotation() == null
        ? name
        : name + " " + type.getLogicalTypeAnnotation();
  }

  /** One file's columns against the table's, field by field. */
  private final class Comparison {
    private final Metrics metrics;
    private final Set<Integer> fromPath;
    private final boolean ids;

    Comparison(Metrics metrics, Set<Integer> fromPath, boolean ids) {
      this.metrics = metrics;
      this.fromPath = fromPath;
      this.ids = ids;
    }

    void struct(String prefix, Types.StructType file, Types.StructType table) {
      for (Types.NestedField column : table.fields()) {
        Types.NestedField inFile = file.field(column.fieldId());
        String name = prefix + column.name();
        if (inFile == null) {
          boolean given = prefix.isEmpty() && fromPath.contains(column.fieldId());
          if (column.isRequired() && !given) {
            throw new IllegalArgumentException(
                "the table's required column "
                    + name
                    + " ("
                    + column.type()
                    + ") is not in the file");
          }
          continue;
        }
        if (ids && !names.getOrDefault(column.fieldId(), Set.of()).contains(inFile.name())) {
          throw new IllegalArgumentException(
              "its column "
                  + prefix
                  + inFile.name()
                  + " has the field id "
                  + column.fieldId()
                  + " of the table's column "
                  + name
                  + ", which never had that name: the file was written for another table");
        }
        field(name, inFile, column);
      }
      for (Types.NestedField inFile : file.fields()) {
        if (table.field(inFile.fieldId()) == null) {
          throw new IllegalArgumentException(
              "its column "
                  + prefix
                  + inFile.name()
                  + " ("
                  + inFile.type()
                  + ") is not in the table");
        }
      }
    }

    private void field(String name, Types.NestedField file, Types.NestedField table) {
      if (table.isRequired() && file.isOptional()) {
        Long nulls =
            metrics.nullValueCounts() == null
                ? null
                : metrics.nullValueCounts().get(file.fieldId());
        if (nulls == null || nulls > 0) {
          throw new IllegalArgumentException(
              "the table's column "
                  + name
                  + " is required, but the file's may be null"
                  + (nulls == null
                      ? " (its nulls are not counted)"
                      : " and has " + nulls + " nulls"));
        }
      }
      type(name, file.type(), table.type());
    }

    private void type(String name, Type file, Type table) {
      if (file.isPrimitiveType() && table.isPrimitiveType()) {
        if (!file.equals(table) && !TypeUtil.isPromotionAllowed(file, table.asPrimitiveType())) {
          throw mismatch(name, file, table);
        }
        return;
      }
      if (file.typeId() != table.typeId()) {
        throw mismatch(name, file, table);
      }
      switch (table.typeId()) {
        case STRUCT:
          struct(name + ".", file.asStructType(), table.asStructType());
          break;
        case LIST:
          field(
              name + ".element",
              file.asListType().fields().get(0),
              table.asListType().fields().get(0));
          break;
        case MAP:
          field(name + ".key", file.asMapType().fields().get(0), table.asMapType().fields().get(0));
          field(
              name + ".value", file.asMapType().fields().get(1), table.asMapType().fields().get(1));
          break;
        default:
          break;
      }
    }

    private IllegalArgumentException mismatch(String name, Type file, Type table) {
      return new IllegalArgumentException(
          "its column " + name + " is " + file + " in the file but " + table + " in the table");
    }
  }
}
