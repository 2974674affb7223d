package io.icebergcdc.sink.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.icebergcdc.cdc.RowKey;
import java.io.IOException;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.junit.jupiter.api.Test;

class KeySerializersTest {

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
