package io.icebergcdc.jobs.pipeline;

import io.icebergcdc.capture.AppearingTables;
import io.icebergcdc.capture.ChunkedSnapshot;
import io.icebergcdc.cdc.ChangeSchema;
import io.icebergcdc.cdc.NewSourceTableException;
import io.icebergcdc.cdc.RefusedSourceException;
import io.icebergcdc.jobs.capture.CapturedTable;
import io.icebergcdc.jobs.capture.SourceTables;
import io.icebergcdc.jobs.definition.DatabaseSource;
import io.icebergcdc.jobs.definition.JobDefinition;
import io.icebergcdc.jobs.definition.JobDefinitionException;
import io.icebergcdc.jobs.definition.TableDefinition;
import io.icebergcdc.sink.CatalogDefinition;
import io.icebergcdc.sink.CdcTables;
import io.icebergcdc.sink.NewTables;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.apache.flink.configuration.Configuration;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.AlreadyExistsException;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.types.Types;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The tables created in a captured database while the job runs that its table patterns match, made
 * ready as the job makes its tables ready before it starts ({@link
 * DatabaseSourceTranslator#prepareTables}): the source table described through JDBC metadata, its
 * Iceberg table created from that schema, or an existing one checked and evolved to it. The
 * source's enumerator and its readers may meet a table at once: the one that loses the race to
 * create the Iceberg table loads it.
 */
final class CaptureTables implements AppearingTables {

  private static final long serialVersionUID = 1L;
  private static final Logger LOG = LoggerFactory.getLogger(CaptureTables.class);

  private final CatalogDefinition catalog;
  private final TableDefinition tables;
  private final Configuration sinkOptions;
  private final DatabaseSource source;
  private final List<Pattern> patterns;
  private final NewTables newTables;

  /** The Iceberg tables of the job's own source tables, which no table that appears may join. */
  private final java.util.Set<String> jobTables;

  /** What a refusal adds: when the table came, and how the job goes on. */
  private static final String WHEN =
      " (the table appeared while the job runs, which ends; resume it with --restore-from latest"
          + " once the table is changed or left out)";

  /**
   * @param newTables how the job writes the tables that appear: a table that cannot be written with
   *     the others ends the job, which is built again with it
   */
  CaptureTables(
      JobDefinition job,
      DatabaseSource source,
      NewTables newTables,
      java.util.Collection<String> jobTables) {
    this.catalog = job.catalog();
    this.tables = job.tables();
    this.sinkOptions = new Configuration(job.sinkOptions());
    this.source = source;
    this.patterns = source.tablePatterns();
    this.newTables = newTables;
    this.jobTables = java.util.Set.copyOf(jobTables);
  }

  @Override
  public boolean matches(String topic) {
    String qualified = qualifiedName(topic);
    if (qualified == null) {
      return false;
    }
    for (Pattern pattern : patterns) {
      if (pattern.matcher(qualified).matches()) {
        return true;
      }
    }
    return false;
  }

  @Override
  public String topicOf(String namespace, String name) {
    return new CapturedTable(namespace, name, null, List.of()).topic(source.name());
  }

  /** The {@code namespace.name} of a topic's table; null for a topic of another source. */
  private String qualifiedName(String topic) {
    String prefix = source.name() + ".";
    return topic.startsWith(prefix) && topic.indexOf('.', prefix.length()) > 0
        ? topic.substring(prefix.length())
        : null;
  }

  @Override
  public boolean exists(String topic) {
    String qualified = qualifiedOf(topic);
    int dot = qualified.indexOf('.');
    return SourceTables.exists(source, qualified.substring(0, dot), qualified.substring(dot + 1));
  }

  @Override
  public boolean appliesTruncates() {
    return newTables.appliesTruncates();
  }

  @Override
  public String nameOf(String topic) {
    String qualified = qualifiedOf(topic);
    int dot = qualified.indexOf('.');
    return identifier(qualified.substring(0, dot), qualified.substring(dot + 1)).toString();
  }

  private String qualifiedOf(String topic) {
    String qualified = qualifiedName(topic);
    if (qualified == null) {
      throw new IllegalArgumentException("topic " + topic + " is not one of " + source.origin());
    }
    return qualified;
  }

  private TableIdentifier identifier(String namespace, String name) {
    String table = tables.nameOf(namespace, name, source.database());
    try {
      return TableIdentifier.parse(table);
    } catch (IllegalArgumentException e) {
      throw new RefusedSourceException(
          "table "
              + namespace
              + "."
              + name
              + " of "
              + source.origin()
              + " is named into '"
              + table
              + "', which is not a table name: "
              + e.getMessage()
              + WHEN,
          e);
    }
  }

  @Override
  public AppearingTables.Table tableOf(String topic, boolean takenBefore) {
    String qualified = qualifiedOf(topic);
    int dot = qualified.indexOf('.');
    String namespace = qualified.substring(0, dot);
    String name = qualified.substring(dot + 1);
    CapturedTable captured;
    try {
      captured = SourceTables.describe(source, namespace, name);
    } catch (IllegalArgumentException e) {
      if (!SourceTables.exists(source, namespace, name)) {
        // Dropped while it was described (its key and columns read as none).
        captured = null;
      } else {
        // Its message names the table and the database, and what to do.
        throw new RefusedSourceException(e.getMessage() + WHEN, e);
      }
    }
    TableIdentifier identifier = identifier(namespace, name);
    if (jobTables.contains(identifier.toString())) {
      // Before any change to it: the Iceberg table is another source table's.
      throw new RefusedSourceException(
          "table "
              + qualified
              + " of "
              + source.origin()
              + " is named into table "
              + identifier
              + ", which another of the job's source tables writes; give --table-template a"
              + " template that tells them apart (with {schema} or {database}), or leave the table"
              + " out of --tables"
              + WHEN);
    }
    if (captured == null) {
      return takenBefore ? ofDroppedTable(topic, qualified, namespace, name, identifier) : null;
    }
    Catalog connected = catalog.connect();
    try {
      org.apache.iceberg.Table table;
      try {
        table = createOrLoad(connected, identifier, captured);
      } catch (RuntimeException e) {
        if (e instanceof AlreadyExistsException || e.getCause() instanceof AlreadyExistsException) {
          // The enumerator or another reader created it meanwhile.
          table = createOrLoad(connected, identifier, captured);
        } else if (e instanceof JobDefinitionException) {
          // The table does not fit the job's definition; a failure of the catalog fails the job,
          // and a restart tries again.
          throw refused(qualified, e);
        } else {
          throw e;
        }
      }
      evolve(table, identifier, qualified, captured);
      if (!newTables.takesInFlight(identifier.toString())) {
        // Its own writer: the job is built again with it, as before tables were taken in flight.
        throw new NewSourceTableException(qualified, source.origin());
      }
      newTables.pinKeyHashing(identifier.toString());
      return appearing(identifier, qualified, table, captured.chunkedSnapshotTable(topic), null);
    } finally {
      CatalogDefinition.close(connected);
    }
  }

  /**
   * A table the source no longer has, which the job took: its changes before its drop are still to
   * be applied, to its Iceberg table; null if that does not exist either. Where the job cannot
   * write that Iceberg table while it runs, the table is {@link AppearingTables.Table#refusal
   * refused} at its first change, not here: the job's state names a dropped table long after its
   * last change, in every job built again.
   */
  AppearingTables.Table ofDroppedTable(
      String topic, String qualified, String namespace, String name, TableIdentifier identifier) {
    Catalog connected = catalog.connect();
    try {
      if (!connected.tableExists(identifier)) {
        LOG.info(
            "Table {} of {} appeared while the job runs and no longer exists: not captured",
            qualified,
            source.origin());
        return null;
      }
      org.apache.iceberg.Table table = connected.loadTable(identifier);
      if (table.schema().identifierFieldIds().isEmpty()) {
        // Changed since the job made it (by another engine): its key cannot be read back. A
        // change of it is then one of no captured table.
        LOG.warn(
            "Table {} of {} no longer exists, and its Iceberg table {} has no identifier fields"
                + " (its primary key) any more: not captured, and its changes before the drop"
                + " are not applied",
            qualified,
            source.origin(),
            identifier);
        return null;
      }
      CapturedTable asItWas =
          new CapturedTable(namespace, name, table.schema(), keyInColumnOrder(table.schema()));
      String refusal = refusalOfDropped(qualified, identifier);
      if (refusal == null) {
        LOG.warn(
            "Table {} of {} no longer exists; its changes before the drop still go to {}",
            qualified,
            source.origin(),
            identifier);
      } else {
        LOG.warn(
            "Table {} of {} no longer exists; a change of it before the drop ends the job: {}",
            qualified,
            source.origin(),
            refusal);
      }
      return appearing(identifier, qualified, table, asItWas.chunkedSnapshotTable(topic), refusal);
    } finally {
      CatalogDefinition.close(connected);
    }
  }

  /**
   * Why the job cannot write the Iceberg table of a table the source dropped while it runs, with
   * the ways out; null where it can: the job's writer takes it in flight. A job built again would
   * not help, since it lists the tables the source has.
   */
  private String refusalOfDropped(String qualified, TableIdentifier identifier) {
    String why;
    try {
      if (newTables.takesInFlight(identifier.toString())) {
        newTables.pinKeyHashing(identifier.toString());
        return null;
      }
      why =
          ", which the job cannot write with its other tables while it runs (it has no primary"
              + " key, Iceberg identifier fields), nor build again with a table the source no"
              + " longer has; leave ";
    } catch (IllegalArgumentException e) {
      why =
          ", which does not fit the job: "
              + e.getMessage()
              + "; change "
              + identifier
              + " and resume the job with --restore-from latest, or leave ";
    }
    return "a change of table "
        + qualified
        + " of "
        + source.origin()
        + ", which was dropped while the job ran, is still to be applied to table "
        + identifier
        + why
        + qualified
        + " out of --tables (its changes from the checkpoint to the drop are then not applied)";
  }

  /**
   * A table the job takes in flight: its Iceberg {@code table}, how its chunks are read, and why a
   * change of it ends the job (null where the job writes it).
   */
  private AppearingTables.Table appearing(
      TableIdentifier identifier,
      String qualified,
      org.apache.iceberg.Table table,
      ChunkedSnapshot.Table chunks,
      String refusal) {
    return new AppearingTables.Table(
        identifier.toString(),
        qualified,
        new ChangeSchema(table.schema()),
        new CatalogSchemaEvolution(catalog.loader(), Map.of(qualified, identifier)),
        chunks,
        refusal);
  }

  /**
   * The identifier fields in the order of the columns (the Iceberg table does not keep the source
   * key's order; the chunks of a dropped table end at their first query anyway).
   */
  private static List<String> keyInColumnOrder(org.apache.iceberg.Schema schema) {
    return schema.columns().stream()
        .filter(column -> schema.identifierFieldIds().contains(column.fieldId()))
        .map(Types.NestedField::name)
        .toList();
  }

  /**
   * Evolves the Iceberg table to the source table's schema, as the start does; the enumerator and
   * the readers may do so at once, and the one that loses the race tries again on the new schema.
   */
  private void evolve(
      org.apache.iceberg.Table table,
      TableIdentifier identifier,
      String qualified,
      CapturedTable captured) {
    for (int attempt = 1; ; attempt++) {
      try {
        List<String> evolved = CdcTables.evolve(table, captured.schema(), true);
        if (!evolved.isEmpty()) {
          LOG.info("Evolved Iceberg table {} to its source's schema: {}", identifier, evolved);
          table.refresh();
        }
        return;
      } catch (CommitFailedException e) {
        if (attempt == 3) {
          throw e;
        }
        table.refresh();
      } catch (IllegalArgumentException e) {
        throw refused(qualified, e);
      }
    }
  }

  private org.apache.iceberg.Table createOrLoad(
      Catalog connected, TableIdentifier identifier, CapturedTable table) {
    TableChecks.check(connected, identifier, table.schema(), tables, sinkOptions);
    return new TablePreparation(connected, catalog)
        .createOrLoad(
            identifier, table.schema(), null, tables.formatVersionToCreate(), table.primaryKey());
  }

  private RefusedSourceException refused(String qualified, RuntimeException e) {
    return new RefusedSourceException(
        "table " + qualified + " of " + source.origin() + ": " + e.getMessage() + WHEN, e);
  }
}
