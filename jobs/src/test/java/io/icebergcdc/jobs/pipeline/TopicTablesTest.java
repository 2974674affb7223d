package io.icebergcdc.jobs.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import io.icebergcdc.cdc.ChangeSchema;
import io.icebergcdc.jobs.definition.KafkaTopics;
import io.icebergcdc.jobs.definition.TableDefinition;
import io.icebergcdc.jobs.demo.ChangelogGenerator;
import io.icebergcdc.jobs.kafka.KafkaRecord;
import io.icebergcdc.jobs.kafka.KafkaRouter;
import io.icebergcdc.sink.CatalogDefinition;
import io.icebergcdc.sink.NewTables;
import io.icebergcdc.sink.SharedCatalog;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.configuration.Configuration;
import org.apache.iceberg.Schema;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The table of a topic that appears while a job runs, made ready at its first record. */
class TopicTablesTest {

  @TempDir Path warehouse;

  /** The tables of topics that appear, named {@code late.<table>}, in {@code format}. */
  private static TopicTables tables(CatalogDefinition catalog, String format) {
    return new TopicTables(
        catalog,
        new TableDefinition("late.{table}", List.of(), null, null),
        new Configuration(),
        KafkaTopics.ofTopic("127.0.0.1:1", "unused", "group", format),
        new NewTables(new SharedCatalog(catalog.loader()), new Configuration(), null, false));
  }

  @Test
  void createsTheTableFromTheRecordAndEvolvesItByItsName() {
    CatalogDefinition catalog = CatalogDefinition.hadoop(warehouse.toString());
    TopicTables tables = tables(catalog, KafkaTopics.DEBEZIUM_JSON);
    // The generator's first event carries the Connect schema.
    String line = new ChangelogGenerator(10, 5, 0, 0, 1).generate().lines().get(0);
    KafkaRecord record =
        new KafkaRecord(
            "shop.public.items",
            0,
            0,
            ChangelogGenerator.kafkaKeyOf(line).getBytes(StandardCharsets.UTF_8),
            line.getBytes(StandardCharsets.UTF_8));

    KafkaRouter.NewTopic topic =
        tables.tableOf("shop.public.items", record, "topic shop.public.items/0@0");

    assertThat(topic.tableName()).isEqualTo("late.items");
    assertThat(catalog.connect().tableExists(TableIdentifier.of("late", "items"))).isTrue();
    Schema schema = topic.schema().schema();
    assertThat(schema.identifierFieldNames()).containsExactly("id");
    // Its parser follows a schema change by the name its changes carry: the table's.
    List<Types.NestedField> columns = new ArrayList<>(schema.columns());
    columns.add(Types.NestedField.optional(1000, "note", Types.StringType.get()));
    ChangeSchema evolved =
        topic
            .evolution()
            .evolve(
                topic.tableName(),
                new Schema(columns, schema.identifierFieldIds()),
                List.of("column note added"));
    assertThat(evolved.schema().findField("note")).isNotNull();
    assertThat(
            tables
                .tableOf("shop.public.items", record, "again")
                .schema()
                .schema()
                .findField("note"))
        .isNotNull();
  }

  @Test
  void aMaxwellTopicIsWrittenIntoItsExistingTableAndItsRecordsAreBadUntilThereIsOne() {
    CatalogDefinition catalog = CatalogDefinition.hadoop(warehouse.toString());
    TopicTables tables = tables(catalog, KafkaTopics.MAXWELL_JSON);
    KafkaRecord record =
        new KafkaRecord(
            "shop.items",
            0,
            7,
            "{\"id\":1}".getBytes(StandardCharsets.UTF_8),
            "{\"type\":\"insert\"}".getBytes(StandardCharsets.UTF_8));

    // Maxwell's records carry no schema to create the table from.
    org.assertj.core.api.Assertions.assertThatThrownBy(
            () -> tables.tableOf("shop.items", record, "topic shop.items/0@7"))
        .isInstanceOf(io.icebergcdc.cdc.MalformedChangeException.class)
        .hasMessageStartingWith("topic shop.items/0@7: ")
        .hasMessageContaining("table late.items does not exist")
        .hasMessageContaining("maxwell-json");
    assertThat(catalog.connect().tableExists(TableIdentifier.of("late", "items"))).isFalse();

    lateItemsKeyedById(catalog, false);
    KafkaRouter.NewTopic topic = tables.tableOf("shop.items", record, "topic shop.items/0@7");
    assertThat(topic.tableName()).isEqualTo("late.items");
    assertThat(topic.schema().schema().columns())
        .extracting(Types.NestedField::name)
        .containsExactly("id", "name");
  }

  /**
   * An existing table that does not fit the job (another primary key than --primary-key) ends the
   * job without a restart, which would meet it again.
   */
  @Test
  void aTopicWhoseTableDoesNotFitTheJobIsRefused() {
    CatalogDefinition catalog = CatalogDefinition.hadoop(warehouse.toString());
    lateItemsKeyedById(catalog, true);
    TopicTables tables =
        new TopicTables(
            catalog,
            new TableDefinition("late.{table}", List.of("name"), null, null),
            new Configuration(),
            KafkaTopics.ofTopic("127.0.0.1:1", "unused", "group", KafkaTopics.MAXWELL_JSON),
            new NewTables(new SharedCatalog(catalog.loader()), new Configuration(), null, false));
    org.assertj.core.api.Assertions.assertThatThrownBy(
            () ->
                tables.tableOf(
                    "shop.items", maxwellInsert("{\"name\":\"a\"}"), "topic shop.items/0@7"))
        .isInstanceOf(io.icebergcdc.cdc.RefusedSourceException.class)
        .hasMessageStartingWith("topic shop.items/0@7: topic shop.items appeared")
        .hasMessageContaining("late.items does not fit the job")
        .hasMessageContaining("--restore-from latest");
  }

  /**
   * A topic whose table lacks the job's --sequence-column ends the job without a restart, as the
   * job's start refuses such a topic; before, each of its changes failed at every restart.
   */
  @Test
  void aTopicWhoseTableLacksTheSequenceColumnIsRefused() {
    CatalogDefinition catalog = CatalogDefinition.hadoop(warehouse.toString());
    lateItemsKeyedById(catalog, false);
    TopicTables tables =
        new TopicTables(
            catalog,
            new TableDefinition("late.{table}", List.of(), null, null),
            new Configuration(),
            new KafkaTopics(
                "127.0.0.1:1",
                List.of("unused"),
                null,
                "group",
                "earliest",
                KafkaTopics.MAXWELL_JSON,
                java.util.Map.of(),
                "version"),
            new NewTables(new SharedCatalog(catalog.loader()), new Configuration(), null, false));
    org.assertj.core.api.Assertions.assertThatThrownBy(
            () -> tables.tableOf("shop.items", maxwellInsert("{\"id\":1}"), "topic shop.items/0@7"))
        .isInstanceOf(io.icebergcdc.cdc.RefusedSourceException.class)
        .hasMessageContaining("late.items does not fit the job")
        .hasMessageContaining("--sequence-column version is not a column of table late.items");
  }

  /** A Maxwell insert of topic shop.items, at partition 0 offset 7, with {@code key}. */
  private static KafkaRecord maxwellInsert(String key) {
    return new KafkaRecord(
        "shop.items",
        0,
        7,
        key.getBytes(StandardCharsets.UTF_8),
        "{\"type\":\"insert\"}".getBytes(StandardCharsets.UTF_8));
  }

  /** Creates table late.items (id, name), keyed by id. */
  private static void lateItemsKeyedById(CatalogDefinition catalog, boolean nameRequired) {
    io.icebergcdc.sink.CdcTables.createOrLoad(
        catalog.connect(),
        TableIdentifier.of("late", "items"),
        new Schema(
            List.of(
                Types.NestedField.required(1, "id", Types.LongType.get()),
                Types.NestedField.of(2, !nameRequired, "name", Types.StringType.get())),
            java.util.Set.of(1)),
        null,
        2,
        List.of("id"));
  }

  @Test
  void twoSourcesNamedIntoOneTableAreRefusedAtTheStartNamingBoth() {
    CatalogDefinition catalog = CatalogDefinition.hadoop(warehouse.toString());
    TableIdentifier id = TableIdentifier.of("cdc", "orders");
    org.apache.iceberg.Table table =
        io.icebergcdc.sink.CdcTables.createOrLoad(
            catalog.connect(),
            id,
            new Schema(
                List.of(Types.NestedField.required(1, "id", Types.LongType.get())),
                java.util.Set.of(1)),
            null,
            2,
            List.of("id"));
    ChangeSchema schema = new ChangeSchema(table.schema());
    List<TableTarget> targets =
        List.of(
            new TableTarget("db1.public.orders", "db1.public.orders", id, schema),
            new TableTarget("db2.public.orders", "db2.public.orders", id, schema));
    org.assertj.core.api.Assertions.assertThatThrownBy(
            () ->
                SinkTranslator.of(
                    targets,
                    new io.icebergcdc.sink.SharedCatalog(catalog.loader()),
                    new Configuration(),
                    true,
                    false,
                    null,
                    null))
        .hasMessageContaining("db1.public.orders")
        .hasMessageContaining("db2.public.orders")
        .hasMessageContaining("cdc.orders");
  }
}
