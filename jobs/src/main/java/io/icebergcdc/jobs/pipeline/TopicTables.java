package io.icebergcdc.jobs.pipeline;

import io.icebergcdc.cdc.ChangeSchema;
import io.icebergcdc.cdc.MalformedChangeException;
import io.icebergcdc.jobs.definition.JobDefinition;
import io.icebergcdc.jobs.definition.KafkaTopics;
import io.icebergcdc.jobs.definition.TableDefinition;
import io.icebergcdc.jobs.kafka.KafkaRecord;
import io.icebergcdc.jobs.kafka.KafkaRouter;
import io.icebergcdc.sink.CatalogDefinition;
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
 * a missing one created from the record's Connect schema. Readers of several partitions of the
 * topic may meet it at once: the one that loses the race to create the table loads it.
 */
final class TopicTables implements KafkaRouter.NewTopics {

  private static final long serialVersionUID = 1L;

  private final CatalogDefinition catalog;
  private final TableDefinition tables;
  private final Configuration sinkOptions;
  private final KafkaTopics kafka;

  TopicTables(JobDefinition job, KafkaTopics kafka) {
    this.catalog = job.catalog();
    this.tables = job.tables();
    this.sinkOptions = new Configuration(job.sinkOptions());
    this.kafka = kafka;
  }

  @Override
  public KafkaRouter.NewTopic tableOf(String topic, KafkaRecord record, String locator) {
    TableIdentifier identifier = TableIdentifier.parse(tables.nameOfTopic(topic));
    Catalog connected = catalog.connect();
    try {
      Table table;
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
      return new KafkaRouter.NewTopic(
          identifier.toString(),
          new ChangeSchema(table.schema()),
          new CatalogSchemaEvolution(catalog.loader(), Map.of(topic, identifier)));
    } finally {
      CatalogDefinition.close(connected);
    }
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
        KafkaTopics.DEBEZIUM_JSON,
        identifier,
        () -> {
          // The record's Connect schema, else that of the first record of the topic with one,
          // as for the topics of the job's start.
          Schema schema =
              KafkaSourceTranslator.schemaOfRecord(
                  record.key, record.value, tables.primaryKey(), locator);
          try {
            return schema != null
                ? schema
                : KafkaSourceTranslator.schemaFromTopic(
                    kafka, tables.primaryKey(), topic, identifier);
          } catch (IllegalArgumentException e) {
            throw new MalformedChangeException(
                locator
                    + ": topic "
                    + topic
                    + " appeared while the job runs, and "
                    + e.getMessage());
          }
        });
  }
}
