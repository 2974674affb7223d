package io.icebergcdc.jobs.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import io.icebergcdc.capture.AppearingTables;
import io.icebergcdc.jobs.definition.DatabaseSource;
import io.icebergcdc.jobs.definition.DeadLetterOutput;
import io.icebergcdc.jobs.definition.JobDefinition;
import io.icebergcdc.jobs.definition.RuntimeDefinition;
import io.icebergcdc.jobs.definition.TableDefinition;
import io.icebergcdc.sink.CatalogDefinition;
import io.icebergcdc.sink.NewTables;
import io.icebergcdc.sink.SharedCatalog;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.apache.flink.configuration.Configuration;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Which topics' tables a capture job takes when they appear. Making one ready needs the database
 * (PostgresCaptureITCase and MariaDbCaptureITCase), save a table the source dropped.
 */
class CaptureTablesTest {

  @TempDir Path warehouse;

  @Test
  void takesTheTablesOfItsSourceThatItsPatternsMatch() {
    CaptureTables tables = captureTables();

    assertThat(tables.topicOf("inventory", "returns")).isEqualTo("pg.inventory.returns");
    assertThat(tables.matches("pg.inventory.returns")).isTrue();
    assertThat(tables.matches("pg.sales.returns")).as("another schema").isFalse();
    assertThat(tables.matches("other.inventory.returns")).as("another source").isFalse();
    assertThat(tables.matches("pg.inventory")).as("no table").isFalse();
  }

  /**
   * A table the job took while it ran and the source dropped since, whose changes before the drop
   * reach a job built again without it: its Iceberg table is written with the others, distributed
   * by key or by partition, deleting by position or by key, if it can be; if it cannot (the table
   * does not fit the job's options), the table is still taken (the job's state names it long after
   * its last change) with the refusal that ends the job at a change of it, naming both tables and
   * the ways out (before, its writer failed at every restart).
   */
  @Test
  void aDroppedTableIsWrittenWithTheOthersOrRefusedAtItsFirstChangeNamingTheWayOut() {
    Schema schema =
        new Schema(
            List.of(
                Types.NestedField.required(1, "id", Types.IntegerType.get()),
                Types.NestedField.optional(2, "region", Types.StringType.get())),
            java.util.Set.of(1));
    PartitionSpec byBucket = PartitionSpec.builderFor(schema).bucket("id", 4).build();
    Catalog iceberg = CatalogDefinition.hadoop(warehouse.toString()).connect();
    iceberg.createTable(TableIdentifier.parse("cdc.inventory_returns"), schema, byBucket);
    iceberg.createTable(
        TableIdentifier.parse("cdc.inventory_staging"),
        schema,
        byBucket,
        java.util.Map.of(TableProperties.WRITE_DISTRIBUTION_MODE, "hash"));
    CaptureTables tables = captureTables();

    AppearingTables.Table returns = dropped(tables, "returns");
    assertThat(returns.name()).isEqualTo("cdc.inventory_returns");
    assertThat(returns.refusal()).as("distributed by key: written with the others").isNull();
    AppearingTables.Table staging = dropped(tables, "staging");
    assertThat(staging.name()).isEqualTo("cdc.inventory_staging");
    assertThat(staging.refusal()).as("distributed by partition: written with the others").isNull();
    // Each taken with the hashing of its keys recorded, which the job follows from then on.
    assertThat(iceberg.loadTable(TableIdentifier.parse("cdc.inventory_returns")).properties())
        .containsEntry("iceberg-cdc.keys-hashed-by", "primary-key");
    assertThat(iceberg.loadTable(TableIdentifier.parse("cdc.inventory_staging")).properties())
        .hasEntrySatisfying(
            "iceberg-cdc.keys-hashed-by",
            pin -> assertThat(pin).startsWith("partition-spec:{\"spec-id\":0,"));

    Configuration equality = new Configuration();
    equality.setString("sink.delete-mode", "EQUALITY");
    AppearingTables.Table byKey = dropped(captureTables(equality), "staging");
    assertThat(byKey.name()).isEqualTo("cdc.inventory_staging");
    assertThat(byKey.refusal()).as("deleting by key: written with the others too").isNull();
    assertThat(dropped(tables, "gone")).as("no Iceberg table either").isNull();

    // An Iceberg table that does not fit the job's options is refused at a change too, not at
    // every start of the job that takes its route.
    Configuration byPartition = new Configuration();
    byPartition.setString("sink.distribution", "PARTITION");
    iceberg.createTable(TableIdentifier.parse("cdc.inventory_flat"), schema);
    assertThat(dropped(captureTables(byPartition), "flat").refusal())
        .startsWith("a change of table inventory.flat of ")
        .contains("which does not fit the job: sink.distribution = PARTITION needs a partitioned")
        .contains("change cdc.inventory_flat and resume the job with --restore-from latest")
        .contains("leave inventory.flat out of --tables");
    // One whose key another engine removed can no longer be read: not captured.
    iceberg.createTable(
        TableIdentifier.parse("cdc.inventory_keyless"), new Schema(schema.columns()));
    assertThat(dropped(tables, "keyless")).isNull();
  }

  private static AppearingTables.Table dropped(CaptureTables tables, String name) {
    return tables.ofDroppedTable(
        "pg.inventory." + name,
        "inventory." + name,
        "inventory",
        name,
        TableIdentifier.parse("cdc.inventory_" + name));
  }

  private CaptureTables captureTables() {
    return captureTables(new Configuration());
  }

  private CaptureTables captureTables(Configuration sinkOptions) {
    DatabaseSource source =
        new DatabaseSource(
            DatabaseSource.Kind.POSTGRES,
            "localhost",
            5432,
            "postgres",
            null,
            "shop",
            List.of("inventory\\..*"),
            "slot",
            "publication",
            0,
            "pg");
    CatalogDefinition catalog = CatalogDefinition.hadoop(warehouse.toString());
    JobDefinition job =
        new JobDefinition(
            source,
            catalog,
            new TableDefinition("cdc.{schema}_{table}", List.of(), null, null),
            sinkOptions,
            DeadLetterOutput.NONE,
            new RuntimeDefinition(1, Duration.ofSeconds(1), null, null, null, 0));
    return new CaptureTables(
        job,
        source,
        new NewTables(new SharedCatalog(catalog.loader()), sinkOptions, null, true),
        List.of("cdc.inventory_customers"));
  }
}
