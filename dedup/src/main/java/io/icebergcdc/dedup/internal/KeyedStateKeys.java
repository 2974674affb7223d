package io.icebergcdc.dedup.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;
import java.util.stream.Stream;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;

/**
 * The keys of an operator that have a value in one of its keyed states, as Flink's keyed state
 * backend lists them: to count them, or to visit each as the operator's current key.
 */
final class KeyedStateKeys {

  private KeyedStateKeys() {}

  /** What is done with each visited key, set as the operator's current key. */
  @FunctionalInterface
  interface Visit {
    void run() throws Exception;
  }

  /**
   * Sets each key of the keyed state {@code state} that {@code which} accepts as the operator's
   * current key and runs {@code visit}. The keys are listed first: a visit that changes the state
   * must not do so under the backend's stream of its keys.
   */
  static void forEach(
      AbstractStreamOperator<?> operator, String state, Predicate<Object> which, Visit visit)
      throws Exception {
    List<Object> keys = new ArrayList<>();
    try (Stream<Object> stream = keys(operator, state)) {
      stream.filter(which).forEach(keys::add);
    }
    for (Object key : keys) {
      operator.setCurrentKey(key);
      visit.run();
    }
  }

  /** How many keys of the keyed state {@code state} {@code which} accepts. */
  static long count(AbstractStreamOperator<?> operator, String state, Predicate<Object> which) {
    try (Stream<Object> stream = keys(operator, state)) {
      return stream.filter(which).count();
    }
  }

  /**
   * Sets the first key of the keyed state {@code state} that {@code which} accepts as the
   * operator's current key; false where there is none.
   */
  static boolean setFirst(AbstractStreamOperator<?> operator, String state, Predicate<Object> which)
      throws Exception {
    try (Stream<Object> stream = keys(operator, state)) {
      Object first = stream.filter(which).findFirst().orElse(null);
      if (first == null) {
        return false;
      }
      operator.setCurrentKey(first);
      return true;
    }
  }

  private static Stream<Object> keys(AbstractStreamOperator<?> operator, String state) {
    return operator.getKeyedStateBackend().getKeys(state, VoidNamespace.INSTANCE);
  }
}
