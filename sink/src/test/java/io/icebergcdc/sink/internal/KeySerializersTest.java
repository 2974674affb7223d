package io.icebergcdc.sink.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.icebergcdc.cdc.GoldenFiles;
import io.icebergcdc.cdc.RowKey;
import java.io.IOException;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.junit.jupiter.api.Test;

class KeySerializersTest {

  private static final RowLocation LOCATION =
      new RowLocation("s3://bucket/db/t/data/00000-0-abc-00001.parquet", 123_456L);

  @Test
  void rowLocationsRoundTripAndReadFormatVersion1() throws IOException {
    DataOutputSerializer out = new DataOutputSerializer(64);
    RowLocationSerializer.INSTANCE.serialize(LOCATION, out);
    byte[] bytes = out.getCopyOfBuffer();
    assertThat(RowLocationSerializer.INSTANCE.deserialize(new DataInputDeserializer(bytes)))
        .isEqualTo(LOCATION);

    byte[] v1 = GoldenFiles.bytes("serializer/row-location-v1.bin", bytes);
    assertThat(RowLocationSerializer.INSTANCE.deserialize(new DataInputDeserializer(v1)))
        .isEqualTo(LOCATION);

    bytes[0] = 5;
    assertThatThrownBy(
            () -> RowLocationSerializer.INSTANCE.deserialize(new DataInputDeserializer(bytes)))
        .isInstanceOf(IOException.class)
        .hasMessageContaining("format version 5");
  }

  @Test
  void partitionedKeysKeepTheirPartitionHashThroughSerialization() throws IOException {
    PartitionedKey key = new PartitionedKey(42, new RowKey(new byte[] {1, 2, 3}));
    DataOutputSerializer out = new DataOutputSerializer(16);
    PartitionedKeySerializer.INSTANCE.serialize(key, out);
    PartitionedKey read =
        PartitionedKeySerializer.INSTANCE.deserialize(
            new DataInputDeserializer(out.getCopyOfBuffer()));
    assertThat(read).isEqualTo(key);
    assertThat(read.hashCode()).isEqualTo(42);
  }
}
