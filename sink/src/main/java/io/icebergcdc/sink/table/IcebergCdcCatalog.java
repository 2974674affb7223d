package io.icebergcdc.sink.table;

import io.icebergcdc.commit.BoundedWrite;
import io.icebergcdc.commit.Overwrite;
import io.icebergcdc.sink.CatalogDefinition;
import io.icebergcdc.sink.CdcTables;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.flink.table.catalog.CatalogBaseTable;
import org.apache.flink.table.catalog.CatalogTable;
import org.apache.flink.table.catalog.ObjectPath;
import org.apache.flink.table.catalog.ResolvedCatalogTable;
import org.apache.flink.table.catalog.TableChange;
import org.apache.flink.table.catalog.exceptions.CatalogException;
import org.apache.flink.table.catalog.exceptions.DatabaseNotExistException;
import org.apache.flink.table.catalog.exceptions.ProcedureNotExistException;
import org.apache.flink.table.catalog.exceptions.TableAlreadyExistException;
import org.apache.flink.table.catalog.exceptions.TableNotExistException;
import org.apache.flink.table.factories.Factory;
import org.apache.flink.table.procedures.Procedure;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.flink.FlinkCatalog;
import org.apache.iceberg.flink.FlinkSchemaUtil;

/**
 * A Flink catalog over any Iceberg catalog ({@code CREATE CATALOG lake WITH ('type' =
 * 'iceberg-cdc', 'catalog-type' = 'rest', ...)}): Iceberg's {@link FlinkCatalog} (namespaces as
 * databases; {@code CREATE TABLE}, {@code ALTER TABLE ... SET}, {@code DROP TABLE} on Iceberg
 * tables, the primary key as identifier fields), whose tables need no DDL of their own, are written
 * through this project's sink (dedup, key index, one commit per checkpoint) and read through
 * Iceberg's Flink source ({@link IcebergCdcCatalogTableFactory}).
 */
final class IcebergCdcCatalog extends FlinkCatalog {

  /** The table option naming a table's partition transforms, as {@code --partition-by} does. */
  static final String PARTITION_SPEC = "partition-spec";

  /** The options Iceberg's catalog adds to its tables for Iceberg's own connector. */
  private static final String CONNECTOR = "connector";

  private static final String SOURCE_CATALOG = "src-catalog";

  /** The table option of Iceberg's catalog that places a table, honoured as Iceberg's is. */
  static final String LOCATION = "location";

  private final CatalogDefinition definition;

  IcebergCdcCatalog(
      String name,
      String defaultDatabase,
      CatalogDefinition definition,
      Map<String, String> options) {
    super(name, defaultDatabase, Namespace.empty(), definition.loader(), options, false, -1);
    this.definition = definition;
  }

  /**
   * Creates a table; with the option {@code 'partition-spec' = 'bucket(16, id), days(ts)'} (the
   * syntax of {@code --partition-by}) partitioned by those transforms, which Flink's {@code
   * PARTITIONED BY} cannot say; the other options become the table's properties, with {@link
   * CdcTables#METADATA_RETENTION} where they do not set it.
   */
  @Override
  public void createTable(ObjectPath path, CatalogBaseTable table, boolean ignoreIfExists)
      throws CatalogException, TableAlreadyExistException {
    checkOptions(path, table, table.getOptions());
    if (table instanceof CatalogTable catalogTable) {
      table = catalogTable.copy(CdcTables.withMetadataRetention(table.getOptions()));
    }
    String partitionSpec = table.getOptions().get(PARTITION_SPEC);
    if (partitionSpec == null) {
      super.createTable(path, table, ignoreIfExists);
      return;
    }
    if (!(table instanceof ResolvedCatalogTable resolved)) {
      throw new IllegalArgumentException("table " + path + " has no resolved schema");
    }
    if (!resolved.getPartitionKeys().isEmpty()) {
      throw new IllegalArgumentException(
          "table "
              + path
              + ": give PARTITIONED BY or the option '"
              + PARTITION_SPEC
              + "', not both");
    }
    TableIdentifier identifier = TableIdentifier.of(path.getDatabaseName(), path.getObjectName());
    if (catalog().tableExists(identifier)) {
      if (ignoreIfExists) {
        return;
      }
      throw new TableAlreadyExistException(getName(), path);
    }
    Schema converted = FlinkSchemaUtil.convert(resolved.getResolvedSchema());
    Set<Integer> keyIds = new HashSet<>();
    resolved
        .getResolvedSchema()
        .getPrimaryKey()
        .ifPresent(
            key -> key.getColumns().forEach(c -> keyIds.add(converted.findField(c).fieldId())));
    Schema schema = new Schema(converted.columns(), keyIds);
    PartitionSpec spec = CdcTables.parsePartitionSpec(schema, partitionSpec);
    if (!keyIds.isEmpty()) {
      CdcTables.checkPartitionColumnsAreKeyColumns(schema, spec);
    }
    Map<String, String> properties = new HashMap<>(table.getOptions());
    properties.remove(PARTITION_SPEC);
    // As Iceberg's own createTable: these are not table properties.
    properties.remove(CONNECTOR);
    properties.remove(SOURCE_CATALOG);
    String location = properties.remove(LOCATION);
    catalog()
        .buildTable(identifier, schema)
        .withPartitionSpec(spec)
        .withLocation(location)
        .withProperties(properties)
        .create();
  }

  @Override
  public void alterTable(ObjectPath path, CatalogBaseTable newTable, boolean ignoreIfNotExists)
      throws CatalogException, TableNotExistException {
    checkChangedOptions(path, newTable, ignoreIfNotExists);
    super.alterTable(path, newTable, ignoreIfNotExists);
  }

  @Override
  public void alterTable(
      ObjectPath path,
      CatalogBaseTable newTable,
      List<TableChange> tableChanges,
      boolean ignoreIfNotExists)
      throws CatalogException, TableNotExistException {
    checkChangedOptions(path, newTable, ignoreIfNotExists);
    super.alterTable(path, newTable, tableChanges, ignoreIfNotExists);
  }

  /**
   * {@link #checkOptions} of the options an {@code ALTER TABLE} sets or changes: a property the
   * table holds already (set by an earlier build or another engine) does not stop other changes,
   * such as the {@code RESET} of another; the writes name it.
   */
  private void checkChangedOptions(
      ObjectPath path, CatalogBaseTable newTable, boolean ignoreIfNotExists)
      throws TableNotExistException {
    Map<String, String> before;
    try {
      before = getTable(path).getOptions();
    } catch (TableNotExistException e) {
      if (ignoreIfNotExists) {
        return;
      }
      throw e;
    }
    Map<String, String> changed = new HashMap<>();
    newTable
        .getOptions()
        .forEach(
            (key, value) -> {
              if (!value.equals(before.get(key))) {
                changed.put(key, value);
              }
            });
    checkOptions(path, newTable, changed);
    String sequenceField = newTable.getOptions().get(IcebergCdcTableFactory.SEQUENCE_FIELD.key());
    if (sequenceField != null
        && !changed.containsKey(IcebergCdcTableFactory.SEQUENCE_FIELD.key())
        && newTable instanceof ResolvedCatalogTable resolved) {
      // A column change that the sequence field no longer fits (dropped, renamed, another type)
      // is refused; a field that did not fit before either is left to the writes, which name it.
      TableIdentifier identifier = TableIdentifier.of(path.getDatabaseName(), path.getObjectName());
      try {
        SequenceField.check(identifier.toString(), resolved.getResolvedSchema(), sequenceField);
      } catch (IllegalArgumentException e) {
        org.apache.flink.table.catalog.ResolvedSchema current =
            FlinkSchemaUtil.toResolvedSchema(catalog().loadTable(identifier).schema());
        try {
          SequenceField.check(identifier.toString(), current, sequenceField);
        } catch (IllegalArgumentException didNotFitBefore) {
          return;
        }
        throw e;
      }
    }
  }

  /**
   * Refuses, before the table is created or changed, the options among {@code given} that would
   * fail or misdirect each of its writes: a property meant as an option of the writes but none of
   * them; the options that name one write ({@code write-id}, {@code overwrite.filter}), which every
   * write would carry; a {@code sequence.field} that is not a column that orders.
   */
  static void checkOptions(ObjectPath path, CatalogBaseTable table, Map<String, String> given) {
    TableIdentifier identifier = TableIdentifier.of(path.getDatabaseName(), path.getObjectName());
    IcebergCdcCatalogTableFactory.checkOptions(identifier, given, false);
    for (String ofOneWrite : List.of(BoundedWrite.WRITE_ID_OPTION, Overwrite.FILTER_OPTION)) {
      if (given.containsKey(ofOneWrite)) {
        throw new IllegalArgumentException(
            "table "
                + identifier
                + ": the property '"
                + ofOneWrite
                + "' is an option of one write, and every write of the table would carry it:"
                + " give it to that write in a hint, /*+ OPTIONS('"
                + ofOneWrite
                + "' = '...') */");
      }
    }
    // Refused as every write of the table would refuse it.
    IcebergCdcTableFactory.checkOnAmbiguousChange(
        org.apache.flink.configuration.Configuration.fromMap(given), identifier);
    String sequenceField = given.get(IcebergCdcTableFactory.SEQUENCE_FIELD.key());
    if (sequenceField != null && table instanceof ResolvedCatalogTable resolved) {
      SequenceField.check(identifier.toString(), resolved.getResolvedSchema(), sequenceField);
    }
  }

  /**
   * Drops a table; the staging table of an atomic {@code CREATE TABLE ... AS SELECT} (left where
   * its job could not drop it) without its files, which may be its table's: whether the table was
   * created from it cannot be told for sure once the table's first snapshot has expired or the
   * table was renamed.
   */
  @Override
  public void dropTable(ObjectPath path, boolean ignoreIfNotExists)
      throws TableNotExistException, CatalogException {
    TableIdentifier identifier = TableIdentifier.of(path.getDatabaseName(), path.getObjectName());
    if (StagedCreate.isStaging(catalog(), identifier)) {
      catalog().dropTable(identifier, false);
      return;
    }
    super.dropTable(path, ignoreIfNotExists);
  }

  /**
   * The table as Iceberg's catalog gives it, without the two options it adds for Iceberg's own
   * connector: {@code connector} and {@code src-catalog}, a copy of every option of the catalog,
   * its secrets too, which would reach {@code SHOW CREATE TABLE}, Flink's error messages (which
   * list a table's options) and a table created {@code LIKE} it. This catalog's tables are written
   * and read through its own factory ({@link #getFactory}), which needs neither.
   */
  @Override
  public CatalogTable getTable(ObjectPath path) throws TableNotExistException, CatalogException {
    CatalogTable table = super.getTable(path);
    Map<String, String> options = new HashMap<>(table.getOptions());
    options.remove(SOURCE_CATALOG);
    options.remove(CONNECTOR);
    return table.copy(options);
  }

  /** The catalog's procedures, all in its database {@code system}: {@code add_files}. */
  @Override
  public List<String> listProcedures(String database)
      throws DatabaseNotExistException, CatalogException {
    if (AddFilesProcedure.DATABASE.equals(database)) {
      return List.of(AddFilesProcedure.NAME);
    }
    if (!databaseExists(database)) {
      throw new DatabaseNotExistException(getName(), database);
    }
    return List.of();
  }

  @Override
  public Procedure getProcedure(ObjectPath path)
      throws ProcedureNotExistException, CatalogException {
    if (AddFilesProcedure.DATABASE.equals(path.getDatabaseName())
        && AddFilesProcedure.NAME.equals(path.getObjectName())) {
      return new AddFilesProcedure(catalog(), getName(), getDefaultDatabase());
    }
    throw new ProcedureNotExistException(getName(), path);
  }

  @Override
  public Optional<Factory> getFactory() {
    return Optional.of(new IcebergCdcCatalogTableFactory(this, definition));
  }
}
