package io.icebergcdc.cdc.debezium;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class PostgresSequencesTest {

  @Test
  void readsTheTwoLsnsOfPostgresSequence() {
    assertThat(PostgresSequences.pair("[\"24023928\",\"24023976\"]"))
        .containsExactly(24023928L, 24023976L);
    assertThat(PostgresSequences.pair(" [ null , \"7\" ] ")).containsExactly(0L, 7L);
    assertThat(PostgresSequences.pair("[\"16/B374D848\",null]"))
        .containsExactly((0x16L << 32) | 0xB374D848L, 0L);
    assertThat(PostgresSequences.pair("[\"9223372036854775807\",\"1\"]"))
        .containsExactly(Long.MAX_VALUE, 1L);
  }

  @Test
  void anotherFormIsNotAPair() {
    assertThat(PostgresSequences.pair("")).isNull();
    assertThat(PostgresSequences.pair("[]")).isNull();
    assertThat(PostgresSequences.pair("[\"1\"]")).isNull();
    assertThat(PostgresSequences.pair("[\"1\",\"2\",\"3\"]")).isNull();
    assertThat(PostgresSequences.pair("[\"1\",]")).isNull();
    assertThat(PostgresSequences.pair("[,\"2\"]")).isNull();
    assertThat(PostgresSequences.pair("\"1\",\"2\"")).isNull();
    assertThat(PostgresSequences.pair("[\"x\",\"2\"]")).isNull();
    assertThat(PostgresSequences.pair("[\"1/\",\"2\"]")).isNull();
    assertThat(PostgresSequences.pair("[\"\",\"2\"]")).isNull();
    // Bare numbers and escapes are not Debezium's form: left to a JSON parser.
    assertThat(PostgresSequences.pair("[5,6]")).isNull();
    assertThat(PostgresSequences.pair("[\"\\u0031\",\"2\"]")).isNull();
  }
}
