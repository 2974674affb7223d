package io.icebergcdc.sink.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.icebergcdc.cdc.GoldenFiles;
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

  @Test
  void theWritersOperatorStateReadsFormatVersion1() throws IOException {
    OwnDataFile own = new OwnDataFile("#1z", 500_000, 12_345, 42, 1, 2);
    DataOutputSerializer out = new DataOutputSerializer(64);
    OwnDataFile.Serializer.INSTANCE.serialize(own, out);
    byte[] v1 = GoldenFiles.bytes("serializer/own-data-file-v1.bin", out.getCopyOfBuffer());
    assertThat(OwnDataFile.Serializer.INSTANCE.deserialize(new DataInputDeserializer(v1)))
        .isEqualTo(own);

    FileDictionary.Entry entry =
        new FileDictionary.Entry(71, "s3://bucket/db/t/data/00000-0-abc-00001.parquet");
    out.clear();
    FileDictionary.EntrySerializer.INSTANCE.serialize(entry, out);
    byte[] entryV1 =
        GoldenFiles.bytes("serializer/file-dictionary-entry-v1.bin", out.getCopyOfBuffer());
    assertThat(
            FileDictionary.EntrySerializer.INSTANCE.deserialize(new DataInputDeserializer(entryV1)))
        .isEqualTo(entry);
  }
}
