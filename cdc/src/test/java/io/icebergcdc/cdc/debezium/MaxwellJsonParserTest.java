package io.icebergcdc.cdc.debezium;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.ChangeSchema;
import io.icebergcdc.cdc.MalformedChangeException;
import io.icebergcdc.cdc.Operation;
import io.icebergcdc.cdc.SourceSequence;
import java.math.BigDecimal;
import java.time.Instant;
import java.time.LocalDateTime;
import java.util.List;
import java.util.Set;
import org.apache.iceberg.Schema;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;

class MaxwellJsonParserTest {

  private static final ChangeSchema SCHEMA =
      new ChangeSchema(
          new Schema(
              List.of(
                  Types.NestedField.required(1, "id", Types.LongType.get()),
                  Types.NestedField.optional(2, "name", Types.StringType.get()),
                  Types.NestedField.optional(3, "price", Types.DecimalType.of(10, 2)),
                  Types.NestedField.optional(4, "made", Types.TimestampType.withoutZone()),
                  Types.NestedField.optional(5, "seen", Types.TimestampType.withZone())),
              Set.of(1)));

  private final MaxwellJsonParser parser = new MaxwellJsonParser(SCHEMA, "shop.items", null);

  private static String record(String type, String data, String old, String position) {
    return "{\"database\":\"shop\",\"table\":\"items\",\"type\":\""
        + type
        + "\",\"ts\":1700000000,\"xid\":9,\"xoffset\":2"
        + (position == null ? "" : ",\"position\":\"" + position + "\"")
        + ",\"data\":"
        + data
        + (old == null ? "" : ",\"old\":" + old)
        + "}";
  }

  @Test
  void readsAnInsertWithItsBinlogPositionAndMaxwellsValues() {
    String data =
        "{\"id\":1,\"name\":\"a\",\"price\":12.5,\"made\":\"2024-01-02 03:04:05\","
            + "\"seen\":\"2024-01-02 03:04:05.123456\"}";
    ChangeEvent event =
        parser.parse(record("insert", data, null, "mysql-bin.000003:4015"), "p/0@1").get(0);

    assertThat(event.operation()).isEqualTo(Operation.INSERT);
    assertThat(event.table()).isEqualTo("shop.items");
    assertThat(event.sequence()).isEqualTo(SourceSequence.mysqlBinlog("mysql-bin.000003", 4015, 2));
    assertThat(event.sourceTimestampMillis()).isEqualTo(1_700_000_000_000L);
    assertThat(event.after().getDecimal(2, 10, 2).toBigDecimal())
        .isEqualTo(new BigDecimal("12.50"));
    assertThat(event.after().getTimestamp(3, 6).toLocalDateTime())
        .isEqualTo(LocalDateTime.of(2024, 1, 2, 3, 4, 5));
    assertThat(event.after().getTimestamp(4, 6).toInstant())
        .isEqualTo(Instant.parse("2024-01-02T03:04:05.123456Z"));
  }

  @Test
  void anUpdateOfTheKeyIsADeleteAndAnInsert() {
    List<ChangeEvent> events =
        parser.parse(
            record("update", "{\"id\":2,\"name\":\"a\"}", "{\"id\":1}", "bin.000001:10"), "r");

    assertThat(events)
        .extracting(ChangeEvent::operation)
        .containsExactly(Operation.DELETE, Operation.INSERT);
    assertThat(events.get(0).before().getLong(0)).isEqualTo(1L);
    assertThat(events.get(0).before().getString(1).toString()).isEqualTo("a");
    assertThat(events.get(1).after().getLong(0)).isEqualTo(2L);

    List<ChangeEvent> update =
        parser.parse(
            record("update", "{\"id\":2,\"name\":\"b\"}", "{\"name\":\"a\"}", "bin.000001:11"),
            "r");
    assertThat(update).extracting(ChangeEvent::operation).containsExactly(Operation.UPDATE);
    assertThat(update.get(0).before().getString(1).toString()).isEqualTo("a");
  }

  @Test
  void aDeleteCarriesTheDeletedRowAndBootstrapMarkersNothing() {
    ChangeEvent delete =
        parser.parse(record("delete", "{\"id\":3,\"name\":\"x\"}", null, "b.1:5"), "r").get(0);
    assertThat(delete.operation()).isEqualTo(Operation.DELETE);
    assertThat(delete.before().getLong(0)).isEqualTo(3L);
    assertThat(parser.parse(record("bootstrap-start", "{}", null, null), "r")).isEmpty();
  }

  @Test
  void refusesRecordsItCannotOrder() {
    assertThatThrownBy(() -> parser.parse(record("insert", "{\"id\":1}", null, null), "t/0@7"))
        .isInstanceOf(MalformedChangeException.class)
        .hasMessageStartingWith("t/0@7: the record has no binlog 'position'");
    assertThatThrownBy(() -> parser.parse(record("table-alter", "{}", null, "b.1:1"), "t/0@8"))
        .isInstanceOf(MalformedChangeException.class)
        .hasMessage("t/0@8: unknown Maxwell record type 'table-alter'");
    assertThatThrownBy(
            () -> parser.parse(record("insert", "{\"name\":\"x\"}", null, "b.1:1"), "t/0@9"))
        .isInstanceOf(MalformedChangeException.class)
        .hasMessageContaining("'id'");
  }
}
