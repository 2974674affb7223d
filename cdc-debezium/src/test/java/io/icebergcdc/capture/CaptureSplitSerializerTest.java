package io.icebergcdc.capture;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.icebergcdc.cdc.SourceSequence;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.util.StringUtils;
import org.junit.jupiter.api.Test;

class CaptureSplitSerializerTest {

  private static final Map<String, String> OFFSETS =
      Map.of(
          "[\"pg\",{\"server\":\"pg\"}]",
          "{\"lsn_proc\":67108864,\"lsn_commit\":67108000,\"lsn\":67108864,\"txId\":771}");
  private static final List<String> HISTORY =
      List.of("{\"ddl\":\"CREATE TABLE t (id INT PRIMARY KEY)\"}", "x".repeat(70_000));
  private static final DebeziumSplit SPLIT = new DebeziumSplit(OFFSETS, HISTORY, true);
  private static final SnapshotChunk CHUNK =
      new SnapshotChunk(
          "pg.inventory.order_lines", 3, List.of("7", "1"), List.of(), List.of("9", "2"));

  private final CaptureSplitSerializer serializer = CaptureSplitSerializer.INSTANCE;

  @Test
  void roundTripsTheLogsSplitWithLongHistoryRecordsAndChunks() throws IOException {
    for (CaptureSplit split : List.of(SPLIT, new DebeziumSplit(OFFSETS, List.of(), false), CHUNK)) {
      byte[] bytes = serializer.serialize(split);
      assertThat(serializer.deserialize(serializer.getVersion(), bytes)).isEqualTo(split);
    }
  }

  @Test
  void roundTripsTheEnumeratorState() throws IOException {
    CaptureSplitSerializer.StateSerializer state = new CaptureSplitSerializer.StateSerializer();
    CaptureEnumeratorState written =
        new CaptureEnumeratorState(
            true,
            List.of(new DebeziumSplit(OFFSETS, List.of(), false), CHUNK),
            List.of(
                new CaptureEnumeratorState.TableProgress("pg.a.b", 4, List.of("400"), false),
                new CaptureEnumeratorState.TableProgress("pg.a.c", 1, List.of(), true)));
    assertThat(state.deserialize(state.getVersion(), state.serialize(written))).isEqualTo(written);
  }

  /** A checkpoint of a build before chunked snapshots: its connector keeps snapshotting itself. */
  @Test
  void readsTheStateOfBuildsBeforeChunkedSnapshotsAsTheConnectorsSnapshot() throws IOException {
    DataOutputSerializer split = new DataOutputSerializer(64);
    writeVersion1(split);
    assertThat(serializer.deserialize(1, split.getCopyOfBuffer())).isEqualTo(SPLIT);

    DataOutputSerializer list = new DataOutputSerializer(64);
    list.writeInt(1);
    writeVersion1(list);
    CaptureEnumeratorState state =
        new CaptureSplitSerializer.StateSerializer().deserialize(1, list.getCopyOfBuffer());
    assertThat(state.chunked()).isFalse();
    assertThat(state.unassigned()).containsExactly(SPLIT);
    assertThat(state.tables()).isEmpty();
  }

  private static void writeVersion1(DataOutputSerializer out) throws IOException {
    out.writeInt(OFFSETS.size());
    for (Map.Entry<String, String> entry : OFFSETS.entrySet()) {
      StringUtils.writeString(entry.getKey(), out);
      StringUtils.writeString(entry.getValue(), out);
    }
    out.writeInt(HISTORY.size());
    for (String record : HISTORY) {
      StringUtils.writeString(record, out);
    }
  }

  @Test
  void refusesAnUnknownVersion() {
    assertThatThrownBy(() -> serializer.deserialize(3, new byte[0]))
        .isInstanceOf(IOException.class)
        .hasMessageContaining("unknown version 3");
  }

  @Test
  void readsPostgresPositionsFromRestoredOffsets() {
    assertThat(PostgresSlotCheck.restoredLsn("{\"lsn_commit\":5,\"lsn\":9}")).isEqualTo(5L);
    assertThat(PostgresSlotCheck.restoredLsn("{\"lsn_proc\":7,\"lsn\":9}")).isEqualTo(7L);
    assertThat(PostgresSlotCheck.restoredLsn("{\"lsn\":9}")).isEqualTo(9L);
    assertThat(PostgresSlotCheck.restoredLsn("{\"file\":\"mysql-bin.000001\"}")).isNull();
    assertThat(SourceSequence.parseLsn("0/3BE8F38")).isEqualTo(0x3BE8F38L);
    assertThat(SourceSequence.formatLsn(SourceSequence.parseLsn("1A/FF00"))).isEqualTo("1A/FF00");
  }

  @Test
  void startsAPostgresConnectorAtTheSlotsPositionWithTheEnginesOwnOffsetKey() {
    Map<String, String> start =
        StateOffsetBackingStore.postgresStart(Map.of("name", "pg", "topic.prefix", "pg"), 4096);
    assertThat(start).containsOnlyKeys("[\"pg\",{\"server\":\"pg\"}]");
    assertThat(PostgresSlotCheck.restoredLsn(start.values().iterator().next())).isEqualTo(4096L);
  }
}
