package io.icebergcdc.dedup.internal;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Distinct names numbered from 0 in the order they came: the file names and sequence prefixes that
 * a {@link KeyIndex}'s slots hold as numbers.
 */
final class NameTable {

  private final List<String> names = new ArrayList<>();
  private final Map<String, Integer> numbers = new HashMap<>();

  /** The number of {@code name}, added if new. */
  int numberOf(String name) {
    Integer number = numbers.get(name);
    if (number == null) {
      number = names.size();
      names.add(name);
      numbers.put(name, number);
    }
    return number;
  }

  String name(int number) {
    return names.get(number);
  }

  int size() {
    return names.size();
  }

  /** Keeps only {@code kept}, numbered in their order from 0. */
  void keepOnly(List<String> kept) {
    names.clear();
    numbers.clear();
    kept.forEach(this::numberOf);
  }
}
