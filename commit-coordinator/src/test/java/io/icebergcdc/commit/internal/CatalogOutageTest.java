package io.icebergcdc.commit.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.ConnectException;
import java.time.Duration;
import org.apache.iceberg.exceptions.CommitStateUnknownException;
import org.apache.iceberg.exceptions.NotAuthorizedException;
import org.apache.iceberg.exceptions.RESTException;
import org.apache.iceberg.exceptions.ServiceUnavailableException;
import org.apache.iceberg.exceptions.ValidationException;
import org.junit.jupiter.api.Test;

class CatalogOutageTest {

  @Test
  void anUnreachableOrUnavailableCatalogIsAnOutage() {
    assertThat(
            CatalogOutage.isOutage(
                new RESTException(new ConnectException("Connection refused"), "POST failed")))
        .isTrue();
    assertThat(CatalogOutage.isOutage(new ServiceUnavailableException("503"))).isTrue();
    assertThat(
            CatalogOutage.isOutage(
                new RESTException(
                    new java.net.SocketException("Connection reset"),
                    "Error occurred while processing POST request")))
        .isTrue();
    assertThat(
            CatalogOutage.isOutage(
                new IllegalStateException(
                    "commit", new CommitStateUnknownException(new RuntimeException("reset")))))
        .isTrue();
  }

  @Test
  void aRefusalIsNoOutage() {
    assertThat(CatalogOutage.isOutage(new NotAuthorizedException("bad token"))).isFalse();
    assertThat(CatalogOutage.isOutage(new ValidationException("conflict"))).isFalse();
    assertThat(CatalogOutage.isOutage(new IllegalStateException("injected"))).isFalse();
  }

  @Test
  void pausesUntilTheTimeIsUpThenRethrows() {
    CatalogOutage outage = new CatalogOutage(Duration.ofMillis(1_500));
    RuntimeException down = new RESTException(new ConnectException("refused"), "down");
    long start = System.nanoTime();
    outage.pauseOrThrow(down); // 1 s
    outage.pauseOrThrow(down); // the rest of the 1.5 s
    assertThatThrownBy(() -> outage.pauseOrThrow(down)).isSameAs(down);
    assertThat(outage.failures()).isEqualTo(3);
    assertThat(System.nanoTime() - start)
        .isGreaterThanOrEqualTo(Duration.ofMillis(1_400).toNanos());
  }

  /**
   * The commits of several tables for one checkpoint share the time: a table whose commit first
   * fails after the others have waited out the timeout gives up at once, rather than waiting it out
   * again (the commit threads take the tables in batches).
   */
  @Test
  void theTablesOfARoundShareTheTimeFromTheFirstFailure() throws Exception {
    CatalogOutage.Round round = new CatalogOutage.Round();
    RuntimeException down = new RESTException(new ConnectException("refused"), "down");
    CatalogOutage first = new CatalogOutage(Duration.ofMillis(1_200), round);
    first.pauseOrThrow(down); // 1 s
    first.pauseOrThrow(down); // the rest of the 1.2 s
    assertThatThrownBy(() -> first.pauseOrThrow(down)).isSameAs(down);
    CatalogOutage later = new CatalogOutage(Duration.ofMillis(1_200), round);
    long start = System.nanoTime();
    assertThatThrownBy(() -> later.pauseOrThrow(down)).isSameAs(down);
    assertThat(System.nanoTime() - start).isLessThan(Duration.ofMillis(500).toNanos());
    // Once a commit of a round goes through after failures, a later outage counts anew.
    CatalogOutage.Round second = new CatalogOutage.Round();
    CatalogOutage blip = new CatalogOutage(Duration.ofMillis(1_200), second);
    blip.pauseOrThrow(down); // 1 s, then the catalog answers
    blip.reached();
    Thread.sleep(300); // past the 1.2 s from the blip's failure
    CatalogOutage next = new CatalogOutage(Duration.ofMillis(1_200), second);
    next.pauseOrThrow(down); // paused, not thrown: its own time
    assertThat(next.failures()).isEqualTo(1);
    // A commit of its own waits out its own time.
    CatalogOutage alone = new CatalogOutage(Duration.ofMillis(1_200));
    alone.pauseOrThrow(down);
    assertThat(alone.failures()).isEqualTo(1);
  }

  @Test
  void rethrowsWhatIsNoOutageAtOnce() {
    CatalogOutage outage = new CatalogOutage(Duration.ofMinutes(5));
    RuntimeException refused = new NotAuthorizedException("bad token");
    assertThatThrownBy(() -> outage.pauseOrThrow(refused)).isSameAs(refused);
  }
}
