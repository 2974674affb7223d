package io.icebergcdc.capture;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class SourceFieldsTest {

  @Test
  void readsTheTwoLsnsOfPostgresSequence() {
    assertThat(SourceFields.lsnPair("[\"24023928\",\"24023976\"]"))
        .containsExactly(24023928L, 24023976L);
    assertThat(SourceFields.lsnPair(" [ null , \"7\" ] ")).containsExactly(0L, 7L);
    assertThat(SourceFields.lsnPair("[\"16/B374D848\",null]"))
        .containsExactly((0x16L << 32) | 0xB374D848L, 0L);
    assertThat(SourceFields.lsnPair("[\"9223372036854775807\",\"1\"]"))
        .containsExactly(Long.MAX_VALUE, 1L);
  }

  @Test
  void anotherFormIsNotAPair() {
    assertThat(SourceFields.lsnPair("")).isNull();
    assertThat(SourceFields.lsnPair("[]")).isNull();
    assertThat(SourceFields.lsnPair("[\"1\"]")).isNull();
    assertThat(SourceFields.lsnPair("[\"1\",\"2\",\"3\"]")).isNull();
    assertThat(SourceFields.lsnPair("[\"1\",]")).isNull();
    assertThat(SourceFields.lsnPair("[,\"2\"]")).isNull();
    assertThat(SourceFields.lsnPair("\"1\",\"2\"")).isNull();
    assertThat(SourceFields.lsnPair("[\"x\",\"2\"]")).isNull();
    assertThat(SourceFields.lsnPair("[\"1/\",\"2\"]")).isNull();
    assertThat(SourceFields.lsnPair("[\"\",\"2\"]")).isNull();
    // Bare numbers and escapes are not Debezium's form: left to a JSON parser.
    assertThat(SourceFields.lsnPair("[5,6]")).isNull();
    assertThat(SourceFields.lsnPair("[\"\\u0031\",\"2\"]")).isNull();
  }
}
