package io.icebergcdc.sink.table;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.table.data.DecimalData;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.TimestampData;
import org.apache.flink.table.types.logical.DecimalType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.LogicalTypeRoot;
import org.apache.flink.table.types.logical.RowType;

/**
 * The rows of a Flink table whose declared types differ from its Iceberg table's in precision only
 * ({@code DECIMAL(12,2)} for Iceberg's {@code decimal(12,4)}, {@code TIMESTAMP(3)} for {@code
 * timestamp}), given the table's types: Flink keeps such values in a form of their own per
 * precision (a decimal of up to 18 digits as an unscaled long, a timestamp of up to 3 digits as
 * milliseconds), so the writers, which read the rows as the table's types, would read other values
 * from them. A decimal is rescaled exactly; one that would need rounding, or more digits than the
 * table's column holds, fails the write, naming its column.
 */
final class RowsAsTableTypes implements MapFunction<RowData, RowData> {

  private static final long serialVersionUID = 1L;

  private final RowType given;
  private final RowType table;
  private final String tableName;
  private transient RowData.FieldGetter[] getters;

  private RowsAsTableTypes(RowType given, RowType table, String tableName) {
    this.given = given;
    this.table = table;
    this.tableName = tableName;
  }

  /**
   * The conversion of rows of the {@code given} types to the {@code table}'s; empty where they
   * differ in nullability at most, so the rows read as they are.
   *
   * @throws IllegalArgumentException naming the first column whose types differ otherwise
   */
  static Optional<RowsAsTableTypes> of(RowType given, RowType table, String tableName) {
    if (!given.getFieldNames().equals(table.getFieldNames())) {
      throw new IllegalArgumentException(
          "the columns of Flink table "
              + given.getFieldNames()
              + " are not those of Iceberg table "
              + tableName
              + " "
              + table.getFieldNames());
    }
    boolean converts = false;
    for (int i = 0; i < table.getFieldCount(); i++) {
      LogicalType want = table.getTypeAt(i);
      LogicalType have = given.getTypeAt(i);
      if (same(want, have)) {
        continue;
      }
      if (widens(have.getTypeRoot(), want.getTypeRoot())) {
        // Iceberg has no TINYINT, SMALLINT or CHAR: a table created from such a DDL holds them as
        // INT and STRING.
        converts |= want.getTypeRoot() == LogicalTypeRoot.INTEGER;
        continue;
      }
      if (want.getTypeRoot() != have.getTypeRoot() || !convertible(want.getTypeRoot())) {
        throw new IllegalArgumentException(
            "column '"
                + table.getFieldNames().get(i)
                + "' is "
                + have
                + " in the Flink table and "
                + want
                + " in Iceberg table "
                + tableName);
      }
      converts |= needsConversion(want.getTypeRoot());
    }
    return converts ? Optional.of(new RowsAsTableTypes(given, table, tableName)) : Optional.empty();
  }

  /**
   * Whether two types are the same but for nullability and descriptions, at any depth: Iceberg
   * gives a map's keys NOT NULL and a struct's fields their comments, which a DDL need not repeat.
   */
  private static boolean same(LogicalType want, LogicalType have) {
    if (want.getTypeRoot() != have.getTypeRoot()) {
      return false;
    }
    List<LogicalType> wanted = want.getChildren();
    List<LogicalType> had = have.getChildren();
    if (wanted.isEmpty() && had.isEmpty()) {
      return want.copy(true).equals(have.copy(true));
    }
    if (wanted.size() != had.size()) {
      return false;
    }
    if (want instanceof RowType wantRow
        && !wantRow.getFieldNames().equals(((RowType) have).getFieldNames())) {
      return false;
    }
    for (int i = 0; i < wanted.size(); i++) {
      if (!same(wanted.get(i), had.get(i))) {
        return false;
      }
    }
    return true;
  }

  /** Whether values of {@code have} are written, unchanged in value, as {@code want}. */
  private static boolean widens(LogicalTypeRoot have, LogicalTypeRoot want) {
    return (want == LogicalTypeRoot.INTEGER
            && (have == LogicalTypeRoot.TINYINT || have == LogicalTypeRoot.SMALLINT))
        || (want == LogicalTypeRoot.VARCHAR && have == LogicalTypeRoot.CHAR);
  }

  /** Types of one root that may differ in length or precision. */
  private static boolean convertible(LogicalTypeRoot root) {
    switch (root) {
      case CHAR:
      case VARCHAR:
      case BINARY:
      case VARBINARY:
      case TIME_WITHOUT_TIME_ZONE:
      case DECIMAL:
      case TIMESTAMP_WITHOUT_TIME_ZONE:
      case TIMESTAMP_WITH_LOCAL_TIME_ZONE:
        return true;
      default:
        return false;
    }
  }

  /** Types whose values Flink keeps in another form at another precision. */
  private static boolean needsConversion(LogicalTypeRoot root) {
    return root == LogicalTypeRoot.DECIMAL
        || root == LogicalTypeRoot.TIMESTAMP_WITHOUT_TIME_ZONE
        || root == LogicalTypeRoot.TIMESTAMP_WITH_LOCAL_TIME_ZONE;
  }

  RowType tableType() {
    return table;
  }

  @Override
  public RowData map(RowData row) {
    if (getters == null) {
      List<RowData.FieldGetter> list = new ArrayList<>();
      for (int i = 0; i < given.getFieldCount(); i++) {
        list.add(RowData.createFieldGetter(given.getTypeAt(i), i));
      }
      getters = list.toArray(new RowData.FieldGetter[0]);
    }
    GenericRowData converted = new GenericRowData(row.getRowKind(), getters.length);
    for (int i = 0; i < getters.length; i++) {
      Object value = getters[i].getFieldOrNull(row);
      if (value instanceof Byte small) {
        value = (int) small;
      } else if (value instanceof Short small) {
        value = (int) small;
      } else if (value instanceof DecimalData decimal
          && table.getTypeAt(i) instanceof DecimalType type) {
        value = decimal(decimal, type, i);
      } else if (value instanceof TimestampData timestamp
          && timestamp.getNanoOfMillisecond() % 1000 != 0
          && precisionOf(table.getTypeAt(i)) <= 6) {
        // Iceberg keeps microseconds.
        throw new IllegalArgumentException(
            "column '"
                + table.getFieldNames().get(i)
                + "' of a row written to Iceberg table "
                + tableName
                + " is "
                + timestamp
                + ", whose nanoseconds its type there, "
                + table.getTypeAt(i)
                + ", does not hold");
      }
      converted.setField(i, value);
    }
    return converted;
  }

  private static int precisionOf(LogicalType type) {
    return type instanceof org.apache.flink.table.types.logical.TimestampType timestamp
        ? timestamp.getPrecision()
        : type instanceof org.apache.flink.table.types.logical.LocalZonedTimestampType zoned
            ? zoned.getPrecision()
            : 6;
  }

  private DecimalData decimal(DecimalData value, DecimalType type, int column) {
    if (value.precision() == type.getPrecision() && value.scale() == type.getScale()) {
      return value;
    }
    BigDecimal exact = value.toBigDecimal();
    DecimalData converted;
    try {
      converted =
          DecimalData.fromBigDecimal(
              exact.setScale(type.getScale(), RoundingMode.UNNECESSARY),
              type.getPrecision(),
              type.getScale());
    } catch (ArithmeticException e) {
      converted = null;
    }
    if (converted == null) {
      throw new IllegalArgumentException(
          "column '"
              + table.getFieldNames().get(column)
              + "' of a row written to Iceberg table "
              + tableName
              + " is "
              + exact.toPlainString()
              + ", which its type there, "
              + type
              + ", does not hold exactly");
    }
    return converted;
  }
}
