package io.icebergcdc.jobs.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import io.icebergcdc.jobs.definition.DatabaseSource;
import io.icebergcdc.jobs.definition.DeadLetterOutput;
import io.icebergcdc.jobs.definition.JobDefinition;
import io.icebergcdc.jobs.definition.RuntimeDefinition;
import io.icebergcdc.jobs.definition.TableDefinition;
import io.icebergcdc.sink.CatalogDefinition;
import io.icebergcdc.sink.NewTables;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.apache.flink.configuration.Configuration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Which topics' tables a capture job takes when they appear. Making one ready needs the database
 * (PostgresCaptureITCase and MariaDbCaptureITCase).
 */
class CaptureTablesTest {

  @TempDir Path warehouse;

  @Test
  void takesTheTablesOfItsSourceThatItsPatternsMatch() {
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
            new Configuration(),
            DeadLetterOutput.NONE,
            new RuntimeDefinition(1, Duration.ofSeconds(1), null, null, null, 0));
    CaptureTables tables =
        new CaptureTables(
            job,
            source,
            new NewTables(catalog.loader(), new Configuration(), null, true),
            List.of("cdc.inventory_customers"));

    assertThat(tables.topicOf("inventory", "returns")).isEqualTo("pg.inventory.returns");
    assertThat(tables.matches("pg.inventory.returns")).isTrue();
    assertThat(tables.matches("pg.sales.returns")).as("another schema").isFalse();
    assertThat(tables.matches("other.inventory.returns")).as("another source").isFalse();
    assertThat(tables.matches("pg.inventory")).as("no table").isFalse();
  }
}
