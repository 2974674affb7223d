package io.icebergcdc.jobs.demo;

import java.math.BigDecimal;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.Arrays;
import java.util.List;

/**
 * A row of the demo table {@code (id bigint primary key, name string, qty int, price decimal(10,2),
 * updated_at timestamp)}.
 */
record DemoRow(long id, String name, int qty, long priceCents, long updatedAtMicros) {

  static final List<String> COLUMNS = List.of("id", "name", "qty", "price", "updated_at");

  DemoRow withId(long newId) {
    return new DemoRow(newId, name, qty, priceCents, updatedAtMicros);
  }

  /** The values as Iceberg's generic reader returns them, in column order. */
  List<Object> asIcebergValues() {
    LocalDateTime ts =
        LocalDateTime.ofEpochSecond(
            Math.floorDiv(updatedAtMicros, 1_000_000L),
            (int) Math.floorMod(updatedAtMicros, 1_000_000L) * 1000,
            ZoneOffset.UTC);
    return Arrays.asList(id, name, qty, BigDecimal.valueOf(priceCents, 2), ts);
  }
}
