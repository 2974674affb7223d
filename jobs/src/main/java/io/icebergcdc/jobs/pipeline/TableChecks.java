package io.icebergcdc.jobs.pipeline;

import com.fasterxml.jackson.databind.JsonNode;
import io.icebergcdc.cdc.debezium.DebeziumSchemas;
import io.icebergcdc.jobs.definition.JobDefinitionException;
import io.icebergcdc.jobs.definition.TableDefinition;
import io.icebergcdc.sink.CdcTables;
import io.icebergcdc.sink.Distribution;
import io.icebergcdc.sink.SinkOptions;
import java.util.List;
import org.apache.flink.configuration.Configuration;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;

/**
 * Checks of a job's tables against its definition, before the job creates or changes anything: an
 * existing table must have the partition spec and format version the definition asks for, if it
 * asks; a distribution by partition needs a partitioned table.
 */
public final class TableChecks {

  private TableChecks() {}

  /**
   * Checks the table of a definition, existing or to be created with {@code schema} (null when it
   * exists).
   */
  static void check(
      Catalog catalog,
      TableIdentifier identifier,
      Schema schema,
      TableDefinition tables,
      Configuration sinkOptions) {
    boolean partitioned;
    if (catalog.tableExists(identifier)) {
      Table table = catalog.loadTable(identifier);
      if (tables.partitionBy() != null) {
        PartitionSpec asked = partitionSpec(table.schema(), tables.partitionBy());
        if (!asked.compatibleWith(table.spec())) {
          throw new JobDefinitionException(
              "table "
                  + identifier
                  + " exists partitioned by "
                  + describe(table.spec())
                  + ", not by "
                  + describe(asked)
                  + " as asked; drop the partition flag or write to another table");
        }
      }
      int version = formatVersion(table);
      if (tables.formatVersion() != null && tables.formatVersion() != version) {
        throw new JobDefinitionException(
            "table "
                + identifier
                + " exists with format version "
                + version
                + ", not "
                + tables.formatVersion()
                + " as asked; drop --format-version or write to another table");
      }
      partitioned = table.spec().isPartitioned();
    } else {
      partitioned =
          schema != null
              && tables.partitionBy() != null
              && partitionSpec(schema, tables.partitionBy()).isPartitioned();
    }
    if (!partitioned && sinkOptions.get(SinkOptions.DISTRIBUTION) == Distribution.PARTITION) {
      throw new JobDefinitionException(
          "table "
              + identifier
              + " is not partitioned: distribution by partition needs a partitioned table; use"
              + " distribution primary_key or partition the table");
    }
  }

  /**
   * The table schema of a Debezium event's Connect schema with {@code primaryKey}; fails, naming
   * the flag and what the event's rows have, where a column of {@code primaryKey} is none of them.
   *
   * @param event where the event is, for the message ("the first event of FILE (line 3)")
   */
  static Schema schemaWithPrimaryKey(
      JsonNode connectSchema, List<String> primaryKey, String event) {
    java.util.Set<String> columns = new java.util.TreeSet<>();
    DebeziumSchemas.toIcebergSchema(connectSchema, List.of())
        .columns()
        .forEach(column -> columns.add(column.name()));
    List<String> missing = primaryKey.stream().filter(c -> !columns.contains(c)).toList();
    if (!missing.isEmpty()) {
      throw new JobDefinitionException(
          "--primary-key "
              + String.join(",", primaryKey)
              + ": no column "
              + String.join(", ", missing)
              + " in the rows of "
              + event
              + ", which has "
              + columns);
    }
    return DebeziumSchemas.toIcebergSchema(connectSchema, primaryKey);
  }

  /**
   * Checks that {@code column}, the job's sequence column (none where null), is a column of the
   * table, existing or to be created with {@code schema}: before the table is created, rather than
   * at the first record, with the job restarting over it.
   */
  static void checkSequenceColumn(
      Catalog catalog, TableIdentifier identifier, Schema schema, String column) {
    if (column == null) {
      return;
    }
    Schema of = schema != null ? schema : catalog.loadTable(identifier).schema();
    // A top-level column: the parsers take no nested one.
    if (of.columns().stream().noneMatch(field -> field.name().equals(column))) {
      throw new JobDefinitionException(
          "--sequence-column "
              + column
              + " is not a column of table "
              + identifier
              + " "
              + of.columns().stream()
                  .map(org.apache.iceberg.types.Types.NestedField::name)
                  .toList());
    }
  }

  /**
   * The partition spec {@code --partition-by} asks for, as a definition error where it cannot be.
   */
  private static PartitionSpec partitionSpec(Schema schema, String partitionBy) {
    try {
      return CdcTables.parsePartitionSpec(schema, partitionBy);
    } catch (JobDefinitionException e) {
      throw e;
    } catch (IllegalArgumentException e) {
      throw new JobDefinitionException("--partition-by " + partitionBy + ": " + e.getMessage());
    }
  }

  private static int formatVersion(Table table) {
    return ((org.apache.iceberg.HasTableOperations) table).operations().current().formatVersion();
  }

  /**
   * A partition spec on one line: {@code day(ts), bucket[16](id)}, or "nothing (unpartitioned)".
   */
  public static String describe(PartitionSpec spec) {
    if (spec.isUnpartitioned()) {
      return "nothing (unpartitioned)";
    }
    return spec.fields().stream()
        .map(f -> f.transform() + "(" + spec.schema().findColumnName(f.sourceId()) + ")")
        .reduce((a, b) -> a + ", " + b)
        .orElse("");
  }
}
