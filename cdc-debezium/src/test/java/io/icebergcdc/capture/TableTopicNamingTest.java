package io.icebergcdc.capture;

import static org.assertj.core.api.Assertions.assertThat;

import io.debezium.relational.TableId;
import io.debezium.schema.DefaultTopicNamingStrategy;
import io.debezium.schema.SchemaTopicNamingStrategy;
import io.debezium.spi.schema.DataCollectionId;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import org.junit.jupiter.api.Test;

/** The topic names the job finds its tables by, made once per table. */
class TableTopicNamingTest {

  private static Properties prefixed() {
    Properties properties = new Properties();
    properties.setProperty("topic.prefix", "server");
    return properties;
  }

  /** Debezium's own strategies, with the names as they are: what the job's must give. */
  private static final class DebeziumsBySchema extends SchemaTopicNamingStrategy {
    DebeziumsBySchema() {
      super(prefixed());
    }

    @Override
    public String sanitizedTopicName(String topicName) {
      return topicName;
    }
  }

  private static final class DebeziumsByDatabase extends DefaultTopicNamingStrategy {
    DebeziumsByDatabase() {
      super(prefixed());
    }

    @Override
    public String sanitizedTopicName(String topicName) {
      return topicName;
    }
  }

  @Test
  void namesAreDebeziumsEachTimeAndPastTheMostKept() {
    TableTopicNaming.BySchema postgres = new TableTopicNaming.BySchema(prefixed());
    TableTopicNaming.ByDatabase mysql = new TableTopicNaming.ByDatabase(prefixed());
    DebeziumsBySchema postgresExpected = new DebeziumsBySchema();
    DebeziumsByDatabase mysqlExpected = new DebeziumsByDatabase();
    List<TableId> ids = new ArrayList<>();
    ids.add(new TableId("shop", "public", "line$notes"));
    ids.add(new TableId("shop", "public", "line_notes"));
    ids.add(new TableId("shop", "Public", "Line_Notes"));
    ids.add(new TableId("other", "public", "line_notes"));
    ids.add(new TableId(null, "public", "no catalog"));
    ids.add(new TableId("shop", null, "Ümlaut table"));
    for (int i = 0; i < TableTopicNaming.MOST_NAMES + 10; i++) {
      ids.add(new TableId("shop", "s" + (i % 7), "t" + i));
    }

    for (int round = 0; round < 2; round++) {
      for (TableId id : ids) {
        // A table id of its own at each change, as Debezium parses one from each message.
        TableId parsed = new TableId(id.catalog(), id.schema(), id.table());
        assertThat(postgres.dataChangeTopic(parsed))
            .isEqualTo(postgresExpected.dataChangeTopic(id));
        assertThat(mysql.dataChangeTopic(parsed)).isEqualTo(mysqlExpected.dataChangeTopic(id));
      }
    }
    assertThat(postgres.dataChangeTopic(new TableId("shop", "public", "line$notes")))
        .isEqualTo("server.public.line$notes");
    assertThat(mysql.dataChangeTopic(new TableId("shop", null, "Ümlaut table")))
        .isEqualTo("server.shop.Ümlaut table");
  }

  @Test
  void theStrategiesKeepTheirNames() {
    TableTopicNaming.BySchema postgres = new TableTopicNaming.BySchema(prefixed());
    TableTopicNaming.ByDatabase mysql = new TableTopicNaming.ByDatabase(prefixed());
    TableId id = new TableId("shop", "public", "items");
    String first = postgres.dataChangeTopic(id);

    // The same instance again: made once, not built anew at each change.
    assertThat(postgres.dataChangeTopic(new TableId("shop", "public", "items"))).isSameAs(first);
    assertThat(postgres.namesKept()).isEqualTo(1);
    mysql.dataChangeTopic(new TableId("shop", null, "items"));
    mysql.dataChangeTopic(new TableId("shop", null, "items"));
    assertThat(mysql.namesKept()).isEqualTo(1);
  }

  @Test
  void aNameIsMadeOncePerTableUntilTheMostAreKept() {
    List<DataCollectionId> made = new ArrayList<>();
    TableTopicNaming.Names names =
        new TableTopicNaming.Names(
            id -> {
              made.add(id);
              return "topic of " + id;
            });

    for (int i = 0; i < 3; i++) {
      assertThat(names.of(new TableId("db", "s", "t"))).isEqualTo("topic of db.s.t");
    }
    assertThat(made).hasSize(1);

    for (int i = 1; i < TableTopicNaming.MOST_NAMES; i++) {
      names.of(new TableId("db", "s", "t" + i));
    }
    assertThat(names.size()).isEqualTo(TableTopicNaming.MOST_NAMES);
    names.of(new TableId("db", "s", "one more"));
    assertThat(names.size()).isEqualTo(1);
    assertThat(names.of(new TableId("db", "s", "t"))).isEqualTo("topic of db.s.t");
    assertThat(made).hasSize(TableTopicNaming.MOST_NAMES + 2);
  }
}
