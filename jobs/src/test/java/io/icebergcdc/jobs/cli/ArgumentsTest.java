package io.icebergcdc.jobs.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class ArgumentsTest {

  private static List<String> tables(String value) {
    return Arguments.parse(
            "apply",
            new String[] {"--tables", value},
            0,
            List.of(Flag.of("tables", "<regex,...>", "patterns")))
        .optionalPatterns("tables");
  }

  /** Patterns split at their commas, but where a comma is written {@code \,}, as Debezium does. */
  @Test
  void aCommaWithinAPatternIsEscaped() {
    assertThat(tables("public\\..*, sales\\.orders"))
        .containsExactly("public\\..*", "sales\\.orders");
    assertThat(tables("sales\\.orders_[0-9]{1\\,3},other\\.t"))
        .containsExactly("sales\\.orders_[0-9]{1,3}", "other\\.t");
    // Other escapes are the pattern's own.
    assertThat(tables("a\\.b\\d+,c\\\\d")).containsExactly("a\\.b\\d+", "c\\\\d");
    assertThat(tables(",a,,")).containsExactly("a");
  }

  /**
   * Kafka properties split at their commas, but where a comma within a value is written {@code \,}:
   * a list of protocols or cipher suites on the command line.
   */
  @Test
  void aCommaWithinAKafkaPropertyIsEscaped() {
    Arguments args =
        Arguments.parse(
            "apply",
            new String[] {
              "--kafka-properties",
              "ssl.enabled.protocols=TLSv1.2\\,TLSv1.3, isolation.level=read_committed,"
                  + "ssl.truststore.location=C:\\ts.jks"
            },
            0,
            List.of(Flag.of("kafka-properties", "<key=value,...>", "properties")));
    assertThat(args.optionalEscapedList("kafka-properties"))
        .containsExactly(
            "ssl.enabled.protocols=TLSv1.2,TLSv1.3",
            "isolation.level=read_committed",
            "ssl.truststore.location=C:\\ts.jks");
  }
}
