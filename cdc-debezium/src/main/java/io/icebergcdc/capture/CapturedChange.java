package io.icebergcdc.capture;

import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.DeadLetter;
import java.util.Objects;

/**
 * One record of a {@link DebeziumSource}: the change event of one captured table, named by its
 * index among the source's routes ({@link CaptureRoutes}), or a record that could not be applied,
 * set aside as a dead letter.
 */
public final class CapturedChange {

  /** The route of a dead letter. */
  static final int DEAD_LETTER = -1;

  /**
   * The route of a change of a table that appeared while the job runs ({@link AppearingTables}):
   * the event names the table as the main output carries it, and its rows describe themselves.
   */
  static final int APPEARED = -2;

  private final int route;
  private final ChangeEvent event;
  private final DeadLetter deadLetter;

  private CapturedChange(int route, ChangeEvent event, DeadLetter deadLetter) {
    this.route = route;
    this.event = event;
    this.deadLetter = deadLetter;
  }

  static CapturedChange of(int route, ChangeEvent event) {
    if (route < 0) {
      throw new IllegalArgumentException("no route " + route);
    }
    return new CapturedChange(route, Objects.requireNonNull(event, "event"), null);
  }

  static CapturedChange appeared(ChangeEvent event) {
    if (event.rowSchemaId() == ChangeEvent.JOB_SCHEMA) {
      throw new IllegalArgumentException(
          "a change of a table that appeared has rows in the job's schema: " + event);
    }
    return new CapturedChange(APPEARED, event, null);
  }

  static CapturedChange deadLetter(DeadLetter deadLetter) {
    return new CapturedChange(DEAD_LETTER, null, Objects.requireNonNull(deadLetter, "deadLetter"));
  }

  /**
   * The index of the event's table among the routes; {@link #DEAD_LETTER} for a dead letter, {@link
   * #APPEARED} for a table that appeared.
   */
  public int route() {
    return route;
  }

  /** The change; null for a dead letter. */
  public ChangeEvent event() {
    return event;
  }

  /** The record set aside; null for a change. */
  public DeadLetter deadLetter() {
    return deadLetter;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof CapturedChange that
        && route == that.route
        && Objects.equals(event, that.event)
        && Objects.equals(deadLetter, that.deadLetter);
  }

  @Override
  public int hashCode() {
    return Objects.hash(route, event);
  }

  @Override
  public String toString() {
    return route == DEAD_LETTER
        ? "dead letter " + deadLetter
        : (route == APPEARED ? "appeared" : Integer.toString(route)) + ": " + event;
  }
}
