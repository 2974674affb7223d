package io.icebergcdc.sink;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.Closeable;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.flink.util.InstantiationUtil;
import org.apache.iceberg.Schema;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.flink.CatalogLoader;
import org.apache.iceberg.flink.TableLoader;
import org.apache.iceberg.inmemory.InMemoryCatalog;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;

class SharedCatalogTest {

  private static final TableIdentifier A = TableIdentifier.of("db", "a");
  private static final TableIdentifier B = TableIdentifier.of("db", "b");

  @Test
  void theLoadersOfOneSharedCatalogLoadOneCatalogAndCloseItWithTheLast() throws Exception {
    CountingLoader counting = new CountingLoader("one");
    SharedCatalog shared = new SharedCatalog(counting);
    TableLoader a = shared.tableLoader(A);
    TableLoader b = shared.tableLoader(B);
    TableLoader aAgain = a.clone();

    a.open();
    b.open();
    aAgain.open();
    assertThat(a.loadTable().name()).endsWith("db.a");
    assertThat(b.loadTable().name()).endsWith("db.b");
    assertThat(aAgain.loadTable().name()).endsWith("db.a");
    assertThat(counting.loads()).as("catalogs loaded").isEqualTo(1);

    a.close();
    a.close(); // a second close releases nothing more
    b.close();
    assertThat(counting.closes()).as("closed while a loader is open").isZero();
    aAgain.close();
    assertThat(counting.closes()).as("closed with the last loader").isEqualTo(1);

    b.open();
    assertThat(b.loadTable().name()).endsWith("db.b");
    assertThat(counting.loads()).as("loaded again once none was open").isEqualTo(2);
    b.close();
    assertThat(counting.closes()).isEqualTo(2);
  }

  @Test
  void anOpenHandleKeepsTheCatalogWhileLoadersOpenAndCloseInTurn() throws Exception {
    CountingLoader counting = new CountingLoader("held");
    SharedCatalog shared = new SharedCatalog(counting);
    try (Closeable held = shared.open()) {
      for (TableIdentifier table : List.of(A, B, A)) {
        try (TableLoader loader = shared.tableLoader(table)) {
          loader.open();
          loader.loadTable();
        }
      }
      assertThat(counting.loads()).isEqualTo(1);
      assertThat(counting.closes()).isZero();
    }
    assertThat(counting.closes()).isEqualTo(1);
  }

  @Test
  void eachDeserializedCopyOfItsLoadersSharesOneCatalogOfItsOwn() throws Exception {
    CountingLoader counting = new CountingLoader("copies");
    SharedCatalog shared = new SharedCatalog(counting);
    ArrayList<TableLoader> loaders =
        new ArrayList<>(List.of(shared.tableLoader(A), shared.tableLoader(B)));
    // As two subtasks each deserialize the operator that holds the loaders.
    byte[] bytes = InstantiationUtil.serializeObject(loaders);
    List<TableLoader> first =
        InstantiationUtil.deserializeObject(bytes, getClass().getClassLoader());
    List<TableLoader> second =
        InstantiationUtil.deserializeObject(bytes, getClass().getClassLoader());

    for (TableLoader loader : first) {
      loader.open();
      loader.loadTable();
    }
    assertThat(counting.loads()).as("one catalog for the first copy's tables").isEqualTo(1);
    for (TableLoader loader : second) {
      loader.open();
      loader.loadTable();
    }
    assertThat(counting.loads()).as("one more for the second copy's").isEqualTo(2);
    for (TableLoader loader : first) {
      loader.close();
    }
    assertThat(counting.closes()).isEqualTo(1);
    for (TableLoader loader : second) {
      loader.close();
    }
    assertThat(counting.closes()).isEqualTo(2);
  }

  @Test
  void theWritersLoadersLoadTheirTablesFromTheWritersCatalog() throws Exception {
    CountingLoader committers = new CountingLoader("committer's");
    CountingLoader writers = new CountingLoader("writers'");
    SharedCatalog shared = new SharedCatalog(committers, writers);
    // As an operator's loaders, deserialized in its task.
    byte[] bytes =
        InstantiationUtil.serializeObject(
            new ArrayList<>(List.of(shared.writerTableLoader(A), shared.tableLoader(B))));
    List<TableLoader> loaders =
        InstantiationUtil.deserializeObject(bytes, getClass().getClassLoader());

    TableLoader writer = loaders.get(0);
    writer.open();
    writer.loadTable();
    assertThat(writers.loads()).isEqualTo(1);
    assertThat(committers.loads()).isZero();
    assertThat(SharedCatalog.loadsReferencedSnapshotsOnly(writer)).isTrue();
    TableLoader other = loaders.get(1);
    other.open();
    other.loadTable();
    assertThat(committers.loads()).isEqualTo(1);
    assertThat(SharedCatalog.loadsReferencedSnapshotsOnly(other)).isFalse();
    writer.close();
    other.close();

    // Without a writers' catalog, the writers load from the one catalog.
    SharedCatalog one = new SharedCatalog(new CountingLoader("one"));
    assertThat(SharedCatalog.loadsReferencedSnapshotsOnly(one.writerTableLoader(A))).isFalse();
  }

  @Test
  void aLoaderNotOpenRefusesToLoadAndNamesItsTable() {
    TableLoader loader = new SharedCatalog(new CountingLoader("closed")).tableLoader(A);
    assertThat(loader.isOpen()).isFalse();
    assertThatThrownBy(loader::loadTable).hasMessageContaining("db.a").hasMessageContaining("open");
  }

  @Test
  void itsNameHoldsNoneOfTheCatalogsProperties() {
    CatalogLoader rest =
        CatalogLoader.rest(
            "lake",
            new org.apache.hadoop.conf.Configuration(false),
            Map.of("uri", "http://localhost:1", "credential", "client:secret-value"));
    SharedCatalog shared = new SharedCatalog(rest);
    assertThat(shared.toString()).doesNotContain("secret-value");
    assertThat(shared.tableLoader(A).toString()).contains("db.a").doesNotContain("secret-value");
  }

  /**
   * A catalog loader of an in-memory catalog that counts, by its name, the catalogs it loaded and
   * closed, whichever deserialized copy of it did.
   */
  private static final class CountingLoader implements CatalogLoader {

    private static final long serialVersionUID = 1L;
    private static final Map<String, AtomicInteger> LOADS = new ConcurrentHashMap<>();
    private static final Map<String, AtomicInteger> CLOSES = new ConcurrentHashMap<>();

    private final String name;

    CountingLoader(String name) {
      this.name = name;
      LOADS.put(name, new AtomicInteger());
      CLOSES.put(name, new AtomicInteger());
    }

    int loads() {
      return LOADS.get(name).get();
    }

    int closes() {
      return CLOSES.get(name).get();
    }

    @Override
    public Catalog loadCatalog() {
      LOADS.get(name).incrementAndGet();
      InMemoryCatalog catalog =
          new InMemoryCatalog() {
            @Override
            public void close() throws java.io.IOException {
              CLOSES.get(name).incrementAndGet();
              super.close();
            }
          };
      catalog.initialize(name, Map.of());
      catalog.createNamespace(Namespace.of("db"));
      Schema schema = new Schema(Types.NestedField.required(1, "id", Types.LongType.get()));
      catalog.createTable(A, schema);
      catalog.createTable(B, schema);
      return catalog;
    }

    @Override
    @SuppressWarnings({"checkstyle:NoClone", "checkstyle:SuperClone"})
    public CatalogLoader clone() {
      return this;
    }
  }
}
