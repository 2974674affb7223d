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
 */
public record TableTarget(
    String source, String route, TableIdentifier table, ChangeSchema schema) {}
