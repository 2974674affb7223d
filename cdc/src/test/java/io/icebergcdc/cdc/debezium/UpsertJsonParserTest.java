package io.icebergcdc.cdc.debezium;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.ChangeSchema;
import io.icebergcdc.cdc.MalformedChangeException;
import io.icebergcdc.cdc.Operation;
import io.icebergcdc.cdc.SourceSequence;
import java.util.List;
import java.util.Set;
import org.apache.iceberg.Schema;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;

class UpsertJsonParserTest {

  private static final ChangeSchema SCHEMA =
      new ChangeSchema(
          new Schema(
              List.of(
                  Types.NestedField.required(1, "id", Types.LongType.get()),
                  Types.NestedField.optional(2, "name", Types.StringType.get())),
              Set.of(1)));

  private final UpsertJsonParser parser = new UpsertJsonParser(SCHEMA, "db.t");

  @Test
  void aValueUpsertsItsKeyAtTheRecordsPosition() {
    List<ChangeEvent> events =
        parser.parse("{\"id\":7}", "{\"id\":7,\"name\":\"a\"}", 2, 41, "t/2@41");

    assertThat(events).hasSize(1);
    ChangeEvent event = events.get(0);
    assertThat(event.operation()).isEqualTo(Operation.UPDATE);
    assertThat(event.after().getString(1).toString()).isEqualTo("a");
    assertThat(event.sequence()).isEqualTo(SourceSequence.kafkaOffset(2, 41));
    assertThat(event.key()).isEqualTo(SCHEMA.keyOf(event.after()));
  }

  @Test
  void aNullValueDeletesTheKeyAlsoInDebeziumsKeyForm() {
    String key = "{\"schema\":{\"type\":\"struct\"},\"payload\":{\"id\":7}}";
    ChangeEvent event = parser.parse(key, null, 0, 3, "t/0@3").get(0);

    assertThat(event.operation()).isEqualTo(Operation.DELETE);
    assertThat(event.before().getLong(0)).isEqualTo(7L);
    assertThat(event.key())
        .isEqualTo(parser.parse("{\"id\":7}", "{\"id\":7}", 0, 4, "t/0@4").get(0).key());
  }

  @Test
  void refusesRecordsWithoutAKeyOrWithAnotherKeyInTheValue() {
    assertThatThrownBy(() -> parser.parse(null, "{\"id\":7}", 0, 1, "t/0@1"))
        .isInstanceOf(MalformedChangeException.class)
        .hasMessage("t/0@1: the record has no key");
    assertThatThrownBy(() -> parser.parse("{\"id\":7}", "{\"id\":8}", 0, 2, "t/0@2"))
        .isInstanceOf(MalformedChangeException.class)
        .hasMessage("t/0@2: the value's key (id=8) is not the record's key (id=7)");
    assertThatThrownBy(() -> parser.parse("{\"name\":\"x\"}", null, 0, 3, "t/0@3"))
        .isInstanceOf(MalformedChangeException.class)
        .hasMessageStartingWith("t/0@3: ")
        .hasMessageContaining("'id'");
    assertThatThrownBy(() -> parser.parse("{\"id\":7}", "not json", 0, 4, "t/0@4"))
        .isInstanceOf(MalformedChangeException.class)
        .hasMessageStartingWith("t/0@4: not valid JSON");
  }
}
