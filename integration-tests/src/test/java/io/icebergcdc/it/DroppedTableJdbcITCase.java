package io.icebergcdc.it;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.icebergcdc.commit.ReplacedTableException;
import io.icebergcdc.commit.TableRefresh;
import io.icebergcdc.sink.CatalogDefinition;
import java.nio.file.Path;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.flink.TableLoader;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A table of a JDBC catalog dropped under a job that keeps it: Iceberg's metastore operations
 * forget the table at the first refresh that misses it and disable their refreshes after, so a
 * later refresh "succeeds" with no metadata at all. Each refresh the job makes ends it naming the
 * table, the first and every later one.
 */
class DroppedTableJdbcITCase {

  private static final TableIdentifier ID = TableIdentifier.of("db", "t");

  private static final Schema SCHEMA =
      new Schema(Types.NestedField.required(1, "id", Types.LongType.get()));

  @TempDir Path dir;

  private CatalogDefinition definition;
  private Catalog catalog;

  /** A JDBC catalog of its own in {@code database}, holding the table {@link #ID}; its UUID. */
  private String catalogWithTable(String database) throws Exception {
    definition = JdbcCatalogs.fresh(database, dir.resolve("wh").toString());
    catalog = definition.loader().loadCatalog();
    ((SupportsNamespaces) catalog).createNamespace(Namespace.of("db"));
    return catalog.createTable(ID, SCHEMA, PartitionSpec.unpartitioned()).uuid().toString();
  }

  @AfterEach
  void closeCatalog() throws Exception {
    if (catalog != null) {
      CatalogDefinition.close(catalog);
    }
  }

  @Test
  void everyRefreshOfADroppedJdbcTableEndsTheJobNamingIt() throws Exception {
    catalogWithTable("icebergcdc_dropped_table");
    try (TableLoader loader = TableLoader.fromCatalog(definition.loader(), ID)) {
      loader.open();
      Table kept = loader.loadTable();
      catalog.dropTable(ID, false);

      // The job's check of a checkpoint may meet the drop first, and let it pass.
      assertThatThrownBy(kept::refresh).isInstanceOf(NoSuchTableException.class);
      for (int refresh = 0; refresh < 2; refresh++) {
        assertThatThrownBy(() -> TableRefresh.refresh(kept, loader))
            .isInstanceOf(ReplacedTableException.class)
            .hasMessageContaining("db.t of the job is no longer in the catalog");
      }
    }
  }

  /**
   * A refresh that missed the table and was let pass (as the committer's read for a checkpoint's
   * state does) makes Iceberg's operations forget it; the table created again meanwhile is then
   * loaded by the next refresh without Iceberg's check, and the job's own check refuses it.
   */
  @Test
  void aJdbcTableCreatedAgainAfterARefreshMissedItIsRefusedNotTaken() throws Exception {
    String first = catalogWithTable("icebergcdc_recreated_table");
    try (TableLoader loader = TableLoader.fromCatalog(definition.loader(), ID)) {
      loader.open();
      Table kept = loader.loadTable();
      catalog.dropTable(ID, false);
      assertThatThrownBy(kept::refresh).isInstanceOf(NoSuchTableException.class);
      catalog.createTable(ID, SCHEMA, PartitionSpec.unpartitioned());

      assertThatThrownBy(() -> TableRefresh.refresh(kept, loader, first, true))
          .isInstanceOf(ReplacedTableException.class)
          .hasMessageContaining("db.t of the job was dropped and created again while the job ran")
          .hasMessageContaining(first);
    }
  }
}
