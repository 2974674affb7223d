package io.icebergcdc.sink;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.apache.iceberg.flink.CatalogLoader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CatalogDefinitionTest {

  @TempDir Path dir;

  /**
   * A local warehouse given relative, or with dot segments (a SQL catalog's {@code 'warehouse' =
   * './wh'}), is taken where it was given: Iceberg would record the files of its tables by relative
   * paths. A REST catalog's warehouse is a name, and a URI stays as it is.
   */
  @Test
  void aLocalWarehouseIsTakenAbsoluteWhereItWasGiven() {
    Path here = Path.of("").toAbsolutePath();
    assertThat(CatalogDefinition.hadoop("./wh").warehouse())
        .isEqualTo(here.resolve("wh").toString());
    assertThat(CatalogDefinition.hadoop("/x/./y/../wh").warehouse()).isEqualTo("/x/wh");
    assertThat(CatalogDefinition.hadoop("/x/wh").warehouse()).isEqualTo("/x/wh");
    assertThat(CatalogDefinition.hadoop("file:///x/wh").warehouse()).isEqualTo("file:///x/wh");
    assertThat(
            CatalogDefinition.builder()
                .type("jdbc")
                .uri("jdbc:x")
                .warehouse("w")
                .build()
                .warehouse())
        .isEqualTo(here.resolve("w").toString());
    assertThat(
            CatalogDefinition.builder()
                .type("rest")
                .uri("http://x")
                .warehouse("w")
                .build()
                .warehouse())
        .isEqualTo("w");
  }

  @Test
  void eachTypeChecksWhatItNeeds() {
    assertThat(CatalogDefinition.hadoop("/w").type()).isEqualTo(CatalogDefinition.Type.HADOOP);
    assertThatThrownBy(() -> CatalogDefinition.builder().build())
        .hasMessage("catalog-type hadoop needs a warehouse directory");
    for (String type : new String[] {"rest", "jdbc", "hive"}) {
      assertThatThrownBy(() -> CatalogDefinition.builder().type(type).build())
          .hasMessage("catalog-type " + type + " needs the catalog's uri");
    }
    assertThatThrownBy(() -> CatalogDefinition.builder().type("glue").build())
        .hasMessageStartingWith("catalog type 'glue' is not known");
    assertThatThrownBy(
            () -> CatalogDefinition.builder().type("rest").impl("x.Catalog").uri("u").build())
        .hasMessageStartingWith("give catalog-type or catalog-impl, not both");
    assertThatThrownBy(() -> CatalogDefinition.hadoop("s3://bucket/warehouse"))
        .hasMessageStartingWith("catalog-type hadoop is not safe on an object store");
    // Any other catalog by its class, such as Glue's or Nessie's.
    CatalogDefinition custom =
        CatalogDefinition.builder().impl("org.apache.iceberg.nessie.NessieCatalog").build();
    assertThat(custom.type()).isNull();
    assertThat(custom.loader()).isInstanceOf(CatalogLoader.class);
  }

  @Test
  void aHiveCatalogWithoutTheMetastoreClientSaysWhatIsMissing() {
    CatalogDefinition hive =
        CatalogDefinition.builder().type("HIVE").uri("thrift://metastore:9083").build();
    assertThat(hive.describe()).isEqualTo("hive thrift://metastore:9083");
    assertThatThrownBy(hive::loader)
        .hasMessageContaining("catalog-type hive needs iceberg-hive-metastore");
  }

  @Test
  void secretsAreNeverPrinted() throws Exception {
    Path file =
        Files.writeString(
            dir.resolve("secrets.properties"),
            "credential = client:very-secret\ns3.secret-access-key=also-secret\n");
    CatalogDefinition rest =
        CatalogDefinition.builder()
            .type("rest")
            .uri("https://user:pw@catalog.example/api")
            .warehouse("lake")
            .property("s3.endpoint", "http://s3:9000")
            .properties(CatalogDefinition.readPropertiesFile(file))
            .build();
    assertThat(rest.properties())
        .containsEntry("credential", "client:very-secret")
        .containsEntry("s3.secret-access-key", "also-secret");
    assertThat(rest.toString() + rest.describe())
        .doesNotContain("very-secret")
        .doesNotContain("also-secret")
        .doesNotContain(":pw@")
        .contains("s3.endpoint=http://s3:9000");
    assertThat(rest.describe()).isEqualTo("rest https://***@catalog.example/api warehouse lake");
    for (String key :
        new String[] {
          "token",
          "credential",
          "s3.access-key-id",
          "s3.secret-access-key",
          "s3.session-token",
          "jdbc.password",
          "oauth2.client-secret",
          "header.Authorization",
          "header.X-Api-Key",
          "s3.sse.key",
          "adls.auth.shared-key.account.key"
        }) {
      assertThat(CatalogDefinition.isSecret(key)).as(key).isTrue();
    }
    assertThat(CatalogDefinition.isSecret("s3.endpoint")).isFalse();
    assertThat(CatalogDefinition.isSecret("adls.auth.shared-key.account.name")).isFalse();
    assertThat(CatalogDefinition.isSecret("warehouse")).isFalse();
  }

  @Test
  void connectNamesTheCatalogThatCannotBeUsed() {
    CatalogDefinition missing =
        CatalogDefinition.builder()
            .impl("org.example.NoSuchCatalog")
            .properties(Map.of("uri", "x"))
            .build();
    assertThatThrownBy(missing::connect)
        .hasMessageStartingWith("catalog org.example.NoSuchCatalog x cannot be used: ");
  }
}
