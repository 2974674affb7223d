package io.icebergcdc.dedup.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.icebergcdc.cdc.ChangeEvent;
import io.icebergcdc.cdc.ChangeSchema;
import io.icebergcdc.cdc.ColumnMask;
import io.icebergcdc.cdc.GoldenFiles;
import io.icebergcdc.cdc.TestChanges;
import io.icebergcdc.cdc.typeutils.ChangeEventTypeInfo;
import java.io.IOException;
import java.util.List;
import org.apache.flink.api.common.serialization.SerializerConfigImpl;
import org.apache.flink.api.common.state.ValueState;
import org.apache.iceberg.Schema;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;

/** The keyed state of changes that wait for their key's row: round trip, stored bytes, refusals. */
class AwaitingRowsTest {

  /** One key's value state. */
  private static final class Slot implements ValueState<byte[]> {
    byte[] value;

    @Override
    public byte[] value() {
      return value;
    }

    @Override
    public void update(byte[] value) {
      this.value = value;
    }

    @Override
    public void clear() {
      value = null;
    }
  }

  private static AwaitingRows rows(Slot slot, long restored, ChangeSchema schema) {
    return new AwaitingRows(
        slot,
        restored,
        schema,
        ChangeEventTypeInfo.of(schema).createSerializer(new SerializerConfigImpl()));
  }

  private static ChangeEvent change() {
    return TestChanges.updateWithoutName(4, 13).withOrigin("topic/1", 77);
  }

  @Test
  void aHeldChangeIsTakenOnceAsItWasHeld() throws IOException {
    Slot slot = new Slot();
    AwaitingRows rows = rows(slot, 0, TestChanges.CHANGE_SCHEMA);
    assertThat(rows.take()).isNull();
    rows.hold(change());
    assertThat(rows.count()).isEqualTo(1);
    ChangeEvent taken = rows.take();
    assertThat(taken.key()).isEqualTo(change().key());
    assertThat(taken.sequence()).isEqualTo(change().sequence());
    assertThat(taken.missingColumns()).isEqualTo(ColumnMask.EMPTY.with(1));
    assertThat(taken.originOffset()).isEqualTo(77);
    assertThat(rows.count()).isZero();
    assertThat(slot.value).isNull();
  }

  @Test
  void bytesOfTheFirstFormatStillRead() throws IOException {
    Slot slot = new Slot();
    rows(slot, 0, TestChanges.CHANGE_SCHEMA).hold(change());
    byte[] v1 = GoldenFiles.bytes("serializer/awaiting-row-v1.bin", slot.value);
    assertThat(slot.value).isEqualTo(v1);
    Slot stored = new Slot();
    stored.value = v1;
    ChangeEvent read = rows(stored, 1, TestChanges.CHANGE_SCHEMA).take();
    assertThat(TestChanges.CHANGE_SCHEMA.fingerprint(read))
        .isEqualTo(TestChanges.CHANGE_SCHEMA.fingerprint(change()));
  }

  @Test
  void anUnknownFormatOrAnotherRowTypeIsRefused() throws IOException {
    Slot slot = new Slot();
    rows(slot, 0, TestChanges.CHANGE_SCHEMA).hold(change());
    byte[] held = slot.value.clone();

    slot.value[0] = 9;
    assertThatThrownBy(() -> rows(slot, 1, TestChanges.CHANGE_SCHEMA).take())
        .isInstanceOf(IOException.class)
        .hasMessageContaining("unknown format 9");

    slot.value = held;
    ChangeSchema wider =
        new ChangeSchema(
            new Schema(
                List.of(
                    Types.NestedField.required(1, "id", Types.LongType.get()),
                    Types.NestedField.optional(2, "name", Types.StringType.get()),
                    Types.NestedField.optional(3, "added", Types.IntegerType.get())),
                java.util.Set.of(1)));
    assertThatThrownBy(() -> rows(slot, 1, wider).take())
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("another schema of the table");
  }
}
