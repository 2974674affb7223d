package io.icebergcdc.capture;

import static org.assertj.core.api.Assertions.assertThat;

import io.debezium.relational.TableId;
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

  @Test
  void namesAreTheTablesAsTheyAreEachTime() {
    TableTopicNaming.BySchema postgres = new TableTopicNaming.BySchema(prefixed());
    TableTopicNaming.ByDatabase mysql = new TableTopicNaming.ByDatabase(prefixed());

    for (int i = 0; i < 3; i++) {
      // A table id of its own at each change, as Debezium parses one from each message.
      assertThat(postgres.dataChangeTopic(new TableId("shop", "public", "line$notes")))
          .isEqualTo("server.public.line$notes");
      assertThat(postgres.dataChangeTopic(new TableId("shop", "public", "line_notes")))
          .isEqualTo("server.public.line_notes");
      assertThat(mysql.dataChangeTopic(new TableId("shop", null, "Ümlaut table")))
          .isEqualTo("server.shop.Ümlaut table");
    }
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
