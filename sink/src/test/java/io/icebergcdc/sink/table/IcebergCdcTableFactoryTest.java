package io.icebergcdc.sink.table;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.icebergcdc.sink.CatalogDefinition;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.apache.flink.configuration.Configuration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class IcebergCdcTableFactoryTest {

  @TempDir Path dir;

  /**
   * Flink prints the options of a table or catalog it cannot create, masking only keys it knows as
   * sensitive ({@code credential} is not one): the secrets come from a file the options name.
   */
  @Test
  void catalogSecretsComeFromTheFileTheOptionsName() throws Exception {
    Path file =
        Files.writeString(
            dir.resolve("secrets.properties"), "credential=client:very-secret\ntoken=t0k\n");
    Map<String, String> options =
        Map.of(
            "catalog-type", "rest",
            "uri", "http://catalog.example/api",
            "catalog.s3.endpoint", "http://s3:9000",
            "catalog-properties-file", file.toString());
    CatalogDefinition catalog =
        IcebergCdcTableFactory.catalog(Configuration.fromMap(options), options);
    assertThat(catalog.properties())
        .containsEntry("credential", "client:very-secret")
        .containsEntry("token", "t0k")
        .containsEntry("s3.endpoint", "http://s3:9000");
    assertThat(catalog.describe()).doesNotContain("very-secret");

    Map<String, String> missing = Map.of("catalog-properties-file", dir.resolve("none").toString());
    assertThatThrownBy(
            () -> IcebergCdcTableFactory.catalog(Configuration.fromMap(missing), missing))
        .hasMessageContaining("option 'catalog-properties-file': cannot read");
  }
}
