package io.icebergcdc.sink.table;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.apache.iceberg.catalog.TableIdentifier;
import org.junit.jupiter.api.Test;

/** A catalog table's properties meant as options of its writes that are none of them. */
class StoredOptionsTest {

  private static final TableIdentifier TABLE = TableIdentifier.of("shop", "customers");

  @Test
  void aMisspeltOptionStoredWithTheTableIsRefusedNamingIt() {
    assertThatThrownBy(
            () ->
                IcebergCdcCatalogTableFactory.checkStoredOptions(
                    TABLE, Map.of("sequence-field", "version")))
        .hasMessageContaining("table shop.customers holds the property 'sequence-field'")
        .hasMessageContaining("did you mean 'sequence.field'?");
    assertThatThrownBy(
            () ->
                IcebergCdcCatalogTableFactory.checkStoredOptions(
                    TABLE, Map.of("dedup.tombstone-tl", "30 d")))
        .hasMessageContaining("'dedup.tombstone-tl', which is no option of its writes");
  }

  @Test
  void optionsIcebergsPropertiesAndOthersPass() {
    assertThatCode(
            () ->
                IcebergCdcCatalogTableFactory.checkStoredOptions(
                    TABLE,
                    Map.of(
                        "sequence.field", "version",
                        "format-version", "3",
                        "write.parquet.compression-codec", "zstd",
                        "history.expire.max-snapshot-age-ms", "1000",
                        "owner", "data-team")))
        .doesNotThrowAnyException();
  }
}
