package io.icebergcdc.jobs.capture;

import java.util.List;
import org.apache.iceberg.Schema;

/**
 * A source table the job captures, with the Iceberg schema its rows map to.
 *
 * @param namespace the PostgreSQL schema or the MySQL database
 * @param name the table's name
 * @param schema the Iceberg schema, with the primary key as identifier fields
 * @param primaryKey the primary key's columns, in key order
 */
public record CapturedTable(String namespace, String name, Schema schema, List<String> primaryKey) {

  /** Debezium's topic for the table's changes. */
  public String topic(String prefix) {
    return prefix + "." + namespace + "." + name;
  }

  public String qualifiedName() {
    return namespace + "." + name;
  }
}
