package io.icebergcdc.sink;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;

class WritePropertiesTest {

  @Test
  void acceptsKnownPropertiesWithFittingValuesAndLeavesOthersAlone() {
    assertThatCode(
            () ->
                WriteProperties.validate(
                    "db.t",
                    Map.of(
                        "write.parquet.compression-codec", "ZSTD",
                        "write.parquet.compression-level", "3",
                        "write.target-file-size-bytes", "134217728",
                        "write.parquet.page-row-limit", "20000",
                        "format-version", "2",
                        "my.custom.property", "x")))
        .doesNotThrowAnyException();
    assertThatCode(() -> WriteProperties.validate("db.t", Map.of())).doesNotThrowAnyException();
  }

  /**
   * Iceberg's own Parquet keys, bloom filters and column statistics per column among them: the
   * writers are Iceberg's, which honour them, and another tool may set them on a table a job writes
   * (where a refusal at the job's next restart would stop it for good).
   */
  @Test
  void takesIcebergsOwnParquetKeysPerColumnToo() {
    assertThatCode(
            () ->
                WriteProperties.validate(
                    "db.t",
                    Map.of(
                        "write.parquet.bloom-filter-enabled.column.email", "true",
                        "write.parquet.bloom-filter-fpp.column.email", "0.01",
                        "write.parquet.bloom-filter-ndv.column.email", "1000",
                        "write.parquet.bloom-filter-max-bytes", "1048576",
                        "write.parquet.stats-enabled.column.note", "false",
                        "write.parquet.page-version", "v2")))
        .doesNotThrowAnyException();
    assertThatThrownBy(
            () ->
                WriteProperties.validate(
                    "db.t", Map.of("write.parquet.bloom-filter-enable.column.email", "true")))
        .hasMessageStartingWith(
            "table db.t: unknown write property 'write.parquet.bloom-filter-enable.column.email'")
        .hasMessageContaining("write.parquet.bloom-filter-enabled.column.<column>");
  }

  @Test
  void refusesUnknownKeysNamingThem() {
    assertThatThrownBy(
            () ->
                WriteProperties.validate("db.t", Map.of("write.parquet.compresion-codec", "zstd")))
        .hasMessageStartingWith(
            "table db.t: unknown write property 'write.parquet.compresion-codec'");
    assertThatThrownBy(() -> WriteProperties.validate("db.t", Map.of("write.target-size", "1")))
        .hasMessageContaining("'write.target-size'");
  }

  @Test
  void takesTheDistributionModesItImplements() {
    assertThatCode(
            () -> WriteProperties.validate("db.t", Map.of("write.distribution-mode", "hash")))
        .doesNotThrowAnyException();
    assertThatCode(
            () -> WriteProperties.validate("db.t", Map.of("write.distribution-mode", "NONE")))
        .doesNotThrowAnyException();
    assertThatThrownBy(
            () -> WriteProperties.validate("db.t", Map.of("write.distribution-mode", "range")))
        .hasMessageStartingWith("table db.t: write property 'write.distribution-mode' is 'range'")
        .hasMessageEndingWith("not range");
    assertThatThrownBy(
            () -> WriteProperties.validate("db.t", Map.of("write.distribution-mode", "random")))
        .hasMessageContaining("takes none");
  }

  @Test
  void refusesALevelItsCodecDoesNotTake() {
    assertThatThrownBy(
            () ->
                WriteProperties.validate(
                    "db.t",
                    Map.of(
                        "write.parquet.compression-codec", "snappy",
                        "write.parquet.compression-level", "3")))
        .hasMessageContaining("codec snappy takes no compression level");
    assertThatThrownBy(
            () ->
                WriteProperties.validate(
                    "db.t",
                    Map.of(
                        "write.parquet.compression-codec", "gzip",
                        "write.parquet.compression-level", "12")))
        .hasMessageContaining("compression level 12 does not fit codec gzip, which takes 1 to 9");
    assertThatThrownBy(
            () ->
                WriteProperties.validate("db.t", Map.of("write.parquet.compression-codec", "lzo")))
        .hasMessageContaining("'lzo', not one of");
  }

  @Test
  void refusesSizesThatAreNotPositive() {
    assertThatThrownBy(
            () -> WriteProperties.validate("db.t", Map.of("write.parquet.page-size-bytes", "0")))
        .hasMessageContaining(
            "'write.parquet.page-size-bytes' must be a whole number from 1 to 2147483647, not '0'");
    assertThatThrownBy(
            () -> WriteProperties.validate("db.t", Map.of("write.target-file-size-bytes", "big")))
        .hasMessageContaining("not 'big'");
  }

  @Test
  void refusesSizesIcebergsWritersWouldFailOnAtTheirFirstFile() {
    // Iceberg reads these as an int, untrimmed: accepted here, they failed every writer later
    // with a NumberFormatException that named no property.
    assertThatThrownBy(
            () ->
                WriteProperties.validate(
                    "db.t", Map.of("write.parquet.row-group-size-bytes", "3000000000")))
        .hasMessageContaining("'write.parquet.row-group-size-bytes'")
        .hasMessageContaining("not '3000000000'");
    assertThatThrownBy(
            () ->
                WriteProperties.validate(
                    "db.t", Map.of("write.parquet.dict-size-bytes", " 1048576")))
        .hasMessageContaining("not ' 1048576'");
    WriteProperties.validate("db.t", Map.of("write.target-file-size-bytes", "3000000000"));
  }

  @Test
  void aWritesOwnPropertiesGoOverTheTablesAndADifferentCodecDropsItsLevel() {
    Map<String, String> table =
        Map.of(
            "write.parquet.compression-codec", "zstd",
            "write.parquet.compression-level", "9",
            "write.target-file-size-bytes", "1000");

    Map<String, String> gzip =
        WriteProperties.effective("db.t", table, Map.of("compression", "gzip"));
    org.assertj.core.api.Assertions.assertThat(gzip)
        .containsEntry("write.parquet.compression-codec", "gzip")
        .doesNotContainKey("write.parquet.compression-level")
        .containsEntry("write.target-file-size-bytes", "1000");
    org.assertj.core.api.Assertions.assertThat(
            WriteProperties.effective(
                "db.t", table, Map.of("compression-level", "3", "target-file-size-bytes", "5")))
        .containsEntry("write.parquet.compression-codec", "zstd")
        .containsEntry("write.parquet.compression-level", "3")
        .containsEntry("write.target-file-size-bytes", "5");
    assertThatThrownBy(
            () ->
                WriteProperties.effective(
                    "db.t",
                    table,
                    Map.of("compression", "gzip", "write.parquet.compression-codec", "zstd")))
        .hasMessageContaining("given twice");
    assertThatThrownBy(
            () ->
                WriteProperties.effective(
                    "db.t", table, Map.of("compression", "snappy", "compression-level", "1")))
        .hasMessageContaining("codec snappy takes no compression level");
  }

  @Test
  void contentDefinedChunkingKeysAreCheckedAndItsUseIsRefusedForNow() {
    WriteProperties.validate(
        "db.t",
        Map.of(
            "write.parquet.content-defined-chunking.enabled", "false",
            "write.parquet.content-defined-chunking.min-chunk-size", "262144",
            "write.parquet.content-defined-chunking.max-chunk-size", "1048576",
            "write.parquet.content-defined-chunking.norm-level", "0"));
    assertThatThrownBy(
            () ->
                WriteProperties.validate(
                    "db.t", Map.of("write.parquet.content-defined-chunking.enabled", "true")))
        .hasMessageContaining("has no content-defined chunking yet");
    assertThatThrownBy(
            () ->
                WriteProperties.validate(
                    "db.t",
                    Map.of(
                        "write.parquet.content-defined-chunking.min-chunk-size", "1000",
                        "write.parquet.content-defined-chunking.max-chunk-size", "1000")))
        .hasMessageContaining(
            "must be above 'write.parquet.content-defined-chunking.min-chunk-size'");
    assertThatThrownBy(
            () ->
                WriteProperties.validate(
                    "db.t", Map.of("write.parquet.content-defined-chunking.min-chunk-size", "0")))
        .hasMessageContaining("must be a whole number from 1");
  }
}
