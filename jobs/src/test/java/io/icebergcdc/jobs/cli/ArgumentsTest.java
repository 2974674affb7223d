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
}
