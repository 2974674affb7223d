package io.icebergcdc.capture;

import static org.assertj.core.api.Assertions.assertThat;

import io.icebergcdc.cdc.BadRecordPolicy;
import io.icebergcdc.cdc.ChangeSchema;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.iceberg.Schema;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;

/** The look for tables that appeared while the job runs. */
class TableLookTest {

  private static final ChangeSchema SCHEMA =
      new ChangeSchema(
          new Schema(
              List.of(
                  Types.NestedField.required(1, "id", Types.LongType.get()),
                  Types.NestedField.optional(2, "name", Types.StringType.get())),
              Set.of(1)));

  private static ChunkedSnapshot.Table table(String name) {
    return new ChunkedSnapshot.Table(
        "db.public." + name, "public", name, List.of("id"), List.of("id", "name"), true);
  }

  /** Makes every table ready but {@code public.broken}, whose catalog refuses it for now. */
  private static final class Appearing implements AppearingTables {
    private static final long serialVersionUID = 1L;

    @Override
    public boolean appliesTruncates() {
      return true;
    }

    @Override
    public boolean matches(String topic) {
      return topic.startsWith("db.public.");
    }

    @Override
    public String topicOf(String namespace, String name) {
      return "db." + namespace + "." + name;
    }

    @Override
    public boolean exists(String topic) {
      return true;
    }

    @Override
    public String nameOf(String topic) {
      return "lake." + topic.substring(topic.lastIndexOf('.') + 1);
    }

    @Override
    public Table tableOf(String topic, boolean takenBefore) {
      if (topic.endsWith(".broken")) {
        throw new IllegalStateException("the catalog refused to create lake.broken");
      }
      String name = topic.substring(topic.lastIndexOf('.') + 1);
      return new Table(nameOf(topic), "public." + name, SCHEMA, null, table(name));
    }
  }

  /**
   * A table that cannot be made ready now does not hold back the others that appeared with it: it
   * is left to the next look, where it is tried again.
   */
  @Test
  void aTableThatCannotBeMadeReadyDoesNotHoldBackTheOthers() {
    CaptureRoutes routes =
        new CaptureRoutes(
                Map.of("db.public.items", SCHEMA),
                Map.of("db.public.items", "public.items"),
                Map.of("db.public.items", "lake.items"),
                "db",
                BadRecordPolicy.FAIL)
            .takingTablesThatAppear(new Appearing());
    ChunkedSnapshot snapshot = new ChunkedSnapshot(List.of(table("items")), 100, 100);
    Set<String> taken = new HashSet<>(Set.of("db.public.items"));
    TableLook look =
        new TableLook(
            routes,
            snapshot,
            new NewTableWatch(
                List.of("public\\..*"), Set.of("public.items"), Duration.ofSeconds(1)),
            Map.of(),
            taken,
            new HashMap<>());

    List<ChunkedSnapshot.Table> ready =
        look.madeReady(
            List.of(
                new TableListing.Name("public", "broken"),
                new TableListing.Name("public", "orders"),
                new TableListing.Name("public", "items")));

    assertThat(ready).extracting(ChunkedSnapshot.Table::topic).containsExactly("db.public.orders");
    // Not taken: the next look tries it again.
    assertThat(routes.indexOf("db.public.broken")).isNegative();
  }
}
