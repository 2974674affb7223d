package io.icebergcdc.dedup.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.icebergcdc.cdc.GoldenFiles;
import io.icebergcdc.cdc.SourceSequence;
import io.icebergcdc.dedup.AppliedChange;
import java.io.IOException;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.junit.jupiter.api.Test;

class AppliedChangeSerializerTest {

  private static final AppliedChange VALUE =
      new AppliedChange(SourceSequence.postgresLsn(7, 0x16B3748L), 0x1234_5678_9ABC_DEF0L, true);

  private static byte[] write(AppliedChange value) throws IOException {
    DataOutputSerializer out = new DataOutputSerializer(32);
    AppliedChangeSerializer.INSTANCE.serialize(value, out);
    return out.getCopyOfBuffer();
  }

  private static AppliedChange read(byte[] bytes) throws IOException {
    return AppliedChangeSerializer.INSTANCE.deserialize(new DataInputDeserializer(bytes));
  }

  @Test
  void roundTrips() throws IOException {
    assertThat(read(write(VALUE))).isEqualTo(VALUE);
    AppliedChange live =
        new AppliedChange(SourceSequence.mysqlBinlog("bin.000001", 4, 0), -1L, false);
    assertThat(read(write(live))).isEqualTo(live);
  }

  @Test
  void roundTripsRowLocationsAndRowsLoadedFromTheTable() throws IOException {
    AppliedChange located =
        AppliedChange.live(SourceSequence.column(42), 7L, "data/00000-0-abc-00001.parquet", 99L);
    assertThat(read(write(located))).isEqualTo(located);
    assertThat(read(write(located)).file()).isEqualTo("data/00000-0-abc-00001.parquet");
    AppliedChange loaded = AppliedChange.loaded("s3://bucket/t/data/f.parquet", 3L);
    assertThat(read(write(loaded))).isEqualTo(loaded);
    assertThat(read(write(loaded)).sequence()).isNull();
  }

  @Test
  void readsValuesWrittenInEarlierFormatVersions() throws IOException {
    // Format version 1 has no location: the dedup's state before the key index joined it.
    byte[] v1 = GoldenFiles.bytes("serializer/applied-change-v1.bin", null);
    assertThat(read(v1)).isEqualTo(VALUE);
    AppliedChange located =
        AppliedChange.live(SourceSequence.column(42), 7L, "data/00000-0-abc-00001.parquet", 99L);
    byte[] v2 = GoldenFiles.bytes("serializer/applied-change-v2.bin", write(located));
    assertThat(read(v2)).isEqualTo(located);
  }

  @Test
  void rejectsAnUnknownFormatVersion() throws IOException {
    byte[] bytes = write(VALUE);
    bytes[0] = 9;
    assertThatThrownBy(() -> read(bytes))
        .isInstanceOf(IOException.class)
        .hasMessageContaining("format version 9");
  }

  @Test
  void snapshotRestoresTheSerializerAndRejectsUnknownVersions() throws IOException {
    TypeSerializerSnapshot<AppliedChange> snapshot =
        AppliedChangeSerializer.INSTANCE.snapshotConfiguration();
    assertThat(snapshot.restoreSerializer()).isSameAs(AppliedChangeSerializer.INSTANCE);
    assertThat(snapshot.resolveSchemaCompatibility(snapshot).isCompatibleAsIs()).isTrue();
    assertThatThrownBy(
            () ->
                snapshot.readSnapshot(
                    2, new DataInputDeserializer(new byte[0]), getClass().getClassLoader()))
        .isInstanceOf(IOException.class);
  }
}
