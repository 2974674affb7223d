package io.icebergcdc.jobs.pipeline;

import io.icebergcdc.cdc.ChangeSchema;
import org.apache.iceberg.catalog.TableIdentifier;

/**
 * One table a job writes, ready before the job starts: created or loaded and evolved to its
 * source's schema.
 *
 * @param source the source's name for it: the file's name, the captured {@code schema.table}, or
 *     the Kafka topic
 * @param route the key the source's router sends its changes by (the Debezium topic of a captured
 *     table, the Kafka topic), or the file's name
 * @param table the Iceberg table
 * @param schema the schema its changes are parsed into
 * @param kafkaTopicId for a table read from a Kafka topic, the topic's id as the job found it when
 *     it was built (its snapshots record it beside their offsets); null otherwise or where unknown
 */
public record TableTarget(
    String source, String route, TableIdentifier table, ChangeSchema schema, String kafkaTopicId) {

  /** A table not read from a Kafka topic, or whose topic's id is unknown. */
  public TableTarget(String source, String route, TableIdentifier table, ChangeSchema schema) {
    this(source, route, table, schema, null);
  }
}
