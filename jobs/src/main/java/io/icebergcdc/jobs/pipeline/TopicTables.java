package io.icebergcdc.jobs.pipeline;

import io.icebergcdc.cdc.ChangeSchema;
import io.icebergcdc.cdc.MalformedChangeException;
import io.icebergcdc.cdc.NewSourceTableException;
import io.icebergcdc.cdc.RefusedSourceException;
import io.icebergcdc.jobs.definition.JobDefinition;
import io.icebergcdc.jobs.definition.JobDefinitionException;
import io.icebergcdc.jobs.definition.KafkaTopics;
import io.icebergcdc.jobs.definition.TableDefinition;
import io.icebergcdc.jobs.kafka.KafkaRecord;
import io.icebergcdc.jobs.kafka.KafkaRouter;
import io.icebergcdc.sink.CatalogDefinition;
import io.icebergcdc.sink.NewTables;
import java.util.Map;
import org.apache.flink.configuration.Configuration;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.AlreadyExistsException;

/**
 * The tables of the topics that appear while a pattern job runs, made ready in the task at a new
 * topic's first record, as the job makes its tables ready before it starts ({@link
 * KafkaSourceTranslator#tableOfTopic}): an existing table is checked against the job's definition,
 * a missing one created from the record's Connect schema (Debezium JSON; Maxwell's and upsert
 * records carry no schema, so their topic's records are bad records while the table is missing).
 * Readers of several partitions of the topic may meet it at once: the one that loses the race to
 * create the table loads it.
 */
final class TopicTables implements KafkaRouter.NewTopics {

  private static final long serialVersionUID = 1L;

  private final CatalogDefinition catalog;
  private final TableDefinition tables;
  private final Configuration sinkOptions;
  private final KafkaTopics kafka;
  private final NewTables newTables;

  /**
   * The topics whose records this task read from their start for a schema in vain (a slow read,
   * with its own consumer), with why: once each, as a table not ready is tried again every few
   * seconds, and the reason is repeated.
   */
  private transient java.util.Map<String, String> scans;

  /**
   * @param newTables how the job writes the tables that appear: a table that cannot be written with
   *     the others ends the job, which is built again with it
   */
  TopicTables(JobDefinition job, KafkaTopics kafka, NewTables newTables) {
    this(job.catalog(), job.tables(), job.sinkOptions(), kafka, newTables);
  }

  TopicTables(
      CatalogDefinition catalog,
      TableDefinition tables,
      Configuration sinkOptions,
      KafkaTopics kafka,
      NewTables newTables) {
    this.catalog = catalog;
    this.tables = tables;
    this.sinkOptions = new Configuration(sinkOptions);
    this.kafka = kafka;
    this.newTables = newTables;
  }

  @Override
  public boolean appliesTruncates() {
    return newTables.appliesTruncates();
  }

  @Override
  public KafkaRouter.NewTopic tableOf(String topic, KafkaRecord record, String locator) {
    TableIdentifier identifier = TableIdentifier.parse(tables.nameOfTopic(topic));
    Catalog connected = catalog.connect();
    try {
      if (!kafka.format().equals(KafkaTopics.DEBEZIUM_JSON) && !connected.tableExists(identifier)) {
        throw new MalformedChangeException(
            locator
                + ": topic "
                + topic
                + " appeared while the job runs, and its table "
                + identifier
                + " does not exist; "
                + kafka.format()
                + " records carry no schema to create it from, create it first with the primary"
                + " key as identifier fields");
      }
      Table table;
      try {
        try {
          table = table(connected, topic, identifier, record, locator);
        } catch (RuntimeException e) {
          if (!(e instanceof AlreadyExistsException
              || e.getCause() instanceof AlreadyExistsException)) {
            throw e;
          }
          // Another reader created it meanwhile.
          table = table(connected, topic, identifier, record, locator);
        }
        // As the job's start checks its topics' tables: a table without the column would fail
        // each of its changes, at every restart.
        TableChecks.checkSequenceColumn(null, identifier, table.schema(), kafka.sequenceColumn());
      } catch (JobDefinitionException e) {
        // The table does not fit the job's definition (its key, format version, partitioning): a
        // restart would meet it again. A failure of the catalog fails the job, and a restart tries
        // again.
        throw new RefusedSourceException(
            locator
                + ": topic "
                + topic
                + " appeared while the job runs, and its table "
                + identifier
                + " does not fit the job: "
                + e.getMessage()
                + " (the job ends; resume it with --restore-from latest once the table is changed"
                + " or the topic left out of --topic-pattern)",
            e);
      }
      if (!newTables.takesInFlight(identifier.toString())) {
        // Its own writer: the job is built again with it, as before tables were taken in flight.
        throw new NewSourceTableException(topic, locator);
      }
      newTables.pinKeyHashing(identifier.toString());
      // The parser names the table as its changes carry it: its identifier.
      return new KafkaRouter.NewTopic(
          identifier.toString(),
          new ChangeSchema(table.schema()),
          new CatalogSchemaEvolution(catalog.loader(), Map.of(identifier.toString(), identifier)));
    } finally {
      CatalogDefinition.close(connected);
    }
  }

  /** The topics this task read from their start for a schema in vain, with why. */
  private java.util.Map<String, String> scans() {
    if (scans == null) {
      scans = new java.util.HashMap<>();
    }
    return scans;
  }

  private Table table(
      Catalog connected,
      String topic,
      TableIdentifier identifier,
      KafkaRecord record,
      String locator) {
    return KafkaSourceTranslator.tableOfTopic(
        new TablePreparation(connected, catalog),
        tables,
        sinkOptions,
        kafka.format(),
        identifier,
        () -> {
          // The record's Connect schema, else that of the first record of the topic with one,
          // as for the topics of the job's start.
          Schema schema;
          try {
            schema =
                KafkaSourceTranslator.schemaOfRecord(
                    record.key, record.value, tables.primaryKey(), locator);
          } catch (IllegalArgumentException e) {
            // This record cannot tell the table (no key, say): another of the topic's may. The
            // record itself is then parsed as the bad record it is.
            schema = null;
          }
          if (schema != null) {
            return schema;
          }
          String scanned = scans().get(topic);
          if (scanned != null) {
            // Read from its start once already: a later record of it may bring a schema.
            throw new MalformedChangeException(
                locator + ": topic " + topic + " appeared while the job runs, and " + scanned);
          }
          try {
            return KafkaSourceTranslator.schemaFromTopic(
                kafka, tables.primaryKey(), topic, identifier);
          } catch (IllegalArgumentException e) {
            scans().put(topic, String.valueOf(e.getMessage()));
            throw new MalformedChangeException(
                locator
                    + ": topic "
                    + topic
                    + " appeared while the job runs, and "
                    + e.getMessage(),
                e);
          }
        });
  }
}
