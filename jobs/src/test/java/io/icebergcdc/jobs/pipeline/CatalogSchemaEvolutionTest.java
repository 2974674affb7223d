package io.icebergcdc.jobs.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import io.icebergcdc.cdc.ChangeSchema;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.Schema;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.flink.CatalogLoader;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CatalogSchemaEvolutionTest {

  private static final TableIdentifier TABLE = TableIdentifier.of("cdc", "public_docs");

  @TempDir Path warehouse;

  /**
   * A table's schemas by id, for rows that carry one: the current one after an evolution, the one
   * before it, and none for an id the table never had.
   */
  @Test
  void findsTheTablesSchemasByIdBeforeAndAfterAnEvolution() {
    CatalogLoader loader =
        CatalogLoader.hadoop(
            "test",
            new Configuration(),
            Map.of(CatalogProperties.WAREHOUSE_LOCATION, warehouse.toString()));
    Catalog catalog = loader.loadCatalog();
    Schema first =
        new Schema(
            List.of(
                Types.NestedField.required(1, "id", Types.LongType.get()),
                Types.NestedField.optional(2, "doc", Types.StringType.get())),
            Set.of(1));
    int firstId = catalog.createTable(TABLE, first).schema().schemaId();
    CatalogSchemaEvolution evolution =
        new CatalogSchemaEvolution(loader, Map.of("public.docs", TABLE));

    Schema source =
        new Schema(
            List.of(
                Types.NestedField.required(1, "id", Types.LongType.get()),
                Types.NestedField.optional(2, "doc", Types.StringType.get()),
                Types.NestedField.optional(3, "tag", Types.StringType.get())),
            Set.of(1));
    ChangeSchema evolved = evolution.evolve("public.docs", source, List.of("column 'tag' added"));
    int evolvedId = evolved.schema().schemaId();
    assertThat(evolvedId).isNotEqualTo(firstId);

    assertThat(evolution.schema("public.docs", evolvedId).schema().columns())
        .extracting(Types.NestedField::name)
        .containsExactly("id", "doc", "tag");
    assertThat(evolution.schema("public.docs", firstId).schema().columns())
        .extracting(Types.NestedField::name)
        .containsExactly("id", "doc");
    assertThat(evolution.schema("public.docs", 99)).isNull();
  }
}
