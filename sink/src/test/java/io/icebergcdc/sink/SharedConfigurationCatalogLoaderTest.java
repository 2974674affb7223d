package io.icebergcdc.sink;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.Map;
import org.apache.flink.util.InstantiationUtil;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.flink.CatalogLoader;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SharedConfigurationCatalogLoaderTest {

  @TempDir Path dir;

  /** The loader as an operator gets it: serialized with the job, deserialized in the task. */
  private static SharedConfigurationCatalogLoader deserialized(CatalogLoader loader)
      throws Exception {
    return (SharedConfigurationCatalogLoader)
        InstantiationUtil.deserializeObject(
            InstantiationUtil.serializeObject(loader),
            SharedConfigurationCatalogLoaderTest.class.getClassLoader());
  }

  @Test
  void operatorsOfOneCatalogShareItsHadoopConfigurationAndLoadTheCatalog() throws Exception {
    CatalogLoader loader = CatalogDefinition.hadoop(dir.resolve("w").toString()).loader();
    SharedConfigurationCatalogLoader first = deserialized(loader);
    SharedConfigurationCatalogLoader second = deserialized(loader);
    assertThat(first.hadoopConfiguration()).isSameAs(second.hadoopConfiguration());
    assertThat(((SharedConfigurationCatalogLoader) first.clone()).hadoopConfiguration())
        .isSameAs(first.hadoopConfiguration());
    // Hadoop's defaults and this project's local file system are in it.
    assertThat(first.hadoopConfiguration().get("fs.file.impl"))
        .isEqualTo(LocalFileSystemWithoutChmod.class.getName());
    assertThat(first.hadoopConfiguration().get("io.file.buffer.size")).isNotNull();
    assertThat(first.hadoopConfiguration().getClassLoader())
        .isSameAs(SharedConfigurationCatalogLoader.class.getClassLoader());
    // Serialized again (a loader cloned into another operator), it still shares it.
    assertThat(deserialized(first).hadoopConfiguration()).isSameAs(first.hadoopConfiguration());

    Catalog catalog = first.loadCatalog();
    TableIdentifier id = TableIdentifier.of("db", "t");
    catalog.createTable(
        id,
        new Schema(Types.NestedField.required(1, "id", Types.LongType.get())),
        PartitionSpec.unpartitioned());
    assertThat(second.loadCatalog().tableExists(id)).isTrue();
  }

  @Test
  void anotherConfigurationIsAnotherObject() throws Exception {
    org.apache.hadoop.conf.Configuration other = CatalogDefinition.hadoopConfiguration();
    other.set("fs.s3a.connection.maximum", "7");
    SharedConfigurationCatalogLoader changed =
        deserialized(
            new SharedConfigurationCatalogLoader(
                "c", "org.apache.iceberg.hadoop.HadoopCatalog", Map.of("warehouse", "w"), other));
    SharedConfigurationCatalogLoader plain =
        deserialized(CatalogDefinition.hadoop(dir.resolve("w").toString()).loader());
    assertThat(changed.hadoopConfiguration()).isNotSameAs(plain.hadoopConfiguration());
    assertThat(changed.hadoopConfiguration().get("fs.s3a.connection.maximum")).isEqualTo("7");
  }

  @Test
  void itsNameNeverShowsTheCatalogsProperties() {
    CatalogLoader rest =
        CatalogDefinition.builder()
            .type("rest")
            .uri("https://catalog.example/api")
            .property("credential", "client:very-secret")
            .build()
            .loader();
    assertThat(rest.toString())
        .doesNotContain("very-secret")
        .contains("org.apache.iceberg.rest.RESTCatalog");
  }
}
