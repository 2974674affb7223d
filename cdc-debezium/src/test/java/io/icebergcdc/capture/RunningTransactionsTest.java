package io.icebergcdc.capture;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.SQLException;
import org.junit.jupiter.api.Test;

class RunningTransactionsTest {

  @Test
  void onlyARefusalOrAMissingFunctionMeansTheDatabaseCannotTell() {
    // PostgreSQL: insufficient_privilege, undefined_function; MySQL: access denied (PROCESS).
    assertThat(RunningTransactions.cannotTell(new SQLException("denied", "42501"))).isTrue();
    assertThat(RunningTransactions.cannotTell(new SQLException("no function", "42883"))).isTrue();
    assertThat(RunningTransactions.cannotTell(new SQLException("PROCESS", "42000", 1227))).isTrue();
    // Out of reach: asked again.
    assertThat(RunningTransactions.cannotTell(new SQLException("refused", "08001"))).isFalse();
    assertThat(RunningTransactions.cannotTell(new SQLException("timeout", "57014"))).isFalse();
    assertThat(RunningTransactions.cannotTell(new SQLException("unknown"))).isFalse();
  }
}
