package io.icebergcdc.capture;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.icebergcdc.cdc.SourceSequence;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class DebeziumSplitSerializerTest {

  private static final DebeziumSplit SPLIT =
      new DebeziumSplit(
          Map.of(
              "[\"pg\",{\"server\":\"pg\"}]",
              "{\"lsn_proc\":67108864,\"lsn_commit\":67108000,\"lsn\":67108864,\"txId\":771}"),
          List.of("{\"ddl\":\"CREATE TABLE t (id INT PRIMARY KEY)\"}", "x".repeat(70_000)));

  @Test
  void roundTripsASplitWithLongHistoryRecords() throws IOException {
    DebeziumSplitSerializer serializer = DebeziumSplitSerializer.INSTANCE;
    byte[] bytes = serializer.serialize(SPLIT);
    assertThat(serializer.deserialize(serializer.getVersion(), bytes)).isEqualTo(SPLIT);
  }

  @Test
  void roundTripsTheEnumeratorState() throws IOException {
    DebeziumSplitSerializer.ListSerializer serializer =
        new DebeziumSplitSerializer.ListSerializer();
    List<DebeziumSplit> state = List.of(SPLIT, DebeziumSplit.initial());
    assertThat(serializer.deserialize(1, serializer.serialize(state))).isEqualTo(state);
  }

  @Test
  void refusesAnUnknownVersion() {
    assertThatThrownBy(() -> DebeziumSplitSerializer.INSTANCE.deserialize(2, new byte[0]))
        .isInstanceOf(IOException.class)
        .hasMessageContaining("unknown version 2");
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
}
