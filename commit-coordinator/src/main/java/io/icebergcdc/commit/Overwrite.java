package io.icebergcdc.commit;

import java.io.Serializable;
import java.math.BigDecimal;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import org.apache.iceberg.Schema;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.types.Conversions;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/**
 * What an overwrite of a bounded input replaces, committed as one snapshot at the end of the input
 * instead of one per checkpoint.
 *
 * @param scope what is replaced
 * @param staticPartition for {@link Scope#STATIC_PARTITION}, the value of every identity partition
 *     column as Flink SQL gives it in {@code PARTITION (...)}, as text; empty otherwise
 * @param allowEmptyInput whether an input without rows may commit; when it may not, the job fails
 *     and the table is left as it was
 * @param startingSnapshotId the table's snapshot when the write was planned, or null for an empty
 *     table: data that other writers commit to the replaced rows after it fails the overwrite
 *     instead of being replaced unseen
 * @param filter for {@link Scope#FILTER}, the rows replaced; null otherwise
 * @param filterText for {@link Scope#FILTER}, the filter as the user wrote it, for messages
 */
public record Overwrite(
    Scope scope,
    Map<String, String> staticPartition,
    boolean allowEmptyInput,
    Long startingSnapshotId,
    Expression filter,
    String filterText)
    implements Serializable {

  /** The option naming the rows a filtered overwrite replaces, as a SQL boolean expression. */
  public static final String FILTER_OPTION = "overwrite.filter";

  /** The sink option that lets an overwrite commit an empty input; named in the failure. */
  public static final String ALLOW_EMPTY_INPUT_OPTION = "sink.overwrite.allow-empty-input";

  /** What an overwrite replaces. */
  public enum Scope {
    /** The partitions that the input has rows in (dynamic overwrite); nothing else. */
    PARTITIONS_IN_INPUT,
    /** The one partition named in the statement, whether or not the input has rows. */
    STATIC_PARTITION,
    /** The whole table (an unpartitioned table). */
    TABLE,
    /**
     * The rows a filter matches, whether or not the input has rows there; every input row must
     * match it. The filter must match whole data files (by partition or column statistics).
     */
    FILTER
  }

  public Overwrite(
      Scope scope,
      Map<String, String> staticPartition,
      boolean allowEmptyInput,
      Long startingSnapshotId) {
    this(scope, staticPartition, allowEmptyInput, startingSnapshotId, null, null);
  }

  /** An overwrite of the rows {@code filter} matches. */
  public static Overwrite ofFilter(
      Expression filter, String filterText, boolean allowEmptyInput, Long startingSnapshotId) {
    return new Overwrite(
        Scope.FILTER, Map.of(), allowEmptyInput, startingSnapshotId, filter, filterText);
  }

  public Overwrite {
    Objects.requireNonNull(scope, "scope");
    staticPartition = new TreeMap<>(staticPartition);
    if ((scope == Scope.STATIC_PARTITION) == staticPartition.isEmpty()) {
      throw new IllegalArgumentException(
          "a static partition is given exactly when the scope is STATIC_PARTITION");
    }
    if ((scope == Scope.FILTER) != (filter != null)) {
      throw new IllegalArgumentException("a filter is given exactly when the scope is FILTER");
    }
  }

  /**
   * The rows a static partition or whole-table overwrite replaces (for {@link
   * Scope#PARTITIONS_IN_INPUT}, the input decides and this is not used).
   *
   * @throws IllegalArgumentException naming the column, its type and the value, for a static
   *     partition value that does not parse as its column's type
   */
  public Expression rowFilter(Schema schema) {
    if (scope == Scope.FILTER) {
      return filter;
    }
    Expression filter = Expressions.alwaysTrue();
    for (Map.Entry<String, String> column : staticPartition.entrySet()) {
      Types.NestedField field = schema.findField(column.getKey());
      if (field == null) {
        throw new IllegalArgumentException(
            "the static partition names column '" + column.getKey() + "', which is not there");
      }
      Object value;
      try {
        value = Conversions.fromPartitionString(field.type(), column.getValue());
        if (value instanceof BigDecimal decimal && field.type() instanceof Types.DecimalType type) {
          value = decimal.setScale(type.scale());
        }
      } catch (RuntimeException e) {
        Type type = field.type();
        throw new IllegalArgumentException(
            "the static partition value '"
                + column.getValue()
                + "' of column '"
                + column.getKey()
                + "' ("
                + type
                + ") cannot be used ("
                + e.getMessage()
                + ")",
            e);
      }
      filter =
          Expressions.and(
              filter,
              value == null
                  ? Expressions.isNull(column.getKey())
                  : Expressions.equal(column.getKey(), value));
    }
    return filter;
  }

  /** How the overwrite is described in messages: "partition (day=2026-11-29)", "the table". */
  public String describe() {
    switch (scope) {
      case STATIC_PARTITION:
        StringBuilder text = new StringBuilder("partition (");
        staticPartition.forEach(
            (column, value) ->
                text.append(text.length() > "partition (".length() ? ", " : "")
                    .append(column)
                    .append('=')
                    .append(value));
        return text.append(')').toString();
      case TABLE:
        return "the whole table";
      case FILTER:
        return "the rows where " + filterText;
      case PARTITIONS_IN_INPUT:
      default:
        return "the partitions the input has rows in";
    }
  }
}
