package io.icebergcdc.jobs.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import io.icebergcdc.cdc.ChangeSchema;
import io.icebergcdc.sink.CatalogDefinition;
import io.icebergcdc.sink.CdcTables;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.flink.configuration.Configuration;
import org.apache.iceberg.Schema;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.flink.CatalogLoader;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SinkTranslatorTest {

  @TempDir Path warehouse;

  /** Catalogs loaded by {@link CountingLoader}s in this JVM. */
  private static final AtomicInteger LOADS = new AtomicInteger();

  @Test
  void theSinksOfAJobOfSeveralTablesReadTheirTablesThroughOneCatalog() {
    CatalogDefinition catalog = CatalogDefinition.hadoop(warehouse.toString());
    Catalog connected = catalog.connect();
    List<TableTarget> targets = new ArrayList<>();
    for (String name : List.of("a", "b", "c")) {
      TableIdentifier id = TableIdentifier.of("cdc", name);
      org.apache.iceberg.Table table =
          CdcTables.createOrLoad(
              connected,
              id,
              new Schema(
                  List.of(Types.NestedField.required(1, "id", Types.LongType.get())), Set.of(1)),
              null,
              2,
              List.of("id"));
      targets.add(
          new TableTarget(
              "db.public." + name, "db.public." + name, id, new ChangeSchema(table.schema())));
    }
    LOADS.set(0);

    SinkTranslator translator =
        SinkTranslator.of(
            targets,
            new io.icebergcdc.sink.SharedCatalog(new CountingLoader(catalog.loader())),
            new Configuration(),
            true,
            false,
            null,
            null);

    assertThat(translator.writtenTogether()).hasSize(3);
    // Iceberg's loaders would load a catalog for each of the three sinks as it reads its table.
    assertThat(LOADS.get()).as("catalogs loaded while the sinks were built").isEqualTo(1);
  }

  /** A catalog loader that counts the catalogs it loads in {@link #LOADS}. */
  private static final class CountingLoader implements CatalogLoader {

    private static final long serialVersionUID = 1L;

    private final CatalogLoader loader;

    CountingLoader(CatalogLoader loader) {
      this.loader = loader;
    }

    @Override
    public Catalog loadCatalog() {
      LOADS.incrementAndGet();
      return loader.loadCatalog();
    }

    @Override
    @SuppressWarnings({"checkstyle:NoClone", "checkstyle:SuperClone"})
    public CatalogLoader clone() {
      return new CountingLoader(loader.clone());
    }
  }
}
