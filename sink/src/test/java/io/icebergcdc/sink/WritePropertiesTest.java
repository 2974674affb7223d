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
        .hasMessageContaining("'write.parquet.page-size-bytes' must be a positive number, not '0'");
    assertThatThrownBy(
            () -> WriteProperties.validate("db.t", Map.of("write.target-file-size-bytes", "big")))
        .hasMessageContaining("not 'big'");
  }
}
