package io.icebergcdc.jobs.definition;

import java.util.List;

/**
 * The Iceberg tables a job writes and how those it creates look.
 *
 * @param nameTemplate the table's name ({@code db.table}), or for sources of several tables a
 *     template of names: {@code {schema}}, {@code {table}} and {@code {database}} for a captured
 *     database, {@code {topic}} (its dots made underscores) and {@code {table}} (the part of its
 *     name after the last dot) for Kafka; the part before the last dot is the namespace
 * @param primaryKey the key columns of a table to create, and the key an existing table must have;
 *     empty where the source tells the key (a database's primary keys, a Kafka record's key)
 * @param partitionBy the partition spec of a table to create ({@code bucket(16, id), days(ts)}),
 *     and the spec an existing table must have; null for an unpartitioned table to create and no
 *     check of an existing one
 * @param formatVersion the format version of a table to create, and the one an existing table must
 *     have; null for {@link #DEFAULT_FORMAT_VERSION} and no check
 */
public record TableDefinition(
    String nameTemplate, List<String> primaryKey, String partitionBy, Integer formatVersion)
    implements java.io.Serializable {

  public static final int DEFAULT_FORMAT_VERSION = 2;

  public TableDefinition {
    primaryKey = List.copyOf(primaryKey);
    if (formatVersion != null && formatVersion != 2 && formatVersion != 3) {
      throw new JobDefinitionException(
          "format version must be 2 or 3 (row-level deletes need at least 2), not "
              + formatVersion);
    }
  }

  /** The format version of a table to create. */
  public int formatVersionToCreate() {
    return formatVersion == null ? DEFAULT_FORMAT_VERSION : formatVersion;
  }

  /** The table name of a captured database table. */
  public String nameOf(String schema, String table, String database) {
    return nameTemplate
        .replace("{schema}", schema)
        .replace("{table}", table)
        .replace("{database}", database);
  }

  /** The table name of a Kafka topic. */
  public String nameOfTopic(String topic) {
    return nameTemplate
        .replace("{topic}", topic.replace('.', '_'))
        .replace("{table}", topic.substring(topic.lastIndexOf('.') + 1));
  }
}
