package io.icebergcdc.sink;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.iceberg.PartitionField;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.UpdateSchema;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.TypeUtil;
import org.apache.iceberg.types.Types;

/** Creates the tables the applier writes to, and checks that existing ones can take a changelog. */
public final class CdcTables {

  private static final Pattern TRANSFORM =
      Pattern.compile("\\s*(\\w+)\\s*\\(\\s*(?:(\\d+)\\s*,\\s*)?(\\w+)\\s*\\)\\s*");

  private CdcTables() {}

  /**
   * The properties every table this project creates gets, unless it is given other values: each
   * commit writes a new metadata file, and a job that commits every few seconds for months would
   * leave all of them on storage. Iceberg then keeps the 20 latest and deletes the older ones after
   * each commit (time travel uses snapshots, which the committer's maintenance keeps, not metadata
   * files).
   */
  public static final Map<String, String> METADATA_RETENTION =
      Map.of(
          TableProperties.METADATA_DELETE_AFTER_COMMIT_ENABLED, "true",
          TableProperties.METADATA_PREVIOUS_VERSIONS_MAX, "20");

  /** {@code properties} with {@link #METADATA_RETENTION} where it does not set them itself. */
  public static Map<String, String> withMetadataRetention(Map<String, String> properties) {
    Map<String, String> all = new java.util.HashMap<>(METADATA_RETENTION);
    all.putAll(properties);
    return all;
  }

  /**
   * Loads the table, or creates it from {@code schema} if it does not exist.
   *
   * @param schema the changelog's schema; its identifier fields are the primary key
   * @param partitionBy a partition spec in the syntax of {@link #parsePartitionSpec}, or null
   * @param formatVersion 2 or 3
   * @param primaryKey the key the user expects; an existing table must have it as its identifier
   *     fields
   */
  public static Table createOrLoad(
      Catalog catalog,
      TableIdentifier identifier,
      Schema schema,
      String partitionBy,
      int formatVersion,
      List<String> primaryKey) {
    if (catalog.tableExists(identifier)) {
      Table table = catalog.loadTable(identifier);
      Set<String> tableKey = table.schema().identifierFieldNames();
      if (!tableKey.equals(Set.copyOf(primaryKey))) {
        throw new IllegalArgumentException(
            "table "
                + identifier
                + " exists with primary key (identifier fields) "
                + tableKey
                + ", not "
                + primaryKey);
      }
      return table;
    }
    if (formatVersion != 2 && formatVersion != 3) {
      throw new IllegalArgumentException(
          "format version must be 2 or 3 (row-level deletes need at least 2), not "
              + formatVersion);
    }
    PartitionSpec spec = parsePartitionSpec(schema, partitionBy);
    checkPartitionColumnsAreKeyColumns(schema, spec);
    return catalog
        .buildTable(identifier, schema)
        .withPartitionSpec(spec)
        .withProperties(METADATA_RETENTION)
        .withProperty(TableProperties.FORMAT_VERSION, Integer.toString(formatVersion))
        .create();
  }

  /**
   * Evolves a table to take the rows of a source whose schema changed, and returns what it changed
   * (empty if nothing): a source column the table lacks is added as an optional column (rows
   * written before read it as null); a column whose source type is wider, where Iceberg can widen
   * it (int to long, float to double, a decimal's precision), is widened; a required column that
   * the source no longer has, or that the source now lets be null, becomes optional, and stays with
   * its values in the rows that have them. Columns are never dropped or renamed. A key column may
   * be widened from int to long, or to a decimal of higher precision: its keys encode the same
   * ({@code ChangeSchema#keyOf}), so the job's state still finds them.
   *
   * @param source the source table's schema as Iceberg types
   * @param strict whether a type difference that Iceberg cannot follow fails (with the column and
   *     both types); otherwise it is left to the conversion of each value
   * @throws IllegalArgumentException if the source has changed the primary key, or, when strict,
   *     changed a column's type in a way Iceberg cannot follow
   */
  public static List<String> evolve(Table table, Schema source, boolean strict) {
    Schema current = table.schema();
    List<String> changes = new ArrayList<>();
    UpdateSchema update = table.updateSchema();
    for (Types.NestedField column : source.columns()) {
      Types.NestedField existing = current.findField(column.name());
      if (existing != null
          && existing.isRequired()
          && column.isOptional()
          && !current.identifierFieldIds().contains(existing.fieldId())) {
        // NOT NULL dropped in the source (or, in MySQL, a MODIFY that did not repeat it).
        update.makeColumnOptional(column.name());
        changes.add("made column '" + column.name() + "' optional, the source allows nulls in it");
      }
      if (existing == null) {
        update.addColumn(column.name(), column.type());
        changes.add("added column '" + column.name() + "' " + column.type());
      } else if (!existing.type().equals(column.type())) {
        if (fits(column.type(), existing.type())) {
          continue;
        }
        if (fits(existing.type(), column.type())) {
          if (current.identifierFieldIds().contains(existing.fieldId())
              && existing.type().typeId() == Type.TypeID.FLOAT) {
            throw new IllegalArgumentException(
                "primary key column '"
                    + column.name()
                    + "' of "
                    + table.name()
                    + " is now "
                    + column.type()
                    + " in the source; a float key cannot be widened in place, it needs a new"
                    + " table");
          }
          update.updateColumn(column.name(), column.type().asPrimitiveType());
          changes.add(
              "widened column '"
                  + column.name()
                  + "' from "
                  + existing.type()
                  + " to "
                  + column.type());
        } else if (strict) {
          throw new IllegalArgumentException(
              "column '"
                  + column.name()
                  + "' of "
                  + table.name()
                  + " is "
                  + column.type()
                  + " in the source and "
                  + existing.type()
                  + " in the Iceberg table, which Iceberg cannot change to it");
        }
      }
    }
    for (Types.NestedField column : current.columns()) {
      if (source.findField(column.name()) != null) {
        continue;
      }
      if (current.identifierFieldIds().contains(column.fieldId())) {
        throw new IllegalArgumentException(
            "primary key column '"
                + column.name()
                + "' of "
                + table.name()
                + " is gone from the source; a changed primary key needs a new table");
      }
      if (column.isRequired()) {
        update.makeColumnOptional(column.name());
        changes.add("made column '" + column.name() + "' optional, the source dropped it");
      }
    }
    if (!changes.isEmpty()) {
      update.commit();
    }
    return changes;
  }

  /** Whether values of type {@code from} fit a column of type {@code to} without a change. */
  private static boolean fits(Type from, Type to) {
    return from.equals(to)
        || (from.isPrimitiveType()
            && to.isPrimitiveType()
            && TypeUtil.isPromotionAllowed(from, to.asPrimitiveType()));
  }

  /**
   * Parses a partition spec: comma-separated terms, each a column name (identity) or one of {@code
   * identity(col)}, {@code bucket(N, col)}, {@code truncate(W, col)}, {@code years(col)}, {@code
   * months(col)}, {@code days(col)}, {@code hours(col)}. Null or blank is unpartitioned.
   */
  public static PartitionSpec parsePartitionSpec(Schema schema, String text) {
    PartitionSpec.Builder builder = PartitionSpec.builderFor(schema);
    if (text == null || text.isBlank()) {
      return builder.build();
    }
    for (String term : splitTerms(text)) {
      String trimmed = term.trim();
      if (trimmed.matches("\\w+")) {
        builder.identity(column(schema, trimmed, text));
        continue;
      }
      Matcher m = TRANSFORM.matcher(trimmed);
      if (!m.matches()) {
        throw new IllegalArgumentException(
            "cannot read partition term '" + trimmed + "' of '" + text + "'");
      }
      String transform = m.group(1).toLowerCase(Locale.ROOT);
      String column = column(schema, m.group(3), text);
      boolean hasWidth = m.group(2) != null;
      if (hasWidth != (transform.equals("bucket") || transform.equals("truncate"))) {
        throw new IllegalArgumentException(
            "partition term '"
                + trimmed
                + "': bucket and truncate take a number and a column, other transforms a"
                + " column only");
      }
      switch (transform) {
        case "identity":
          builder.identity(column);
          break;
        case "bucket":
          builder.bucket(column, Integer.parseInt(m.group(2)));
          break;
        case "truncate":
          builder.truncate(column, Integer.parseInt(m.group(2)));
          break;
        case "years":
        case "year":
          builder.year(column);
          break;
        case "months":
        case "month":
          builder.month(column);
          break;
        case "days":
        case "day":
          builder.day(column);
          break;
        case "hours":
        case "hour":
          builder.hour(column);
          break;
        default:
          throw new IllegalArgumentException(
              "unknown partition transform '" + m.group(1) + "' in '" + text + "'");
      }
    }
    return builder.build();
  }

  /**
   * Fails unless every partition source column is a primary-key column: a delete carries the key
   * only, and must find the partition of the row it deletes.
   */
  public static void checkPartitionColumnsAreKeyColumns(Schema schema, PartitionSpec spec) {
    for (PartitionField field : spec.fields()) {
      if (!schema.identifierFieldIds().contains(field.sourceId())) {
        Types.NestedField column = schema.findField(field.sourceId());
        throw new IllegalArgumentException(
            "partition column '"
                + column.name()
                + "' is not part of the primary key "
                + schema.identifierFieldNames()
                + ": deletes carry only the key, so the partition must follow from it");
      }
    }
  }

  private static String column(Schema schema, String name, String text) {
    if (schema.findField(name) == null) {
      throw new IllegalArgumentException(
          "partition spec '" + text + "' names column '" + name + "', which the table lacks");
    }
    return name;
  }

  private static List<String> splitTerms(String text) {
    List<String> terms = new ArrayList<>();
    int depth = 0;
    int start = 0;
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (c == '(') {
        depth++;
      } else if (c == ')') {
        depth--;
      } else if (c == ',' && depth == 0) {
        terms.add(text.substring(start, i));
        start = i + 1;
      }
    }
    terms.add(text.substring(start));
    return terms;
  }
}
