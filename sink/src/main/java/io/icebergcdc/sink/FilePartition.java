package io.icebergcdc.sink;

import java.net.URLDecoder;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.Metrics;
import org.apache.iceberg.PartitionData;
import org.apache.iceberg.PartitionField;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.expressions.Literal;
import org.apache.iceberg.transforms.Transform;
import org.apache.iceberg.transforms.Transforms;
import org.apache.iceberg.types.Comparators;
import org.apache.iceberg.types.Conversions;
import org.apache.iceberg.types.Type;

/**
 * The partition of a file a table adopts. An identity partition's value comes from a Hive-style
 * {@code column=value} directory in the file's path when there is one; otherwise every partition
 * value comes from the file's column statistics: the transform of the column's minimum and of its
 * maximum must agree (for a transform that keeps order, such as {@code days} or {@code truncate};
 * for {@code bucket} the minimum must equal the maximum), else the file's rows span more than one
 * partition and it is refused.
 *
 * <p>A refusal throws an {@link IllegalArgumentException} whose message says why, for the caller to
 * prefix with the file.
 */
final class FilePartition {

  private final PartitionSpec spec;
  private final Schema schema;

  FilePartition(PartitionSpec spec, Schema schema) {
    this.spec = spec;
    this.schema = schema;
  }

  /**
   * The values that the directories of a file's path give identity partitions, by source column id,
   * as written ({@code __HIVE_DEFAULT_PARTITION__} for null); empty for an unpartitioned table.
   */
  Map<Integer, String> fromPath(String location) {
    Map<Integer, String> values = new HashMap<>();
    String[] parts = location.split("/");
    for (int i = 0; i < parts.length - 1; i++) {
      int eq = parts[i].indexOf('=');
      if (eq <= 0) {
        continue;
      }
      String key = unescape(parts[i].substring(0, eq));
      String value = unescape(parts[i].substring(eq + 1));
      for (PartitionField field : spec.fields()) {
        String column = schema.findColumnName(field.sourceId());
        if (!field.transform().isIdentity()
            || !(column.equalsIgnoreCase(key) || field.name().equalsIgnoreCase(key))) {
          continue;
        }
        String before = values.put(field.sourceId(), value);
        if (before != null && !before.equals(value)) {
          throw new IllegalArgumentException(
              "its path gives the partition column "
                  + column
                  + " two values, "
                  + before
                  + " and "
                  + value);
        }
      }
    }
    return values;
  }

  /**
   * The file's partition, or null for an unpartitioned table.
   *
   * @param fromPath what {@link #fromPath} found in the file's path
   * @param metrics the file's metrics, by the table's field ids
   */
  PartitionData of(Map<Integer, String> fromPath, Metrics metrics) {
    if (spec.isUnpartitioned()) {
      return null;
    }
    PartitionData partition = new PartitionData(spec.partitionType());
    List<PartitionField> fields = spec.fields();
    for (int i = 0; i < fields.size(); i++) {
      partition.set(i, value(fields.get(i), fromPath, metrics));
    }
    return partition;
  }

  @SuppressWarnings("unchecked")
  private Object value(PartitionField field, Map<Integer, String> fromPath, Metrics metrics) {
    if (field.transform().isVoid()) {
      return null;
    }
    int id = field.sourceId();
    Type type = schema.findType(id);
    String column = schema.findColumnName(id);
    Object min = bound(type, metrics.lowerBounds(), id);
    Object max = bound(type, metrics.upperBounds(), id);
    Long nulls = metrics.nullValueCounts() == null ? null : metrics.nullValueCounts().get(id);
    boolean someNull = nulls != null && nulls > 0;
    if (field.transform().isIdentity() && fromPath.containsKey(id)) {
      String written = fromPath.get(id);
      Object value = parse(column, type, written);
      if (min != null
          && max != null
          && (value == null || compare(type, min, value) != 0 || compare(type, max, value) != 0)) {
        throw new IllegalArgumentException(
            "its rows have "
                + column
                + " from "
                + show(type, min)
                + " to "
                + show(type, max)
                + ", not the "
                + column
                + "="
                + written
                + " of its path"
                + truncationHint(type, column));
      }
      if (min != null && someNull && value != null) {
        throw new IllegalArgumentException(
            "some of its rows have a null "
                + column
                + ", not the "
                + column
                + "="
                + written
                + " of its path");
      }
      return value;
    }
    if (min == null || max == null) {
      if (nulls != null && nulls == metrics.recordCount()) {
        return null;
      }
      throw new IllegalArgumentException(
          "its partition is not known: its path has no "
              + column
              + "=<value> directory"
              + (field.transform().isIdentity() ? "" : " (for " + field.name() + ")")
              + " and the file has no minimum and maximum of "
              + column);
    }
    if (someNull) {
      throw spans(field, column, "some have a null " + column + ", others not");
    }
    Transform<Object, Object> transform = (Transform<Object, Object>) field.transform();
    Type resultType = transform.getResultType(type);
    if (!transform.preservesOrder() && compare(type, min, max) != 0) {
      throw spans(field, column, range(type, column, min, max));
    }
    Object first = transform.bind(type).apply(min);
    Object last = transform.bind(type).apply(max);
    if (compare(resultType, first, last) != 0) {
      throw spans(field, column, range(type, column, min, max) + truncationHint(type, column));
    }
    return first;
  }

  private static Object bound(Type type, Map<Integer, ByteBuffer> bounds, int id) {
    ByteBuffer bytes = bounds == null ? null : bounds.get(id);
    if (bytes == null) {
      return null;
    }
    Object value = Conversions.fromByteBuffer(type, bytes);
    return value instanceof CharSequence text ? text.toString() : value;
  }

  /** A value of a path's directory as the column's type, in Iceberg's internal representation. */
  private static Object parse(String column, Type type, String written) {
    try {
      Object value;
      try {
        value = Conversions.fromPartitionString(type, written);
      } catch (UnsupportedOperationException e) {
        Literal<Object> literal = Literal.of(written).to(type);
        if (literal == null) {
          throw new IllegalArgumentException(written);
        }
        value = literal.value();
      }
      return value instanceof byte[] bytes ? ByteBuffer.wrap(bytes) : value;
    } catch (RuntimeException e) {
      throw new IllegalArgumentException(
          "the " + column + "=" + written + " of its path is not a value of type " + type, e);
    }
  }

  private static int compare(Type type, Object left, Object right) {
    Comparator<Object> comparator = Comparators.forType(type.asPrimitiveType());
    return comparator.compare(left, right);
  }

  private static String show(Type type, Object value) {
    return Transforms.identity().toHumanString(type, value);
  }

  private static String range(Type type, String column, Object min, Object max) {
    return column + " from " + show(type, min) + " to " + show(type, max);
  }

  private static String truncationHint(Type type, String column) {
    return type.typeId() == Type.TypeID.STRING || type.typeId() == Type.TypeID.BINARY
        ? " (if its statistics are truncated, set the table property"
            + " write.metadata.metrics.column."
            + column
            + "=full)"
        : "";
  }

  private static IllegalArgumentException spans(PartitionField field, String column, String how) {
    return new IllegalArgumentException(
        "its rows span more than one partition of "
            + field.name()
            + (field.name().equals(column) ? "" : " (" + field.transform() + " of " + column + ")")
            + ": "
            + how);
  }

  /** Undoes Hive's {@code %XX} escapes of a directory name, leaving a {@code +} as it is. */
  private static String unescape(String part) {
    try {
      return URLDecoder.decode(part.replace("+", "%2B"), StandardCharsets.UTF_8);
    } catch (IllegalArgumentException e) {
      return part;
    }
  }
}
