package io.icebergcdc.jobs.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.icebergcdc.cdc.MalformedChangeException;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class KafkaRecordTest {

  private static KafkaRecord record(byte[] key, byte[] value) {
    return new KafkaRecord("orders", 1, 42, key, value);
  }

  @Test
  void utf8KeysAndValuesReadAsText() {
    KafkaRecord record =
        record(
            "{\"id\":1}".getBytes(StandardCharsets.UTF_8),
            "{\"name\":\"zwölf €\"}".getBytes(StandardCharsets.UTF_8));
    assertThat(record.keyText()).isEqualTo("{\"id\":1}");
    assertThat(record.valueText()).isEqualTo("{\"name\":\"zwölf €\"}");
    assertThat(record(null, null).valueText()).isNull();
  }

  @Test
  void bytesThatAreNotUtf8AreRefusedNamingTheRecordNotReplaced() {
    byte[] latin1 = "{\"name\":\"zwölf\"}".getBytes(StandardCharsets.ISO_8859_1);
    assertThatThrownBy(() -> record(null, latin1).valueText())
        .isInstanceOf(MalformedChangeException.class)
        .hasMessage("topic orders/1@42: the record's value is not UTF-8 text");
    assertThatThrownBy(() -> record(latin1, null).keyText())
        .isInstanceOf(MalformedChangeException.class)
        .hasMessage("topic orders/1@42: the record's key is not UTF-8 text");
    // Dead letters and messages still show what the record holds.
    assertThat(record(null, latin1).describe()).isEqualTo("{\"name\":\"zw\uFFFDlf\"}");
    assertThat(record("{\"id\":1}".getBytes(StandardCharsets.UTF_8), null).describe())
        .isEqualTo("key {\"id\":1}");
  }
}
