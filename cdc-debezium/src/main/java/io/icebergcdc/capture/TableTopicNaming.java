package io.icebergcdc.capture;

import io.debezium.schema.DefaultTopicNamingStrategy;
import io.debezium.schema.SchemaTopicNamingStrategy;
import java.util.Properties;

/**
 * Debezium's default topic names ({@code prefix.schema.table} for PostgreSQL, {@code
 * prefix.database.table} for MySQL and MariaDB) with the tables' names as they are: Debezium
 * replaces every character that a Kafka topic name cannot hold ({@code $}, a space, an accented
 * letter) with {@code _}, and cuts names at 249 characters, for the Kafka topics it would write to.
 * The job writes to none; it finds a record's table by its topic, which must then be the one it
 * built from the table's name ({@code line$notes} and {@code line_notes} would otherwise share
 * one).
 */
public final class TableTopicNaming {

  private TableTopicNaming() {}

  /** PostgreSQL's: {@code prefix.schema.table}. */
  public static final class BySchema extends SchemaTopicNamingStrategy {

    public BySchema(Properties properties) {
      super(properties);
    }

    @Override
    public String sanitizedTopicName(String topicName) {
      return topicName;
    }
  }

  /** MySQL's and MariaDB's: {@code prefix.database.table}. */
  public static final class ByDatabase extends DefaultTopicNamingStrategy {

    public ByDatabase(Properties properties) {
      super(properties);
    }

    @Override
    public String sanitizedTopicName(String topicName) {
      return topicName;
    }
  }
}
