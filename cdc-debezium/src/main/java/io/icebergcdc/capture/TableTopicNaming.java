package io.icebergcdc.capture;

import io.debezium.schema.DefaultTopicNamingStrategy;
import io.debezium.schema.SchemaTopicNamingStrategy;
import io.debezium.spi.schema.DataCollectionId;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * Debezium's default topic names ({@code prefix.schema.table} for PostgreSQL, {@code
 * prefix.database.table} for MySQL and MariaDB) with the tables' names as they are: Debezium
 * replaces every character that a Kafka topic name cannot hold ({@code $}, a space, an accented
 * letter) with {@code _}, and cuts names at 249 characters, for the Kafka topics it would write to.
 * The job writes to none; it finds a record's table by its topic, which must then be the one it
 * built from the table's name ({@code line$notes} and {@code line_notes} would otherwise share
 * one).
 *
 * <p>Debezium asks for a record's topic at every change, on the connector's decoding thread. Its
 * own strategies look the name up in a bounded map that records each access for its eviction (and
 * MySQL's builds the name before the lookup): in a loop that also parsed the table id from text, as
 * Debezium does for each message (some 220 ns), about 390 ns a change against 250 ns in a plain
 * concurrent map. These keep the names in such a map, emptied when it passes {@value #MOST_NAMES}
 * tables.
 */
public final class TableTopicNaming {

  /** The most names kept; past it the map starts again, as tables come and go over months. */
  static final int MOST_NAMES = 10_000;

  private TableTopicNaming() {}

  /** Debezium's name of a table's topic, made once. */
  static final class Names {

    private final Map<DataCollectionId, String> names = new ConcurrentHashMap<>();
    private final Function<DataCollectionId, String> make;

    Names(Function<DataCollectionId, String> make) {
      this.make = make;
    }

    String of(DataCollectionId id) {
      String name = names.get(id);
      if (name == null) {
        if (names.size() >= MOST_NAMES) {
          names.clear();
        }
        name = make.apply(id);
        names.put(id, name);
      }
      return name;
    }

    int size() {
      return names.size();
    }
  }

  /** PostgreSQL's: {@code prefix.schema.table}. */
  public static final class BySchema extends SchemaTopicNamingStrategy {

    private final Names names = new Names(super::dataChangeTopic);

    public BySchema(Properties properties) {
      super(properties);
    }

    @Override
    public String dataChangeTopic(DataCollectionId id) {
      return names.of(id);
    }

    /** How many names it keeps, for tests. */
    int namesKept() {
      return names.size();
    }

    @Override
    public String sanitizedTopicName(String topicName) {
      return topicName;
    }
  }

  /** MySQL's and MariaDB's: {@code prefix.database.table}. */
  public static final class ByDatabase extends DefaultTopicNamingStrategy {

    private final Names names = new Names(super::dataChangeTopic);

    public ByDatabase(Properties properties) {
      super(properties);
    }

    @Override
    public String dataChangeTopic(DataCollectionId id) {
      return names.of(id);
    }

    /** How many names it keeps, for tests. */
    int namesKept() {
      return names.size();
    }

    @Override
    public String sanitizedTopicName(String topicName) {
      return topicName;
    }
  }
}
